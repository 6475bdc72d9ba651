# A pytest suite whose second test stalls: it joins a worker before taking what the worker put on
# its queue, the deadlock the Python docs warn of ("Joining processes that use queues":
# https://docs.python.org/3/library/multiprocessing.html#programming-guidelines). Under
# forkcheck exec, the stall and the hang are named by pytest's test: test_queue_stall.py::
# test_join_before_drain (call).
import multiprocessing as mp


def produce(q):
    q.put("x" * 1_000_000)  # more than a pipe holds: the feeder thread waits for a reader


def test_quick():
    assert sum(range(10)) == 45


def test_join_before_drain():
    q = mp.get_context("fork").Queue()
    p = mp.get_context("fork").Process(target=produce, args=(q,))
    p.start()
    p.join()  # <join>
    assert len(q.get()) == 1_000_000
