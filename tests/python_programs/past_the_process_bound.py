# 2100 short-lived children that end quietly, more than the 2000 Python processes forkcheck hears
# at once, and then one worker whose target raises, its end looked at by nobody: the quiet ones
# are folded into a count to make room, so the failed worker is still heard and fails the run.
import multiprocessing as mp
import os


def work():
    raise ValueError("the last worker's own error")  # <raise>


if __name__ == "__main__":
    for _ in range(2100):
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
    p = mp.get_context("fork").Process(target=work)
    p.start()
    p.join()
    print("forked 2101")
