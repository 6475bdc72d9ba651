# A worker that retries with back-off while its parent waits for it in join(): the shape of a
# client waiting for a server that is slow to come up (a parameter server, a dataset mount). Each
# retry sleeps (3 s, or argv[2]) up to 2 times (or argv[1]); the whole tree is quiet for seconds
# at a time and then goes on by itself.
# Written here (no report behind it): a wait that ends by itself is not a hang.
import multiprocessing as mp
import socket
import sys
import time


def connect(attempts, pause):
    for attempt in range(attempts):
        try:
            socket.create_connection(("127.0.0.1", 9), timeout=1).close()
            return
        except OSError as e:
            print("attempt", attempt + 1, "failed:", e, "- retrying in", pause, "s", flush=True)
            time.sleep(pause)  # <backoff>
    print("no server; going on without it", flush=True)


if __name__ == "__main__":
    attempts = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    pause = float(sys.argv[2]) if len(sys.argv) > 2 else 3.0
    worker = mp.Process(target=connect, args=(attempts, pause))
    worker.start()
    worker.join()
    print("worker exit code", worker.exitcode)
