# A passing test suite whose tests end, kill and fail their children on purpose and check the
# result, modelled on CPython's own: Lib/test/_test_multiprocessing.py (test_terminate,
# test_kill, test_sys_exit, test_lose_target_ref's exitcode checks),
# Lib/test/test_concurrent_futures/test_process_pool.py and test_deadlock.py (a worker that
# crashes or exits; the test asserts BrokenProcessPool), Lib/test/test_subprocess.py (non-zero
# exits read through returncode, call(), check_call()).
# https://github.com/python/cpython/blob/3.13/Lib/test/_test_multiprocessing.py
# https://github.com/python/cpython/blob/3.13/Lib/test/test_concurrent_futures/test_deadlock.py
# Under forkcheck exec every end here is the program's own doing: the run must end ok (exit 0)
# with each of them listed as not counted.
import concurrent.futures
import multiprocessing
import os
import signal
import subprocess
import sys
import time
import unittest


def sleep_long():
    time.sleep(60)


def ready_then_sleep(ready):
    ready.set()
    time.sleep(60)


def exit_with(code):
    sys.exit(code)


def raise_error():
    raise ValueError("raised on purpose")


def crash_worker():
    os.kill(os.getpid(), signal.SIGSEGV)


def square(x):
    return x * x


class ProcessEnds(unittest.TestCase):
    def test_terminate(self):
        p = multiprocessing.Process(target=sleep_long)
        p.start()
        p.terminate()  # <terminate>
        p.join()
        self.assertEqual(p.exitcode, -signal.SIGTERM)

    @unittest.skipUnless(hasattr(multiprocessing.Process, "kill"), "Process.kill(): 3.7 and later")
    def test_kill(self):
        p = multiprocessing.Process(target=sleep_long)
        p.start()
        p.kill()
        p.join()
        self.assertEqual(p.exitcode, -signal.SIGKILL)

    def test_sys_exit(self):
        for code in (1, 2, 255):
            p = multiprocessing.Process(target=exit_with, args=(code,))
            p.start()
            p.join()
            self.assertEqual(p.exitcode, code)  # <exitcode>

    def test_target_raises(self):
        p = multiprocessing.Process(target=raise_error)
        p.start()
        p.join()
        self.assertEqual(p.exitcode, 1)

    def test_signal_sent(self):
        ready = multiprocessing.Event()
        p = multiprocessing.Process(target=ready_then_sleep, args=(ready,))
        p.start()
        ready.wait()
        os.kill(p.pid, signal.SIGTERM)
        p.join()
        self.assertEqual(p.exitcode, -signal.SIGTERM)


class ExecutorEnds(unittest.TestCase):
    def test_crashed_worker_breaks_the_pool(self):
        with concurrent.futures.ProcessPoolExecutor(max_workers=2) as executor:
            self.assertEqual(executor.submit(square, 3).result(), 9)
            future = executor.submit(crash_worker)
            with self.assertRaises(concurrent.futures.process.BrokenProcessPool):
                future.result()


class CommandEnds(unittest.TestCase):
    def test_returncode(self):
        p = subprocess.Popen([sys.executable, "-c", "import sys; sys.exit(3)"])
        p.communicate()
        self.assertEqual(p.returncode, 3)  # <returncode>

    def test_call(self):
        self.assertEqual(subprocess.call([sys.executable, "-c", "raise SystemExit(4)"]), 4)

    def test_check_call(self):
        with self.assertRaises(subprocess.CalledProcessError):
            subprocess.check_call([sys.executable, "-c", "raise ValueError('on purpose')"],
                                  stderr=subprocess.DEVNULL)


if __name__ == "__main__":
    unittest.main()
