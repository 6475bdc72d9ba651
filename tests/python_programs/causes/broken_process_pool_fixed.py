# FIXED: broken_process_pool.py with the one change its finding's FIX names (diff the two); what follows
# describes broken_process_pool.py, the failing program.
# Source: Python docs, concurrent.futures, exception BrokenProcessPool ("raised when one of the
#   workers of a ProcessPoolExecutor has terminated in a non-clean fashion (for example, if it was
#   killed from the outside)"):
#   https://docs.python.org/3/library/concurrent.futures.html#concurrent.futures.process.BrokenProcessPool
#   (no PID or exit code in the message before 3.15: https://github.com/python/cpython/issues/139462)
# Shape: a task ends its worker process with os._exit(1) (as a C library calling exit() would);
# the executor marks the whole pool broken and fails every pending future.
# Run: exits 1 with a traceback ending "concurrent.futures.process.BrokenProcessPool: A process in
# the process pool was terminated abruptly while the future was running or pending."
import os
from concurrent.futures import ProcessPoolExecutor


def work(x):
    if x == 3:
        raise ValueError("bad input %d" % x)
    return x * x


if __name__ == "__main__":
    with ProcessPoolExecutor(2) as ex:
        try:
            print(list(ex.map(work, range(5))))
        except ValueError as e:
            print("task failed:", e)
