# Short-lived children forked one after another by one process. First 300 from one line: alike
# in all but time, they are kept as one entry standing for all 300. Then 250 from two lines in
# turn, each unlike the one before: with the first entry, 51 more than the 200 entries of a
# process forkcheck keeps: the report says how many it did not keep, and why. And one line naming
# a start method 250 times, as a test suite's helper does: kept once, with its count.
import multiprocessing as mp
import os


def fork_and_wait(pid):
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)


if __name__ == "__main__":
    for _ in range(250):
        mp.get_context("fork")  # <context>
    for _ in range(300):
        fork_and_wait(os.fork())  # <alike>
    for i in range(250):
        if i % 2:
            fork_and_wait(os.fork())  # <odd>
        else:
            fork_and_wait(os.fork())  # <even>
    print("forked 550")
