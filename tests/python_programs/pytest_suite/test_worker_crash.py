# A pytest test that passes while the worker it starts dies of SIGSEGV: it joins the worker and
# never looks at how it ended. Under forkcheck exec the run fails, and the worker's end names
# the test it happened in: test_worker_crash.py::test_worker_crash (call).
import ctypes
import multiprocessing as mp


def crash():
    ctypes.string_at(0)  # <crash>


def test_worker_crash():
    p = mp.get_context("fork").Process(target=crash)
    p.start()
    p.join()
