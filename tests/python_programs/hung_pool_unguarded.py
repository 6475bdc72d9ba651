# hung_pool.py written as a script, with no `if __name__ == "__main__":` guard: the same partial
# deadlock (a Pool worker forked while another thread held a lock), and a program that spawn or
# forkserver would refuse (each worker runs the main script again), so the advice must say to add
# the guard first.
import multiprocessing as mp
import threading
import time

lock = threading.Lock()


def hold():
    with lock:
        time.sleep(600)


def work(x):
    with lock:  # <blocked>
        return x


threading.Thread(target=hold, daemon=True, name="holder").start()
while not lock.locked():
    time.sleep(0.01)
with mp.get_context("fork").Pool(1) as pool:  # <pool>
    print(pool.map(work, [1]))
