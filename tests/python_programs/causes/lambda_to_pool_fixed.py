# FIXED: lambda_to_pool.py with the one change its finding's FIX names (diff the two); what follows
# describes lambda_to_pool.py, the failing program.
# Source: Python docs, multiprocessing, "Programming guidelines" (picklability) and "Using a pool
#   of workers": the function given to a Pool is pickled to reach its workers, and a lambda cannot
#   be: https://docs.python.org/3/library/multiprocessing.html#all-start-methods
#   (and https://github.com/python/cpython/issues/84376 on pickling errors in multiprocessing)
# Shape: Pool.map() is given a lambda; pickling the task fails in the parent's task handler and
# map() raises it: "_pickle.PicklingError: Can't pickle <function <lambda> ...>: attribute lookup
# <lambda> on __main__ failed".
# Run: exits 1 with that error, under every start method.
from multiprocessing import Pool


def square(x):
    return x * x


if __name__ == "__main__":
    with Pool(2) as pool:
        print(pool.map(square, range(4)))
