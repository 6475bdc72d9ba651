# Ends the program deals with itself, as CPython's own multiprocessing tests do (written here,
# modelled on test_multiprocessing's test_terminate and subprocess's test_send_signal): a Process
# ended with os.kill(pid, SIGTERM), a subprocess ended with Popen.terminate(), one with
# Popen.kill(), and a group led by a child ended with os.killpg; each end is checked, and the
# program exits 0. None of them is a failure of the program.
import multiprocessing
import os
import signal
import subprocess
import sys
import time


def sleeper():
    time.sleep(60)


if __name__ == "__main__":
    multiprocessing.set_start_method("fork")
    p = multiprocessing.Process(target=sleeper)
    p.start()
    os.kill(p.pid, signal.SIGTERM)  # <kill>
    p.join()
    assert p.exitcode == -signal.SIGTERM, p.exitcode
    codes = []
    for end in ("terminate", "kill"):
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        getattr(child, end)()
        codes.append(child.wait())
    leader = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                              start_new_session=True)
    # Not SIGINT: sent before the child's exec, it would meet the handler Python inherited.
    os.killpg(leader.pid, signal.SIGHUP)
    codes.append(leader.wait())
    assert codes == [-signal.SIGTERM, -signal.SIGKILL, -signal.SIGHUP], codes
    print("every end as asked:", codes)
