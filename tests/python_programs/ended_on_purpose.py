# Workers the program itself ends: a Pool's exit terminates its workers (SIGTERM), and a worker
# told to terminate() or kill() is ended as asked. None of them failed.
import multiprocessing as mp
import time

if __name__ == "__main__":
    context = mp.get_context("spawn")
    with context.Pool(2) as pool:
        print(pool.map(abs, [-1, -2]))
    for end in ("terminate", "kill"):
        worker = context.Process(target=time.sleep, args=(600,))
        worker.start()
        getattr(worker, end if hasattr(worker, end) else "terminate")()  # kill(): 3.7 and later
        worker.join()
        print(end, worker.exitcode)
