# FIXED: pool_result_after_with.py with the one change its finding's FIX names (diff the two); what follows
# describes pool_result_after_with.py, the failing program.
# Source: CPython gh-126743 "multiprocessing async .get() hangs if the pool is terminated":
#   https://github.com/python/cpython/issues/126743 (the same as gh-79659 / bpo-35478,
#   https://github.com/python/cpython/issues/79659); leaving a "with Pool()" block calls terminate(),
#   not close()+join(): https://github.com/python/cpython/issues/74140
# Shape: an apply_async() result is read after the "with Pool()" block; __exit__ terminated the
# workers while the task was still running, so the result is never set and get() has nothing left
# that could ever set it.
# Run: hangs forever in result.get(), in a single process (the pool's workers and threads are gone).
import time
from multiprocessing import Pool


def slow_square(x):
    time.sleep(0.5)
    return x * x


if __name__ == "__main__":
    with Pool(2) as pool:
        result = pool.apply_async(slow_square, (7,))
        print(result.get())
