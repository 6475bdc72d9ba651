# FIXED: pool_task_exits.py with the one change its finding's FIX names (diff the two); what follows
# describes pool_task_exits.py, the failing program.
# Source: CPython gh-66587 (bpo-22393) "multiprocessing.Pool shouldn't hang forever if a worker
#   process dies unexpectedly": https://github.com/python/cpython/issues/66587
#   (fix attempts https://github.com/python/cpython/pull/10441, https://github.com/python/cpython/pull/16103,
#   both closed unmerged; also https://github.com/python/cpython/pull/101081 "raising a BaseException
#   in a multiprocessing worker pool causes process hang"; user report with exit(1) in a task:
#   https://github.com/DaehwanKimLab/hisat-genotype/issues/56)
# Shape: a Pool task calls sys.exit(); SystemExit is not an Exception, so the worker process exits
# without sending a result; the pool starts a replacement worker but the task is lost.
# Run: hangs forever in pool.map() (the other tasks finish, the parent waits for the lost one).
import sys
from multiprocessing import Pool


def work(x):
    if x == 3:
        raise ValueError("bad input %d" % x)
    return x * x


if __name__ == "__main__":
    with Pool(2) as pool:
        try:
            print(pool.map(work, range(5)))
        except ValueError as e:
            print("task failed:", e)
