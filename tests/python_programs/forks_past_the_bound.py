# 250 short-lived children forked one after another by one process, more than the 200 forks of a
# process forkcheck keeps whole: the report says how many it did not keep, and why.
import os

if __name__ == "__main__":
    for _ in range(250):
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
    print("forked 250")
