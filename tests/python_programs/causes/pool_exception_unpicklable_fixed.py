# FIXED: pool_exception_unpicklable.py with the one change its finding's FIX names (diff the two); what follows
# describes pool_exception_unpicklable.py, the failing program.
# Source: CPython gh-103061 "multiprocessing.Pool hangs on certain custom Exceptions":
#   https://github.com/python/cpython/issues/103061 (and gh-79492 / bpo-35311 "exception unpickling
#   error causes `multiprocessing.Pool` to hang forever": https://github.com/python/cpython/issues/79492)
# Shape: a task raises a custom exception whose __init__ takes other arguments than the ones it
# passes to Exception.__init__; it pickles fine in the worker but cannot be rebuilt in the parent,
# so the pool's result-handler thread dies with a TypeError and map() never gets its result.
# Run: prints "Exception in thread Thread-3 (_handle_results)" (3.6: "Exception in thread Thread-3:")
# with a traceback ending "TypeError: __init__() missing 1 required positional argument: 'code'"
# (3.11/3.13: "MyError.__init__() missing ..."), then hangs forever in pool.map().
from multiprocessing import Pool


class MyError(Exception):
    def __init__(self, path, code):
        super().__init__(path, code)


def work(path):
    raise MyError(path, 2)


if __name__ == "__main__":
    with Pool(2) as pool:
        try:
            print(pool.map(work, ["a.txt"]))
        except MyError as e:
            print("task failed:", e)
