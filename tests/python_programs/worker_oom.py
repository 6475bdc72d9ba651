# A worker that grows until the kernel's OOM killer ends it, as a DataLoader worker does whose
# dataset copies the parent's objects (pytorch/pytorch#13246: "DataLoader worker (pid N) is
# killed by signal: Killed"), run in a memory cgroup smaller than it grows. The parent joins it
# and exits 0: under exec the run fails, the worker's end told as the OOM killer's, with its last
# sampled size.
import multiprocessing as mp
import time


def grow():
    chunks = []
    while True:
        chunks.append(bytearray(8 * 1024 * 1024))  # written: resident and private
        time.sleep(0.1)  # <grow>: sampled on the way


if __name__ == "__main__":
    worker = mp.Process(target=grow, name="grower")
    worker.start()
    worker.join()
    print("worker joined")
