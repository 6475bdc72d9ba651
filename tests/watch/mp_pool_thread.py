"""forkcheck watch's plain-Python subject (no torch): a thread is running, then a
multiprocessing.Pool of two workers starts with the start method named on the command line.
  fork   each worker is forked while the other thread runs: two hazardous forks (threads)
  spawn  each worker is a fresh interpreter: nothing hazardous
Usage: python3 mp_pool_thread.py fork|spawn"""
import multiprocessing as mp
import sys
import threading
import time


def square(x):
    return x * x


def heartbeat(stop):
    while not stop.wait(0.05):
        time.sleep(0)


if __name__ == "__main__":
    stop = threading.Event()
    beat = threading.Thread(target=heartbeat, args=(stop,), name="heartbeat")
    beat.start()
    with mp.get_context(sys.argv[1]).Pool(2) as pool:
        print("squares:", pool.map(square, range(6)), flush=True)
    stop.set()
    beat.join()
