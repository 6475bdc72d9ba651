# A unittest suite whose second test stalls, joining a worker before taking what it put on its
# queue (https://docs.python.org/3/library/multiprocessing.html#programming-guidelines, "Joining
# processes that use queues"). Under forkcheck exec the hang is named by unittest's test id:
# __main__.QueueTests.test_join_before_drain.
import multiprocessing as mp
import unittest


def produce(q):
    q.put("x" * 1000000)  # more than a pipe holds: the feeder thread waits for a reader


class QueueTests(unittest.TestCase):
    def test_drain_then_join(self):
        q = mp.Queue()
        p = mp.Process(target=produce, args=(q,))
        p.start()
        self.assertEqual(len(q.get()), 1000000)
        p.join()

    def test_join_before_drain(self):
        q = mp.Queue()
        p = mp.Process(target=produce, args=(q,))
        p.start()
        p.join()  # <join>
        self.assertEqual(len(q.get()), 1000000)


if __name__ == "__main__":
    unittest.main()
