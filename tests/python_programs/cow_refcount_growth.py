# Forked workers that only read the parent's Python objects, and still copy them: reading an
# object writes its reference count, so each page of the parent's list a worker walks becomes
# private to it (pytorch/pytorch#13246, "DataLoader with lists of Python objects: memory grows
# in every worker"; https://github.com/pytorch/pytorch/issues/13246). Under exec, forkcheck says
# live that the workers' private memory grew, and the finding repeats it.
import multiprocessing as mp
import time

ROWS = [(i, float(i)) for i in range(3_000_000)]  # about 300 MiB of small objects


def read_rows(_):
    time.sleep(3)  # first seen sharing the parent's pages (sampled every 0.5 s)
    total = 0
    for row in ROWS:  # <read>  only reads, yet each tuple's reference count is written
        total += row[0]
    time.sleep(2)  # seen again, the pages now its own
    return total


if __name__ == "__main__":
    ctx = mp.get_context("fork")
    with ctx.Pool(2) as pool:
        print(pool.map(read_rows, range(2)))
