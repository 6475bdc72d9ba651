# FIXED: queue_put_unpicklable.py with the one change its finding's FIX names (diff the two); what follows
# describes queue_put_unpicklable.py, the failing program.
# Source: CPython gh-84376 (bpo-40195) "multiprocessing.Queue.put can fail silently due to pickle
#   errors": https://github.com/python/cpython/issues/84376
#   (also https://github.com/python/cpython/issues/109554 and https://github.com/python/cpython/issues/79423:
#   the object is pickled later, in the queue's feeder thread, so put() itself never raises)
# Shape: a worker process put()s a lambda on its reply queue; the feeder thread fails to pickle it,
# prints the error to stderr and drops the item; the worker goes back to waiting for requests, and
# the parent waits in get() for a reply that never comes.
# Run: the child's feeder thread prints a traceback ending "AttributeError: Can't pickle local object
# 'worker.<locals>.<lambda>'" (3.13: "Can't get local object ..."), then both processes hang forever,
# each in get() on an empty queue.
from multiprocessing import Process, Queue


def square(x):
    return x * x


def worker(requests, replies):
    for name in iter(requests.get, None):
        replies.put(square)


if __name__ == "__main__":
    requests, replies = Queue(), Queue()
    p = Process(target=worker, args=(requests, replies))
    p.start()
    requests.put("square")
    f = replies.get()
    requests.put(None)
    p.join()
    print(f(7))
