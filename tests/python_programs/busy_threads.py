# Threads that never stop running Python code: calls, exceptions, generators and logging, in four
# threads and the main thread, as a training job's main process runs its logging, data loading,
# metrics and prefetch threads. forkcheck asks it for its stacks again and again while they run:
# it must never crash (faulthandler's all-threads dump, which reads running threads' frames
# without the GIL, could crash it), and always answer.
import logging
import sys
import threading
import time


def calls(depth):
    return 0 if depth == 0 else 1 + calls(depth - 1)


def call_loop():
    while True:
        calls(30)  # <calls>


def exception_loop():
    while True:
        try:
            raise ValueError("again")  # <raise>
        except ValueError:
            pass


def numbers():
    n = 0
    while True:
        yield n
        n += 1


def generator_loop():
    while True:
        for n in numbers():  # <generator>
            if n > 1000:
                break


def logging_loop():
    log = logging.getLogger("busy")
    log.addHandler(logging.NullHandler())
    log.propagate = False
    log.setLevel(logging.INFO)
    while True:
        log.info("step %d", 1)  # <logging>


if __name__ == "__main__":
    for name, target in (("calls", call_loop), ("exceptions", exception_loop),
                         ("generators", generator_loop), ("logging", logging_loop)):
        threading.Thread(target=target, name=name, daemon=True).start()
    print("ready", flush=True)
    limit = time.monotonic() + float(sys.argv[1] if len(sys.argv) > 1 else 600)
    while time.monotonic() < limit:
        sorted(str(n) for n in range(200))  # <main>
