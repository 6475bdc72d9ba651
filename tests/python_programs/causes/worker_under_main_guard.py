# Source: Python docs, multiprocessing programming guidelines: under spawn the worker imports the
#   main module as __mp_main__ without running its `if __name__ == "__main__":` block, so a
#   function defined there cannot be found ("functionality within this package requires that the
#   __main__ module be importable by the children"):
#   https://docs.python.org/3/library/multiprocessing.html#using-a-pool-of-workers
# Shape: the worker function is defined inside the main guard; under spawn the worker fails with
# "AttributeError: Can't get attribute 'square' on <module '__mp_main__' ...>".
# Run: the parent waits for results that never come (Pool) or exits with the worker's error.
import multiprocessing as mp

if __name__ == "__main__":

    def square(x):
        return x * x

    ctx = mp.get_context("spawn")
    p = ctx.Process(target=square, args=(3,))
    p.start()
    p.join()
    raise SystemExit(p.exitcode)
