# Near miss of broken-process-pool: an unrelated helper process exits 2 before the executor
# worker is killed by SIGKILL: the cause must name the executor worker, and give no FIX.
import multiprocessing as mp, os, sys, signal, time
from concurrent.futures import ProcessPoolExecutor
def helper():
    sys.exit(2)                     # an unrelated helper process fails
def task(x):
    if x == 1:
        os.kill(os.getpid(), signal.SIGKILL)   # the pool worker is killed
    return x
if __name__ == "__main__":
    mp.set_start_method("fork")
    h = mp.Process(target=helper); h.start(); h.join()
    with ProcessPoolExecutor(2) as ex:
        print(list(ex.map(task, [0, 1, 2])))
