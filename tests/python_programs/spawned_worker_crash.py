# A spawned worker dies of SIGSEGV; the parent carries on and exits 0, never looking at how its
# worker ended (a bare join() is no look at it).
import ctypes
import multiprocessing as mp


def crash():
    ctypes.string_at(0)  # <crash>


if __name__ == "__main__":
    worker = mp.get_context("spawn").Process(target=crash, name="crasher")
    worker.start()
    worker.join()
    print("worker joined")
