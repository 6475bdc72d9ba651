# FIXED: executor_at_import.py with the one change its finding's FIX names (diff the two); what follows
# describes executor_at_import.py, the failing program.
# Source: CPython gh-155890 "ProcessPoolExecutor deadlocks against the import lock when the submitted
#   callable is defined in the module being imported": https://github.com/python/cpython/issues/155890
#   (older docs note, bpo-7707: multiprocessing must not be used as a side effect of importing a module:
#   https://www.python.org/pipermail/python-checkins/2010-November/099427.html)
# Shape: importing executor_at_import_mod runs a ProcessPoolExecutor job at import time on a function
# of that same module; the executor's queue feeder thread pickles square by reference, which imports
# executor_at_import_mod again and waits for its module lock, held by the main thread that is still
# executing the module body and waits for the result. The deadlock is inside the parent; the worker
# never receives the job. Same with fork, spawn and forkserver.
# Run: hangs forever, printing nothing (parent main thread in future.result(), its feeder thread on
# the module's import lock; the worker idle in read() on the call queue).
import executor_at_import_fixed_mod

if __name__ == "__main__":
    print(executor_at_import_fixed_mod.run())
