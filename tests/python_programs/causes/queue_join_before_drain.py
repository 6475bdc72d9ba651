# Source: Python docs, multiprocessing "Programming guidelines" -> "Joining processes that use queues"
#   https://docs.python.org/3/library/multiprocessing.html#all-start-methods
#   (the docs' own example, "this deadlocks"); same shape reported as a bug and closed as
#   user error: https://github.com/python/cpython/issues/78321
# Shape: the child put a big item on a multiprocessing.Queue; before it can exit it waits for
# its feeder thread to push the bytes into the pipe, which only drains when the parent get()s,
# but the parent join()s the child first.
# Run: hangs forever (parent in p.join(), child's feeder thread in write() on the queue pipe).
from multiprocessing import Process, Queue


def f(q):
    q.put(b"X" * (1 << 20))


if __name__ == "__main__":
    queue = Queue()
    p = Process(target=f, args=(queue,))
    p.start()
    p.join()  # this deadlocks  # <join>
    obj = queue.get()
    print(len(obj))
