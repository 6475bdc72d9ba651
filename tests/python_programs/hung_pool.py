# A Pool worker forked while another thread held a lock: the worker's copy stays locked forever
# (a partial deadlock: the parent's threads go on).
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


if __name__ == "__main__":
    threading.Thread(target=hold, daemon=True, name="holder").start()
    while not lock.locked():
        time.sleep(0.01)
    with mp.get_context("fork").Pool(1) as pool:
        print(pool.map(work, [1]))
