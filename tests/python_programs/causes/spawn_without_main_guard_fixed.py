# FIXED: spawn_without_main_guard.py with the one change its finding's FIX names (diff the two); what follows
# describes spawn_without_main_guard.py, the failing program.
# Source: Python docs, multiprocessing, "Safe importing of main module": under spawn and forkserver
#   every worker imports the main module again, so code that starts processes must sit under
#   `if __name__ == "__main__":`
#   https://docs.python.org/3/library/multiprocessing.html#the-spawn-and-forkserver-start-methods
# Shape: a script with no main guard starts a Pool under spawn; each worker re-runs the script,
# reaches Pool() again and raises "An attempt has been made to start a new process before the
# current process has finished its bootstrapping phase" (the Pool starts new workers for ever).
# Run: never ends by itself; forkcheck ends it once its workers keep failing at start.
import multiprocessing as mp


def square(x):
    return x * x


if __name__ == "__main__":
    with mp.get_context("spawn").Pool(2) as pool:
        print(pool.map(square, range(4)))
