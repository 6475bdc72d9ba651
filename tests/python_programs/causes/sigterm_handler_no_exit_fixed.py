# FIXED: sigterm_handler_no_exit.py with the one change its finding's FIX names (diff the two); what follows
# describes sigterm_handler_no_exit.py, the failing program.
# Source: https://github.com/borgstrom/offspring/issues/2 ("Children Failed to Join": children that
#   catch SIGTERM in a handler that does not exit are stuck forever in the parent's join(); the
#   reporter's fix: "I placed the sys.exit() in the signal_handler and it works"); the same hang in
#   spack's cleanup path when a child ignores SIGTERM: https://github.com/spack/spack/pull/52082
# Shape: the child installs a SIGTERM handler that only logs and returns, so Process.terminate()
# (which just sends SIGTERM) does not end it; the child goes back to waiting for work and the
# parent's join() waits for a child that will never exit.
# Run: prints "worker: got SIGTERM" on stderr, then hangs forever (parent in p.join(), child in
# q.get()).
import signal
import sys
from multiprocessing import Event, Process, Queue


def on_sigterm(signum, frame):
    sys.exit(0)


def worker(q, ready):
    signal.signal(signal.SIGTERM, on_sigterm)
    ready.set()
    for item in iter(q.get, None):
        print("worker: processing", item)


if __name__ == "__main__":
    q, ready = Queue(), Event()
    p = Process(target=worker, args=(q, ready))
    p.start()
    ready.wait()
    p.terminate()
    p.join()
    print("worker exit code", p.exitcode)
