# Threads that sleep for short random spells (0.01 to 0.3 s) and run Python between them, calls
# into C and back (sorted with a key, map, a generator), as data-loading, logging and metrics
# threads do, while the main thread waits in join(), where it cannot answer forkcheck's stacks
# signal: forkcheck must then ask the threads one at a time, and only while each is parked in its
# sleep. On 3.11 to 3.13 a thread made to dump its own stack at the instant a call returns to C
# dies (SIGSEGV in faulthandler's dump_frame): one that wakes as the signal lands could.
import random
import threading
import time


def work(seed):
    r = random.Random(seed)
    while True:
        time.sleep(r.uniform(0.01, 0.3))  # <sleep>
        end = time.monotonic() + r.uniform(0, 0.02)
        while time.monotonic() < end:
            sorted(range(50), key=lambda n: -n)
            list(map(str, range(50)))
            sum(n for n in range(50))


if __name__ == "__main__":
    threads = [threading.Thread(target=work, args=(n,), name="sleeper-%d" % n, daemon=True)
               for n in range(4)]
    for t in threads:
        t.start()
    print("ready", flush=True)
    # No timeout: a join with one wakes for a caught signal and runs Python's handler, one
    # without only when the thread ends (never: it loops for ever).
    threads[0].join()  # <join>
