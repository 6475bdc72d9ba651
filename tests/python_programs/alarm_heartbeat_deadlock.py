# A heartbeat alarm beside a deadlock (written here, after a review of forkcheck's alarm rule):
# the SIGALRM handler only sets the alarm again; the main thread waits for ever on a lock it holds.
# The alarm wakes the process every 2 s and nothing goes on: a hang, never a sleep until an alarm.
import signal
import threading


def beat(*_):
    signal.alarm(2)


signal.signal(signal.SIGALRM, beat)
signal.alarm(2)
lock = threading.Lock()
lock.acquire()
print("deadlocking", flush=True)
lock.acquire()  # <deadlock> the handler runs, and the acquire is retried
