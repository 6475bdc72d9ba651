# 250 short-lived children forked one after another by one process, more than the 200 forks of a
# process forkcheck keeps whole: the report says how many it did not keep, and why. And one line
# naming a start method 250 times, as a test suite's helper does: kept once, with its count.
import multiprocessing as mp
import os

if __name__ == "__main__":
    for _ in range(250):
        mp.get_context("fork")  # <context>
    for _ in range(250):
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
    print("forked 250")
