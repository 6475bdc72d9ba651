#!/usr/bin/env python3
"""Tests of forkcheck's Python bootstrap (harness/python/), on every interpreter there is.

    python3 tests/python/bootstrap_test.py [--interpreter PATH | --label LABEL] [unittest options]

Without --interpreter: pyenv's Pythons 3.6 to 3.13 and /usr/bin/python3, each missing one skipped
with the reason. This script plays forkcheck: it listens on an abstract Unix socket, runs small
programs with harness/python first on PYTHONPATH, and checks what every process of the program
said on its connections. Standard library only; runs on any python3 >= 3.6.
"""

import argparse
import ctypes
import glob
import itertools
import json
import os
import re
import resource
import shutil
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BOOTSTRAP_DIR = os.path.join(REPO, "harness", "python")
PYENV_VERSIONS = ["3.%d" % minor for minor in range(6, 14)]
SYSTEM_PYTHON = "/usr/bin/python3"
DUMP_SIGNAL = 40  # real-time signals, as forkcheck picks: one thread's own stack,
STACKS_SIGNAL = 42  # and every thread's, from the main thread under the GIL
SYS_TGKILL = {"x86_64": 234, "aarch64": 131}.get(os.uname().machine, 234)
SETTLE_S = 10  # how long connections may take to close once the program is gone
_names = itertools.count()


def tgkill(pid, tid, signal_number):
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.syscall(SYS_TGKILL, pid, tid, signal_number) != 0:
        raise OSError(ctypes.get_errno(), "tgkill")


def find_interpreters():
    """(label, path or None, reason) for pyenv's 3.6 to 3.13 and the system's python3."""
    root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    found = []
    for version in PYENV_VERSIONS:
        paths = sorted(glob.glob(os.path.join(root, "versions", version + ".*", "bin", "python3")),
                       key=lambda path: [int(part) for part in re.findall(r"\d+", path)])
        reason = "no pyenv Python %s under %s" % (version, root)
        found.append(("pyenv_" + version, paths[-1] if paths else None, reason))
    found.append(("system", SYSTEM_PYTHON if os.access(SYSTEM_PYTHON, os.X_OK) else None,
                  "no " + SYSTEM_PYTHON))
    return found


# ---------------------------------------------------------------------------------------------
# The test's forkcheck: the listening end of the channel


class Connection:
    def __init__(self, sock, reading):
        self.sock = sock
        self.data = bytearray()
        self.file = None  # the dumps file the process passed with its hello, as forkcheck keeps it
        self.closed = threading.Event()
        if reading:
            threading.Thread(target=self.read_all, daemon=True).start()

    def read_all(self):
        try:
            while True:
                chunk, ancillary, _, _ = self.sock.recvmsg(1 << 16, socket.CMSG_SPACE(16))
                for level, kind, data in ancillary:
                    if (level, kind) == (socket.SOL_SOCKET, socket.SCM_RIGHTS):
                        for fd in struct.unpack("%di" % (len(data) // 4), data):
                            if self.file is None and not self.data:
                                self.file = fd
                            else:
                                os.close(fd)
                if not chunk:
                    break
                self.data += chunk
        except OSError:
            pass  # the test is over: Forkcheck.close()
        finally:
            self.closed.set()

    def file_text(self):
        """What faulthandler wrote into the passed file so far."""
        if self.file is None:
            return ""
        return os.pread(self.file, 1 << 24, 0).decode(errors="replace")

    def hello(self):
        first, newline, _ = bytes(self.data).partition(b"\n")
        return json.loads(first.decode()) if newline else None


class Forkcheck:
    """Accepts every connection of the program's processes and keeps what each one says."""

    def __init__(self, reading=True):
        self.name = "forkcheck-bootstrap-test-%d-%d" % (os.getpid(), next(_names))
        self.reading = reading
        self.connections = []
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind("\0" + self.name)
        self._server.listen(512)
        self._server.settimeout(0.05)
        self._accepting = threading.Lock()
        self._open = True
        self._acceptor = threading.Thread(target=self._accept_all, daemon=True)
        self._acceptor.start()

    @property
    def address(self):
        return "@" + self.name

    def _accept_all(self):
        while self._open:
            self._accept()

    def _accept(self):
        """Accepts one connection, if one comes within the server's timeout."""
        with self._accepting:
            try:
                sock, _ = self._server.accept()
            except (socket.timeout, BlockingIOError):
                return False
            sock.settimeout(None)
            self.connections.append(Connection(sock, self.reading))
            return True

    def close(self):
        self._open = False
        self._acceptor.join()
        self._server.close()
        for connection in self.connections:
            connection.sock.close()
            if connection.file is not None:
                os.close(connection.file)
                connection.file = None

    def settle(self):
        """Takes the connections still in the backlog, then waits until every process is done
        talking (all its connections closed); says on stderr what it waited for, when it did."""
        start = time.monotonic()
        deadline = start + SETTLE_S
        while self._accept() and time.monotonic() < deadline:
            pass
        for connection in list(self.connections):
            connection.closed.wait(max(deadline - time.monotonic(), 0))
        waited = time.monotonic() - start
        if waited >= 0.5:
            still_open = ["%s %s" % ((connection.hello() or {}).get("pid", "?"),
                                     (connection.hello() or {}).get("role", "?"))
                          for connection in self.connections if not connection.closed.is_set()]
            print("\n    settle: %.1f s%s" % (waited, ", still open: " + ", ".join(still_open)
                                              if still_open else ""), end=" ", file=sys.stderr)

    def processes(self):
        """pid -> Process, from the hellos of all connections so far."""
        processes = {}
        for connection in list(self.connections):
            hello = connection.hello()
            if hello is None:
                continue
            process = processes.setdefault(hello["pid"], Process(hello["pid"]))
            if hello["role"] == "events":
                process.add_events(connection)
            else:
                process.dump_connections.append(connection)
        return processes


class Process:
    """What one process said: its hellos and events (a pid that forks, then execs, has two) and
    its dumps."""

    def __init__(self, pid):
        self.pid = pid
        self.events = []
        self.dump_connections = []

    def add_events(self, connection):
        data = bytes(connection.data)
        complete, _, _ = data.rpartition(b"\n")
        # Every complete line must be one JSON object: a half line would make this fail.
        self.events.extend(json.loads(line.decode()) for line in complete.split(b"\n"))

    @property
    def argv(self):
        """sys.argv, from the hello or, on Python 3.6, the argv event that follows it."""
        told = [event["argv"] for event in self.events if event.get("argv") is not None]
        return told[-1] if told else None

    @property
    def hellos(self):
        return self.of("hello")

    @property
    def hello(self):
        return self.hellos[-1]

    def of(self, ev, **fields):
        return [event for event in self.events if event["ev"] == ev
                and all(event.get(key) == value for key, value in fields.items())]

    @property
    def dumps(self):
        """What faulthandler wrote: into the file passed with the dumps hello, else (no such
        file could be made) on the connection itself after the hello line."""
        return "".join(c.file_text() + bytes(c.data).partition(b"\n")[2].decode(errors="replace")
                       for c in self.dump_connections)


def main_process(processes, path):
    """The program's own first process, among its workers, servers and trackers."""
    # A worker killed at birth may have said its dumps hello and never its events one.
    (main,) = [p for p in processes.values() if p.hellos and p.hellos[0]["born"] == "exec"
               and (p.argv or [None])[0] == path]
    return main


def frame_at(frames, path, line):
    return [frame for frame in frames if frame["file"] == path and frame["line"] == line]


# ---------------------------------------------------------------------------------------------
# The checks, run once per interpreter


class BootstrapChecks:
    python = None  # set per interpreter
    has_torch = False
    torch_reason = ""

    @classmethod
    def setUpClass(cls):
        result = subprocess.run([cls.python, "-c", "import torch"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=clean_env())
        cls.has_torch = result.returncode == 0
        lines = result.stderr.decode(errors="replace").strip().splitlines()
        cls.torch_reason = "%s cannot import torch (%s)" % (cls.python, lines[-1] if lines else "")

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="forkcheck-bootstrap-test-")
        self.forkcheck = Forkcheck()

    def tearDown(self):
        self.forkcheck.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def need_torch(self):
        if not self.has_torch:
            self.skipTest(self.torch_reason)

    # Running programs

    def program(self, source, name="program.py"):
        """Writes a program; returns its path and the lines of its "# <marker>" comments."""
        source = textwrap.dedent(source).lstrip()
        path = os.path.join(self.dir, name)
        with open(path, "w") as out:
            out.write(source)
        markers = {}
        for number, text in enumerate(source.splitlines(), 1):
            for marker in re.findall(r"# <([\w-]+)>", text):
                markers[marker] = number
        return path, markers

    def env(self, **extra):
        env = clean_env()
        env.update(PYTHONPATH=BOOTSTRAP_DIR, FORKCHECK_PY_CHANNEL=self.forkcheck.address,
                   FORKCHECK_PY_SIGNAL=str(DUMP_SIGNAL), FORKCHECK_PY_STACKS_SIGNAL=str(STACKS_SIGNAL))
        env.update(extra)
        return env

    def run_program(self, path, *args, env=None, timeout=60, expect_rc=0):
        """Runs it to its end; returns its stdout and what its processes said."""
        result = subprocess.run([self.python, path] + list(args), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=env or self.env(), timeout=timeout)
        stderr = result.stderr.decode(errors="replace")
        if expect_rc is not None:
            self.assertEqual(result.returncode, expect_rc, "stderr:\n" + stderr)
        # The tracebacks the program prints are its own, without a frame of ours.
        self.assertNotIn("forkcheck_boot", stderr)
        self.stderr = stderr
        self.forkcheck.settle()
        return result.stdout.decode(), self.forkcheck.processes()

    def wait_for(self, predicate, timeout, what):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = predicate()
            if value:
                return value
            time.sleep(0.01)
        self.fail("no %s within %.1f s" % (what, timeout))

    # Processes, forks, threads

    def test_hello_from_every_process_and_the_fork_site(self):
        path, line = self.program("""
            import json, multiprocessing as mp, os, subprocess, sys, threading

            def work():
                pass

            def flush_metrics(stop):
                stop.wait()

            def fork_here(pids):
                pid = os.fork()
                if pid == 0:
                    os._exit(0)
                os.waitpid(pid, 0)
                pids["from-thread"] = pid

            if __name__ == "__main__":
                stop = threading.Event()
                flusher = threading.Thread(target=flush_metrics, args=(stop,),
                                           name="metrics-flusher")
                flusher.start()  # <thread-start>
                pids = {}
                for method in ("fork", "spawn", "forkserver"):
                    process = mp.get_context(method).Process(target=work)
                    process.start()  # <process-start>
                    process.join()
                    pids[method] = process.pid
                stop.set()
                flusher.join()
                forker = threading.Thread(target=fork_here, args=(pids,), name="forker")
                forker.start()
                forker.join()
                pool = mp.get_context("fork").Pool(2)
                pids["pool"] = [worker.pid for worker in pool._pool]
                pool.map(abs, range(4))
                pool.close()  # not terminate(): a worker not yet scheduled would die unheard
                pool.join()
                child = subprocess.Popen([sys.executable, "-c", "pass"])
                child.wait()
                pids["subprocess"] = child.pid
                print(json.dumps(pids))
        """)
        stdout, processes = self.run_program(path)
        pids = json.loads(stdout)
        main = main_process(processes, path)
        main_pid = main.pid
        self.assertEqual(main.hello["python"]["executable"], self.python)
        paths = json.loads(subprocess.check_output(
            [self.python, "-c", "import json, sysconfig; print(json.dumps(sysconfig.get_paths()))"],
            env=clean_env()).decode())
        for key in ("stdlib", "platstdlib", "purelib", "platlib"):
            self.assertEqual(main.hello["paths"][key], paths[key], key)
        self.assertIn(paths["purelib"], main.hello["paths"]["site_packages"])
        # The kernel's id of it: get_native_id() from 3.8, /proc/thread-self before.
        main_thread = main.hello["main_thread"]
        self.assertEqual((main_thread["name"], main_thread["native_id"]), ("MainThread", main_pid))
        for name in ("fork", "spawn", "forkserver", "subprocess"):
            self.assertIn(pids[name], processes, "no hello from the %s child" % name)
        for pid in pids["pool"]:
            self.assertIn(pid, processes, "no hello from a Pool worker")

        # Forked from a thread: the child's one thread is that thread, named in its hello.
        from_thread = processes[pids["from-thread"]].hello
        self.assertEqual(from_thread["main_thread"]["name"], "forker")
        self.assertEqual(main.of("fork", seq=from_thread["fork_seq"])[0]["thread_name"], "forker")

        fork_child = processes[pids["fork"]].hello
        self.assertEqual(fork_child["born"], "fork")
        self.assertEqual(fork_child["ppid"], main_pid)
        fork = main.of("fork", seq=fork_child["fork_seq"])
        self.assertEqual(len(fork), 1, "no fork event of seq %s" % fork_child["fork_seq"])
        self.assertTrue(frame_at(fork[0]["stack"], path, line["process-start"]), fork[0]["stack"])
        flushers = [t for t in fork[0]["threads"] if t["name"] == "metrics-flusher"]
        self.assertEqual(len(flushers), 1, fork[0]["threads"])
        self.assertEqual(flushers[0]["started_at"]["file"], path)
        self.assertEqual(flushers[0]["started_at"]["line"], line["thread-start"])

        thread = main.of("thread", name="metrics-flusher")
        self.assertEqual(len(thread), 1)
        self.assertEqual(thread[0]["target"], "__main__.flush_metrics")
        self.assertEqual(thread[0]["started_at"]["line"], line["thread-start"])

        spawned = processes[pids["spawn"]].hello
        self.assertEqual((spawned["born"], spawned["ppid"]), ("exec", main_pid))
        server_worker = processes[pids["forkserver"]].hello
        self.assertEqual(server_worker["born"], "fork")
        server = processes[server_worker["ppid"]]
        self.assertEqual(server.hellos[0]["born"], "exec")
        self.assertEqual(len(server.of("fork", seq=server_worker["fork_seq"])), 1)
        for pid in pids["pool"]:
            self.assertEqual(processes[pid].hello["born"], "fork")
            self.assertEqual(processes[pid].hello["ppid"], main_pid)
        python_child = processes[pids["subprocess"]]
        self.assertEqual((python_child.hello["born"], python_child.argv), ("exec", ["-c"]))

        for name in ("fork", "spawn", "forkserver"):
            ends = main.of("child_exit", pid=pids[name])
            self.assertEqual(len(ends), 1, "child_exit of the %s child: %s" % (name, ends))
            self.assertEqual(ends[0]["returncode"], 0)
            self.assertEqual(ends[0]["via"], "multiprocessing")
            self.assertEqual(ends[0]["target"], "__main__.work")
        ends = main.of("child_exit", pid=pids["subprocess"])
        self.assertEqual([(e["via"], e["returncode"], e["name"]) for e in ends],
                         [("subprocess", 0, self.python)])
        self.assertEqual(main.of("exit")[-1]["code"], None)

    def test_fork_while_a_thread_sends_does_not_deadlock(self):
        path, _ = self.program("""
            import os, threading

            stop = threading.Event()

            def start_threads():
                while not stop.is_set():
                    thread = threading.Thread(target=int)
                    thread.start()
                    thread.join()

            if __name__ == "__main__":
                threading.Thread(target=start_threads, name="starter", daemon=True).start()
                for _ in range(50):
                    pid = os.fork()
                    if pid == 0:
                        os._exit(0)
                    os.waitpid(pid, 0)
                stop.set()
        """)
        # A deadlock would be forever: the run's timeout catches it, load or not.
        _, processes = self.run_program(path, timeout=120)
        main = main_process(processes, path)
        forks = main.of("fork")
        self.assertEqual([fork["seq"] for fork in forks], list(range(1, 51)))
        self.assertTrue(all(any(t["name"] == "starter" for t in f["threads"]) for f in forks))
        children = [p.hello for p in processes.values() if p.hello["born"] == "fork"]
        self.assertEqual(sorted(child["fork_seq"] for child in children), list(range(1, 51)))
        self.assertTrue(all(child["ppid"] == main.pid for child in children))
        self.assertGreater(len(main.of("thread")), 50)

    # Stacks on demand and crashes

    def test_signal_dumps_the_line_a_child_is_blocked_on(self):
        path, line = self.program("""
            import os, sys, threading, time

            lock = threading.Lock()

            def hold():
                with lock:
                    time.sleep(600)

            def wait_for_lock():
                print("acquiring", flush=True)
                lock.acquire()  # <blocked>

            if __name__ == "__main__":
                threading.Thread(target=hold, daemon=True).start()
                while not lock.locked():
                    time.sleep(0.01)
                pid = os.fork()
                if pid == 0:
                    wait_for_lock()
                    os._exit(0)
                print("child", pid, flush=True)
                os.waitpid(pid, 0)
        """)
        program = subprocess.Popen([self.python, path], stdout=subprocess.PIPE,
                                   stderr=subprocess.DEVNULL, env=self.env())
        child = None
        try:
            words = {}
            for _ in range(2):
                said = program.stdout.readline().decode().split()
                words[said[0]] = said[1:]
            child = int(words["child"][0])
            self.wait_for(lambda: child in self.forkcheck.processes(), 30, "the child's hello")
            # Asleep after saying "acquiring": in acquire(), however slow a busy machine is.
            self.wait_for(lambda: process_state(child) == "S", 30, "the child asleep in acquire()")
            expected = 'File "%s", line %d in wait_for_lock' % (path, line["blocked"])
            for dump in (1, 2):  # and again: the process is as it was after the first one
                sent = time.monotonic()
                os.kill(child, DUMP_SIGNAL)
                self.wait_for(lambda: self.forkcheck.processes()[child].dumps.count(expected)
                              == dump, 30, "dump %d naming %s" % (dump, expected))
                print("\n    %s: dump %d %.0f ms after the signal"
                      % (self.label, dump, (time.monotonic() - sent) * 1000), end=" ",
                      file=sys.stderr)
                time.sleep(0.1)
                self.assertIn(process_state(child), "SR", "the child died")
            hello = self.forkcheck.processes()[child].hello
            self.assertEqual((hello["born"], hello["dump_signal"]), ("fork", DUMP_SIGNAL))
        finally:
            if child:
                os.kill(child, signal.SIGKILL)
            program.kill()
            program.wait()

    def busy_program(self):
        """A program whose main thread and two named threads keep running Python code; started,
        its threads' OS ids told."""
        path, line = self.program("""
            import threading, time

            def spin():
                while True:
                    sum(range(100))  # <spin>

            if __name__ == "__main__":
                for name in ("loader", "metrics"):
                    threading.Thread(target=spin, name=name, daemon=True).start()
                print("ready", flush=True)
                limit = time.monotonic() + 120
                while time.monotonic() < limit:
                    sorted(range(100))  # <main>
        """)
        program = subprocess.Popen([self.python, path], stdout=subprocess.PIPE,
                                   stderr=subprocess.DEVNULL, env=self.env())
        program.stdout.readline()
        self.wait_for(lambda: program.pid in self.forkcheck.processes()
                      and len(self.forkcheck.processes()[program.pid].of("thread")) == 2, 30,
                      "the program's two threads told")
        return program, path, line

    def test_stacks_signal_answers_every_thread_from_the_main_thread(self):
        program, path, line = self.busy_program()
        try:
            self.assertEqual(self.forkcheck.processes()[program.pid].hello["stacks_signal"],
                             STACKS_SIGNAL)
            for answer in (1, 2):
                os.kill(program.pid, STACKS_SIGNAL)
                self.wait_for(lambda: len(self.forkcheck.processes()[program.pid].of("stacks"))
                              == answer, 30, "answer %d" % answer)
            (_, stacks) = self.forkcheck.processes()[program.pid].of("stacks")
            by_name = {thread["name"]: thread for thread in stacks["threads"]}
            self.assertEqual(set(by_name), {"MainThread", "loader", "metrics"})
            told = {event["name"]: event["native_id"]
                    for event in self.forkcheck.processes()[program.pid].of("thread")}
            for name in ("loader", "metrics"):
                self.assertEqual(by_name[name]["native_id"], told[name])
                # In spin(), at its loop's line or its body's: where the thread was interrupted.
                innermost = by_name[name]["frames"][-1]
                self.assertEqual((innermost["file"], innermost["function"]), (path, "spin"),
                                 by_name[name])
                self.assertIn(innermost["line"], (line["spin"] - 1, line["spin"]), by_name[name])
            # The main thread's innermost frame is the program's, never the handler's.
            main_frames = by_name["MainThread"]["frames"]
            self.assertEqual(main_frames[-1]["file"], path)
            self.assertNotIn("forkcheck_boot", json.dumps(stacks))
            self.assertIsNone(program.poll(), "the program died of being asked")
        finally:
            program.kill()
            program.wait()

    def test_thread_signal_dumps_that_thread_alone(self):
        program, path, line = self.busy_program()
        try:
            loader = [event["native_id"] for event in
                      self.forkcheck.processes()[program.pid].of("thread", name="loader")][0]
            # In spin(), at its loop's line or its body's: where the thread was interrupted.
            expected = re.compile(r'File "%s", line (%d|%d) in spin'
                                  % (re.escape(path), line["spin"] - 1, line["spin"]))
            for dump in (1, 2):
                # tgkill: the signal for one thread of another process.
                ctypes.CDLL(None, use_errno=True).syscall(SYS_TGKILL, program.pid, loader,
                                                          DUMP_SIGNAL)
                self.wait_for(lambda: len(expected.findall(
                    self.forkcheck.processes()[program.pid].dumps)) == dump, 30,
                    "dump %d of the loader thread" % dump)
            dumps = self.forkcheck.processes()[program.pid].dumps
            self.assertEqual(dumps.count("Stack (most recent call first):"), 2, dumps)
            self.assertNotIn("Thread 0x", dumps)  # never every thread's
            self.assertNotIn("line %d" % line["main"], dumps)
            self.assertIsNone(program.poll(), "the program died of being asked")
        finally:
            program.kill()
            program.wait()

    def test_a_deep_stack_is_dumped_whole(self):
        # faulthandler of 3.6 to 3.8 writes a character at a time: on a socket, the rest of a
        # stack past a few hundred characters was refused; into the passed file, none is lost.
        path, line = self.program("""
            import threading

            def down(depth, lock):
                if depth == 0:
                    print("waiting", flush=True)
                    lock.acquire()  # <blocked>
                down(depth - 1, lock)

            lock = threading.Lock()
            lock.acquire()
            down(60, lock)
        """)
        program = subprocess.Popen([self.python, path], stdout=subprocess.PIPE,
                                   stderr=subprocess.DEVNULL, env=self.env())
        try:
            program.stdout.readline()
            # Its dumps connection taken, and the file that came with its hello.
            self.wait_for(lambda: any(c.file is not None for c in self.forkcheck.processes().get(
                program.pid, Process(0)).dump_connections), 30, "the program's dump file")
            self.wait_for(lambda: process_state(program.pid) == "S", 30, "the program asleep")
            os.kill(program.pid, DUMP_SIGNAL)
            self.wait_for(lambda: 'in <module>' in self.forkcheck.processes()[program.pid].dumps,
                          30, "the dump's outermost frame")
            dumps = self.forkcheck.processes()[program.pid].dumps
            self.assertIn('File "%s", line %d in down' % (path, line["blocked"]), dumps)
            self.assertEqual(dumps.count(" in down"), 61, dumps)
        finally:
            program.kill()
            program.wait()

    def test_segfault_dumps_its_line_and_still_kills(self):
        path, line = self.program("""
            import ctypes

            def crash():
                ctypes.string_at(0)  # <crash>

            crash()
        """)
        _, processes = self.run_program(path, expect_rc=-signal.SIGSEGV)
        (process,) = processes.values()
        self.assertIn("Segmentation fault", process.dumps)
        self.assertIn('File "%s", line %d in crash' % (path, line["crash"]), process.dumps)
        self.assertEqual(process.hello["crash_dumps"], "dumps")

    # Exceptions and ends

    def test_spawned_worker_exception_while_the_parent_exits_0(self):
        path, line = self.program("""
            import multiprocessing as mp

            def work():
                raise ValueError("bad input 42")  # <raise>

            if __name__ == "__main__":
                process = mp.get_context("spawn").Process(target=work, name="loader-1")
                process.start()
                process.join()
                print(process.pid)
        """)
        stdout, processes = self.run_program(path)
        worker = processes[int(stdout)]
        (error,) = worker.of("exception")
        self.assertEqual((error["where"], error["type"], error["message"]),
                         ("process", "ValueError", "bad input 42"))
        self.assertEqual(error["process_name"], "loader-1")
        innermost = error["frames"][-1]
        self.assertEqual((innermost["file"], innermost["line"], innermost["function"]),
                         (path, line["raise"], "work"))
        self.assertTrue(innermost["code"].startswith('raise ValueError("bad input 42")'))
        parent = processes[worker.hello["ppid"]]
        (end,) = parent.of("child_exit", pid=worker.pid)
        self.assertEqual((end["returncode"], end["name"], end["target"]),
                         (1, "loader-1", "__main__.work"))

    def test_worker_killed_by_sigkill(self):
        path, _ = self.program("""
            import multiprocessing as mp, os, signal, time

            if __name__ == "__main__":
                process = mp.get_context("fork").Process(target=time.sleep, args=(600,))
                process.start()
                os.kill(process.pid, signal.SIGKILL)
                process.join()
                print(process.pid)
        """)
        stdout, processes = self.run_program(path)
        (end,) = main_process(processes, path).of("child_exit")
        self.assertEqual((end["pid"], end["returncode"], end["target"]),
                         (int(stdout), -9, "time.sleep"))

    def test_spawned_child_without_main_guard_fails_bootstrapping(self):
        path, _ = self.program("""
            import multiprocessing as mp

            process = mp.get_context("spawn").Process(target=print)
            process.start()
            process.join()
            print(process.pid)
        """)
        stdout, processes = self.run_program(path)
        (error,) = processes[int(stdout)].of("exception")
        self.assertEqual((error["where"], error["type"]), ("process", "RuntimeError"))
        self.assertIn("bootstrapping phase", error["message"])
        self.assertTrue(frame_at(error["frames"], path, 4), error["frames"])

    def test_worker_defined_under_the_main_guard_fails_to_unpickle(self):
        path, _ = self.program("""
            import multiprocessing as mp, sys

            if __name__ == "__main__":
                def work():
                    pass

                process = mp.get_context(sys.argv[1]).Process(target=work)
                process.start()
                process.join()
                print(process.pid, process.exitcode)
        """)
        for method in ("spawn", "forkserver"):
            stdout, processes = self.run_program(path, method)
            pid, exitcode = map(int, stdout.split())
            self.assertNotEqual(exitcode, 0)  # 1, or 255 from 3.6's forkserver
            (error,) = processes[pid].of("exception")
            self.assertEqual(error["where"], "process", method)
            self.assertIn("Can't get attribute 'work' on <module '__mp_main__'", error["message"])

    def test_unpicklable_target_fails_at_the_programs_start_line(self):
        path, line = self.program("""
            import multiprocessing as mp

            def main():
                def work():
                    pass
                mp.get_context("spawn").Process(target=work).start()  # <start>

            if __name__ == "__main__":
                main()
        """)
        _, processes = self.run_program(path, expect_rc=1)
        main = main_process(processes, path)
        (error,) = main.of("exception")
        self.assertEqual(error["where"], "main")
        self.assertIn("local object 'main.<locals>.work'", error["message"])
        self.assertTrue(frame_at(error["frames"], path, line["start"]), error["frames"])
        self.assertEqual(main.of("exit")[-1]["code"], 1)

    def test_thread_and_main_exceptions_and_exit_code(self):
        path, line = self.program("""
            import sys, threading, traceback

            def fail():
                raise KeyError("k")  # <thread-raise>

            def main():
                raise RuntimeError("boom")  # <main-raise>

            if __name__ == "__main__":
                thread = threading.Thread(target=fail, name="worker-thread")
                thread.start()
                thread.join()
                if sys.argv[1] == "own-hook":
                    sys.excepthook = lambda *error: None  # does not call ours
                if sys.argv[1] == "exit":
                    try:
                        sys.exit(3)
                    except SystemExit:
                        traceback.print_exc()  # as pytest does: without a frame of ours
                        raise
                main()
        """)
        for how, rc, code in (("exit", 3, None), ("raise", 1, 1), ("own-hook", 1, 1)):
            _, processes = self.run_program(path, how, expect_rc=rc)
            (process,) = processes.values()
            thread_error = process.of("exception", where="thread")
            self.assertEqual(len(thread_error), 1, how)
            self.assertEqual((thread_error[0]["type"], thread_error[0]["thread_name"]),
                             ("KeyError", "worker-thread"))
            self.assertEqual(thread_error[0]["frames"][-1]["line"], line["thread-raise"])
            main_error = process.of("exception", where="main")
            if how == "exit":
                self.assertEqual(main_error, [])
            else:
                self.assertEqual(len(main_error), 1, how)
                self.assertEqual(main_error[0]["frames"][-1]["line"], line["main-raise"])
                self.assertEqual(main_error[0]["thread_name"], "MainThread")
            self.assertEqual(process.of("exit")[-1]["code"], code, how)
            self.forkcheck.close()
            self.forkcheck = Forkcheck()

    def test_exits_requests_and_handlers_are_told_and_change_nothing(self):
        path, line = self.program("""
            import multiprocessing as mp, os, pickle, signal, sys, threading

            def on_term(signum, frame):
                pass

            def exits():
                os._exit(4)  # <os-exit>

            def raises_exit():
                sys.exit(5)  # <sys-exit>

            def waits(ready):
                signal.signal(signal.SIGTERM, on_term)  # <handler>
                ready.set()  # signal() has returned: what it told is sent
                threading.Event().wait(30)

            if __name__ == "__main__":
                mp.set_start_method("fork")
                # Still pickled by reference, as without us.
                assert pickle.loads(pickle.dumps(os._exit)) is os._exit
                assert pickle.loads(pickle.dumps(signal.signal)) is signal.signal
                # Their own errors, in their own words.
                for call, error in ((lambda: os._exit("x"), TypeError),
                                    (lambda: signal.signal(999, on_term), ValueError)):
                    try:
                        call()
                    except error as e:
                        assert "told" not in str(e), str(e)
                    else:
                        raise AssertionError("no error")
                codes = []
                for target in (exits, raises_exit):
                    p = mp.Process(target=target)
                    p.start()
                    p.join()
                    codes.append(p.exitcode)
                ready = mp.Event()
                w = mp.Process(target=waits, args=(ready,))
                w.start()
                # Its handler set, and told: /proc's SigCgt shows it before signal() returns.
                assert ready.wait(60), "the child never set its handler"
                w.terminate()  # <terminate>
                os.kill(w.pid, signal.SIGKILL)  # its handler returned: it goes on
                w.join()
                print(codes)
        """)
        stdout, processes = self.run_program(path)
        self.assertEqual(stdout.strip(), "[4, 5]")
        told = {}
        for pid, process in processes.items():
            for event in process.of("exception"):
                told[(event["where"], event["type"])] = event
        exit_call = told[("exit", "os._exit")]
        self.assertEqual((exit_call["message"], exit_call["frames"][-1]["line"]),
                         ("4", line["os-exit"]))
        # Up to 3.12 seen in util._exit_function, from 3.13 as _bootstrap catches it.
        self.assertEqual(told[("process", "SystemExit")]["frames"][-1]["line"], line["sys-exit"])
        handlers = [h for p in processes.values() for h in p.of("signal_handler")]
        self.assertIn(("SIGTERM", "__main__.on_term", line["handler"]),
                      [(h["signal"], h["handler"], h["where"]["line"]) for h in handlers])
        asked = [a for p in processes.values() for a in p.of("end_asked")]
        self.assertEqual([(a["how"], a["where"]["line"]) for a in asked],
                         [("terminate", line["terminate"])])

    def test_a_worker_that_takes_our_monitoring_tool_id_gets_it(self):
        # 3.13+: the bootstrap sees a worker's SystemExit through sys.monitoring, under a tool
        # id it hands over to a program that asks for it, then takes another.
        path, line = self.program("""
            import multiprocessing, sys

            def tracer():
                if hasattr(sys, "monitoring"):
                    sys.monitoring.use_tool_id(4, "mine")
                    print(sys.monitoring.get_tool(4), file=sys.stderr)
                sys.exit(7)  # <exit>

            if __name__ == "__main__":
                multiprocessing.set_start_method("fork")
                p = multiprocessing.Process(target=tracer)
                p.start()
                p.join()
                print(p.exitcode)
        """)
        stdout, processes = self.run_program(path)
        self.assertEqual(stdout.strip(), "7")
        told = [e["frames"][-1]["line"] for p in processes.values() for e in p.of("exception")
                if e["where"] == "process"]
        self.assertEqual(told, [line["exit"]])

    def test_alarms(self):
        path, line = self.program("""
            import signal

            signal.alarm(30)  # <alarm>
            signal.alarm(0)  # <cancel>
            signal.setitimer(signal.ITIMER_REAL, 0.5)  # <timer>
            signal.setitimer(signal.ITIMER_VIRTUAL, 0.5)  # <virtual>
            signal.setitimer(signal.ITIMER_VIRTUAL, 0)
            signal.setitimer(signal.ITIMER_REAL, 0)  # <timer-off>
            signal.signal(signal.SIGALRM, signal.SIG_IGN)
            signal.alarm(30)  # <ignored>
            signal.alarm(0)
        """)
        _, processes = self.run_program(path)
        alarms = [(a["seconds"], a["where"]["line"], a["ignored"])
                  for p in processes.values() for a in p.of("alarm")]
        self.assertEqual(alarms, [(30.0, line["alarm"], False), (0.0, line["cancel"], False),
                                  (0.5, line["timer"], False), (0.0, line["timer-off"], False),
                                  (30.0, line["ignored"], True),
                                  (0.0, line["ignored"] + 1, True)])

    def test_subprocess_end(self):
        path, _ = self.program("""
            import subprocess, sys

            child = subprocess.Popen([sys.executable, "-c", "import sys; sys.exit(3)"])
            child.wait()
            child.poll()
            print(child.pid)
        """)
        stdout, processes = self.run_program(path)
        parent = processes[processes[int(stdout)].hello["ppid"]]
        self.assertEqual([(e["pid"], e["returncode"], e["via"]) for e in parent.of("child_exit")],
                         [(int(stdout), 3, "subprocess")])

    def test_looks_at_ends_are_told_once_and_change_nothing(self):
        path, line = self.program("""
            import multiprocessing as mp, subprocess, sys

            def fails():
                sys.exit(6)

            if __name__ == "__main__":
                mp.set_start_method("fork")
                p = mp.Process(target=fails)
                p.start()
                p.join()
                codes = [p.exitcode, p.exitcode]  # <exitcode>
                # Still a property, and returncode still an entry of the object's __dict__.
                assert type(mp.Process.exitcode) is property
                shell = [sys.executable, "-c", "import sys; sys.exit(3)"]
                child = subprocess.Popen(shell)
                child.communicate()  # learns the end; hands it to no one
                assert vars(child)["returncode"] == 3, vars(child)
                codes.append(child.returncode)  # <returncode>
                codes.append(subprocess.call(shell))  # <call>
                quiet = subprocess.Popen(shell)
                quiet.communicate()  # never looked at
                child.returncode = 9
                codes.append(child.returncode)
                del child.returncode
                try:
                    child.returncode
                except AttributeError as e:
                    codes.append(str(e))
                child.returncode = 3  # as its __del__ expects it
                print(codes, quiet.pid)
        """)
        stdout, processes = self.run_program(path)
        codes, quiet = stdout.strip().rsplit(" ", 1)
        self.assertEqual(codes, "[6, 6, 3, 3, 9, \"'Popen' object has no attribute 'returncode'\"]")
        looked = [(e["code"], e["via"], e["where"]["line"])
                  for p in processes.values() for e in p.of("end_looked")]
        self.assertEqual(looked, [(6, "exitcode", line["exitcode"]),
                                  (3, "returncode", line["returncode"]),
                                  (3, "call", line["call"])])
        self.assertNotIn(int(quiet), [e["child"] for p in processes.values()
                                      for e in p.of("end_looked")])

    def test_a_worker_exit_that_means_0_is_no_failure(self):
        # sys.exit(False) exits 0, as CPython's test_sys_exit checks; True is 1.
        path, _ = self.program("""
            import multiprocessing as mp, sys

            if __name__ == "__main__":
                mp.set_start_method("fork")
                codes = []
                for code in (False, True):
                    p = mp.Process(target=sys.exit, args=(code,))
                    p.start()
                    p.join()
                    codes.append(p.exitcode)
                print(codes)
        """)
        stdout, processes = self.run_program(path)
        self.assertEqual(stdout.strip(), "[0, 1]")
        self.assertEqual([e["message"] for p in processes.values() for e in p.of("exception")
                          if e["where"] == "process"], ["True"])

    def test_wrappers_called_with_no_python_caller_stay_quiet(self):
        # atexit calls what it holds with no Python frame above it: CPython's own tests register
        # multiprocessing.util._exit_function again, after the bootstrap wrapped it.
        path, _ = self.program("""
            import atexit, multiprocessing.util, os, signal

            atexit.register(multiprocessing.util._exit_function)
            atexit.register(os.kill, os.getpid(), 0)
            atexit.register(signal.signal, signal.SIGTERM, signal.SIG_DFL)
            print("registered")
        """)
        stdout, _ = self.run_program(path)  # fails on any stderr naming forkcheck_boot
        self.assertEqual(stdout.strip(), "registered")

    def test_an_uncaught_exception_is_let_go_once_told(self):
        # CPython's regrtest checks that nothing a test made outlives it ("env changed"): the
        # exception sys.excepthook was handed, and its frames' locals, are not kept by us.
        path, _ = self.program("""
            import gc, sys, weakref

            class Held:
                pass

            def fail(held):
                raise ValueError("told")

            held = Held()
            ref = weakref.ref(held)
            try:
                fail(held)
            except ValueError:
                sys.excepthook(*sys.exc_info())  # as unittest's and regrtest's runners do
            del held
            gc.collect()
            print("freed" if ref() is None else "kept")
        """)
        stdout, processes = self.run_program(path)
        self.assertEqual(stdout.strip(), "freed")
        self.assertEqual([e["message"] for p in processes.values() for e in p.of("exception")],
                         ["told"])

    # The program's own environment

    def test_programs_own_sitecustomize_still_runs(self):
        own = os.path.join(self.dir, "own")
        os.mkdir(own)
        with open(os.path.join(own, "sitecustomize.py"), "w") as out:
            out.write("import builtins\nbuiltins.OWN_SITECUSTOMIZE = __name__, __file__\n")
        probe = ("import builtins, sys; print(getattr(builtins, 'OWN_SITECUSTOMIZE', None)); "
                 "print(getattr(sys.modules.get('sitecustomize'), '__file__', None))")
        with_own = os.pathsep.join([BOOTSTRAP_DIR, own])
        for env in (self.env(PYTHONPATH=with_own), dict(clean_env(), PYTHONPATH=with_own)):
            lines = subprocess.check_output([self.python, "-c", probe], env=env).decode()
            lines = lines.split("\n")
            theirs = os.path.join(own, "sitecustomize.py")
            self.assertEqual(lines[0], str(("sitecustomize", theirs)))
            self.assertEqual(lines[1], theirs)

        # The interpreter's own (Debian's /usr/lib/python3.X/sitecustomize.py), if it has one.
        find = "import sitecustomize; print(sitecustomize.__file__)"
        system = subprocess.run([self.python, "-c", find], stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, env=clean_env())
        expected = system.stdout.decode().strip() if system.returncode == 0 else os.path.join(
            BOOTSTRAP_DIR, "sitecustomize.py")
        seen = subprocess.check_output([self.python, "-c", find], env=self.env()).decode().strip()
        self.assertEqual(seen, expected)

    def test_without_a_channel_nothing_is_imported_or_connected(self):
        probe, _ = self.program("""
            import os, sys

            print(" ".join(sorted(sys.modules)))
            descriptors = []
            for fd in os.listdir("/proc/self/fd"):
                try:
                    descriptors.append(os.readlink("/proc/self/fd/" + fd))
                except OSError:
                    pass  # listdir's own
            print(sum(target.startswith("socket:") for target in descriptors))
        """)
        plain = subprocess.check_output([self.python, probe], env=clean_env())
        env = dict(clean_env(), PYTHONPATH=BOOTSTRAP_DIR, FORKCHECK_PY_SIGNAL=str(DUMP_SIGNAL))
        ours = subprocess.check_output([self.python, probe], env=env)
        (plain_modules, _), (modules, sockets) = plain.split(b"\n")[:2], ours.split(b"\n")[:2]
        self.assertLessEqual(set(modules.split()) - set(plain_modules.split()),
                             {b"sitecustomize"})
        self.assertEqual(sockets, b"0")

    def attachable_files(self, pid):
        """{"dumps": path, "threads": path} of pid's attachable bootstrap, by /proc/PID/fd."""
        found = {}
        for fd in os.listdir("/proc/%d/fd" % pid):
            try:
                link = os.readlink("/proc/%d/fd/%s" % (pid, fd))
            except OSError:
                continue
            for kind in ("dumps", "threads"):
                if ("forkcheck-py-" + kind) in link and link.endswith(" (deleted)"):
                    found[kind] = "/proc/%d/fd/%s" % (pid, fd)
        return found

    def test_attachable_lists_python_threads_and_answers_only_when_asked(self):
        """FORKCHECK_PY_ATTACHABLE (forkcheck attach --env): no connection, no thread, no output;
        each process, a forked child too, holds its own two files; a listed thread asked with the
        signal writes its own line, and the program goes on as it was."""
        program, markers = self.program("""
            import os, sys, threading, time

            def worker(stop):
                stop.wait()  # <worker>

            stop = threading.Event()
            threads = [threading.Thread(target=worker, args=(stop,), name="w%d" % i)
                       for i in range(3)]
            for thread in threads:
                thread.start()
            pid = os.fork()
            if pid == 0:
                child_thread = threading.Thread(target=worker, args=(stop,), name="child-w")
                child_thread.start()
                sys.stdin.readline()
                stop.set()
                child_thread.join()
                os._exit(7)
            print(pid, len(os.listdir("/proc/self/task")), flush=True)
            sys.stdin.readline()
            stop.set()
            for thread in threads:
                thread.join()
            print("child", os.waitpid(pid, 0)[1] >> 8, flush=True)
        """)
        env = self.attachable_env()
        proc = subprocess.Popen([self.python, program], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        try:
            child, tasks = map(int, proc.stdout.readline().split())
            self.assertEqual(tasks, 4, "the main thread and three workers: no thread of ours")
            parent_files = self.wait_for(lambda: self.attachable_files(proc.pid), 10,
                                         "the parent's files")
            def child_files_with_its_thread():
                files = self.attachable_files(child)
                if len(files) < 2:
                    return None
                with open(files["threads"]) as threads:
                    return "child-w" in threads.read() and files

            child_files = self.wait_for(child_files_with_its_thread, 10, "the child's files")
            for pid in (proc.pid, child):
                self.assertFalse([link for link in self.descriptors(pid)
                                  if link.startswith("socket:")], "no connection")
            listed = {}
            for pid, files in ((proc.pid, parent_files), (child, child_files)):
                with open(files["threads"]) as threads:
                    lines = threads.read().splitlines()
                self.assertEqual(lines[0], "forkcheck-py-threads pid=%d signal=%d"
                                 % (pid, DUMP_SIGNAL))
                # "+TID START NAME": START, the thread's start time, as /proc says it.
                listed[pid] = {line.split(" ", 2)[2]: int(line[1:].split()[0])
                               for line in lines[1:]}
                for line in lines[1:]:
                    tid, start = map(int, line[1:].split()[:2])
                    with open("/proc/%d/task/%d/stat" % (pid, tid)) as stat:
                        self.assertEqual(int(stat.read().rsplit(")", 1)[1].split()[19]), start)
            self.assertEqual(sorted(listed[proc.pid]), ["w0", "w1", "w2"])
            self.assertIn("child-w", listed[child])  # its own, not the parent's
            self.assertNotEqual(os.stat(parent_files["dumps"]).st_ino,
                                os.stat(child_files["dumps"]).st_ino)
            for pid, files, name in ((proc.pid, parent_files, "w1"),
                                     (child, child_files, "child-w")):
                with open(files["dumps"], "rb") as dumps:
                    self.assertEqual(dumps.read(), b"", "nothing written until asked")
                    tgkill(pid, listed[pid][name], DUMP_SIGNAL)
                    text = self.wait_for(lambda: dumps.read(), 10, "a dump").decode()
                # (On 3.6 and 3.7 our wrapper of _bootstrap_inner is in it: forkcheck drops it.)
                self.assertIn('program.py", line %d in worker' % markers["worker"], text)
            out, err = proc.communicate(b"\n\n", timeout=30)
        finally:
            proc.kill()
            proc.wait()
        self.assertEqual(out.decode().strip(), "child 7")
        self.assertEqual(proc.returncode, 0, err.decode())
        # Only the program's own words (3.12 warns of its fork beside threads).
        self.assertNotIn(b"forkcheck_boot", err)

    def test_attachable_files_never_take_a_closed_stdio_number(self):
        """A program started with its stdio closed gets 0, 1 and 2 back from its own opens."""
        program, _ = self.program("""
            import os
            fds = [os.open(os.devnull, os.O_RDONLY) for _ in range(3)]
            os._exit(0 if fds == [0, 1, 2] else 10 + fds[0])
        """)
        env = self.attachable_env()
        result = subprocess.run(
            ["/bin/sh", "-c", 'exec "$0" "$1" <&- >&- 2>&-', self.python, program], env=env)
        self.assertEqual(result.returncode, 0, "its opens got %d, not 0" % (result.returncode - 10))

    def test_attachable_child_without_files_of_its_own_writes_none_of_its_parents(self):
        """A child forked at the descriptor limit cannot make its files: it lists nothing in its
        parent's, which still names the parent."""
        program, _ = self.program("""
            import os, resource, sys, threading, time
            soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
            resource.setrlimit(resource.RLIMIT_NOFILE, (64, hard))
            held = []
            try:
                while True:
                    held.append(os.open(os.devnull, os.O_RDONLY))
            except OSError:
                pass
            pid = os.fork()
            if pid == 0:
                for fd in held[:4]:
                    os.close(fd)  # room for a thread, not for the bootstrap's two files first
                # Alive a while: a thread that ended before its line was written is not listed.
                thread = threading.Thread(target=time.sleep, args=(0.5,), name="child-thread")
                thread.start()
                thread.join()
                os._exit(0)
            os.waitpid(pid, 0)
            for fd in held:
                os.close(fd)
            print("ready", flush=True)
            sys.stdin.readline()
        """)
        (pid, text), status = self.look_at_attachable(
            program, lambda pid: (pid, self.read_threads_file(pid)))
        self.assertTrue(text.startswith("forkcheck-py-threads pid=%d " % pid), text)
        self.assertNotIn("child-thread", text)
        self.assertEqual(status, 0)

    def test_attachable_threads_file_stays_bounded(self):
        """A program that starts threads all day keeps a file of its live ones."""
        program, _ = self.program("""
            import os, sys, threading

            gate = threading.Event()
            for i in range(4000):
                # Alive until start() has returned, so that each one is listed.
                thread = threading.Thread(target=gate.wait, name="short-%d" % i)
                thread.start()
                gate.set()
                thread.join()
                gate.clear()
            keep = threading.Event()
            last = threading.Thread(target=keep.wait, name="the-last-one")
            last.start()
            print("ready", flush=True)
            sys.stdin.readline()
            keep.set()
        """)
        text, status = self.look_at_attachable(program, self.read_threads_file)
        self.assertLessEqual(len(text.encode()), 65536)
        self.assertIn("the-last-one", text)
        self.assertNotIn("short-0\n", text)  # ended long ago: written afresh without it
        self.assertIn("short-3999\n", text)  # ... after the last time, and not since
        self.assertEqual(status, 0)

    def look_at_attachable(self, program, look):
        """Runs program with the attachable bootstrap; once it prints "ready", look(its pid);
        then lets it end (a line on its stdin). What look returned, and its exit status."""
        proc = subprocess.Popen([self.python, program], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, env=self.attachable_env())
        try:
            self.assertEqual(proc.stdout.readline(), b"ready\n")
            seen = look(proc.pid)
            proc.communicate(b"\n", timeout=30)
        finally:
            proc.kill()
            proc.wait()
        return seen, proc.returncode

    def read_threads_file(self, pid):
        with open(self.attachable_files(pid)["threads"]) as threads:
            return threads.read()

    @staticmethod
    def attachable_env():
        return dict(clean_env(), PYTHONPATH=BOOTSTRAP_DIR, FORKCHECK_PY_ATTACHABLE=str(DUMP_SIGNAL))

    def descriptors(self, pid):
        out = []
        for fd in os.listdir("/proc/%d/fd" % pid):
            try:
                out.append(os.readlink("/proc/%d/fd/%s" % (pid, fd)))
            except OSError:
                pass
        return out

    def test_start_method_default_and_the_programs_own_choice(self):
        default, _ = self.program("""
            import multiprocessing as mp

            if __name__ == "__main__":
                process = mp.Process(target=print)
                process.start()
                process.join()
                print(process.pid, mp.get_start_method())
        """, "default.py")
        stdout, processes = self.run_program(default, env=self.env(FORKCHECK_START_METHOD="spawn"))
        pid, method = stdout.split()
        self.assertEqual(method, "spawn")
        self.assertEqual(processes[int(pid)].hello["born"], "exec")

        own, line = self.program("""
            import json, multiprocessing as mp

            if __name__ == "__main__":
                mp.set_start_method("fork")  # <set>
                first = mp.Process(target=print)
                first.start()
                first.join()
                second = mp.get_context("fork").Process(target=print)  # <get>
                second.start()
                second.join()
                print(json.dumps([first.pid, second.pid]))
        """, "own.py")
        for force, born, overridden_by in (("0", "fork", None), ("1", "exec", "spawn")):
            env = self.env(FORKCHECK_START_METHOD="spawn", FORKCHECK_FORCE_START_METHOD=force)
            stdout, processes = self.run_program(own, env=env)
            workers = json.loads(stdout)
            self.assertEqual([processes[pid].hello["born"] for pid in workers], [born, born])
            main = processes[processes[workers[0]].hello["ppid"]]
            self.assertEqual([(e["method"], e["where"]["file"], e["where"]["line"],
                               e["overridden_by"]) for e in main.of("start_method")],
                             [("fork", own, line["set"], overridden_by),
                              ("fork", own, line["get"], overridden_by)])
            self.forkcheck.close()
            self.forkcheck = Forkcheck()

    # Never in the program's way

    def test_forkcheck_not_reading_does_not_hold_up_the_program(self):
        self.forkcheck.close()
        self.forkcheck = Forkcheck(reading=False)
        path, _ = self.program("""
            import multiprocessing as mp

            for _ in range(5000):
                mp.get_context("fork")  # one start_method event each: 4 times the socket's buffer
        """)
        # Held up would be for ever (nobody reads): the timeout is the test, not a duration.
        subprocess.run([self.python, path], env=self.env(), timeout=120, check=True)
        for connection in self.forkcheck.connections:  # what the kernel kept for us
            connection.sock.settimeout(5)
            connection.read_all()
        (events,) = [c for c in self.forkcheck.connections if c.hello()["role"] == "events"]
        stream = bytes(events.data)
        self.assertTrue(stream.endswith(b"\n"), "a half line at the end")
        lines = [json.loads(line.decode()) for line in stream.split(b"\n")[:-1]]
        self.assertEqual(lines[0]["ev"], "hello")
        self.assertGreater(len(lines), 100)
        self.assertLess(len(lines), 5000, "nothing was dropped: the test proves nothing")

    def test_descriptors_the_program_closed_and_reused_stay_its_own(self):
        path, _ = self.program("""
            import os, threading

            os.closerange(3, 256)  # as a daemon does, forkcheck's connections too
            read_end, write_end = os.pipe()  # the numbers the connections had
            threading.Thread(target=int).start()  # an event to send
            pid = os.fork()
            if pid == 0:
                os.write(write_end, b"child ")
                os._exit(0)
            os.waitpid(pid, 0)
            os.write(write_end, b"parent")
            os.close(write_end)
            print(os.read(read_end, 1 << 16).decode())
        """)
        stdout, processes = self.run_program(path)
        self.assertEqual(stdout.split(), ["child", "parent"])
        # The child's own connections, which it opened after the program closed the others.
        self.assertEqual(sorted(p.hello["born"] for p in processes.values()), ["exec", "fork"])

    def test_forkcheck_gone_leaves_the_program_as_it_was(self):
        path, _ = self.program("""
            import signal, sys, threading

            signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # as tools do: a broken pipe kills
            print("ready", flush=True)
            sys.stdin.readline()  # forkcheck is gone by now
            for _ in range(100):
                threading.Thread(target=int).start()
            raise SystemExit(7)
        """)
        program = subprocess.Popen([self.python, path], stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   env=self.env())
        self.assertEqual(program.stdout.readline(), b"ready\n")
        self.wait_for(lambda: len(self.forkcheck.connections) == 2, 30, "the connections")
        self.forkcheck.close()
        stdout, stderr = program.communicate(b"go\n", timeout=30)
        self.assertEqual((program.returncode, stdout, stderr), (7, b"", b""))

    def test_start_up_cost(self):
        """-c pass with the bootstrap (forkcheck listening) against without: medians of 20."""
        self.forkcheck.close()
        self.forkcheck = Forkcheck(reading=False)  # no reader threads competing for the CPUs
        kinds = ("without", "with", "attachable")
        walls, cpus = {kind: [] for kind in kinds}, {kind: [] for kind in kinds}
        kept = os.path.join(self.dir, "bytecode")  # compiled once, as forkcheck keeps it
        envs = {"with": self.env(FORKCHECK_PY_BYTECODE=kept), "without": clean_env(),
                "attachable": dict(clean_env(), PYTHONPATH=BOOTSTRAP_DIR,
                                   FORKCHECK_PY_ATTACHABLE=str(DUMP_SIGNAL),
                                   FORKCHECK_PY_BYTECODE=kept)}
        for _ in range(20):
            for kind in kinds:  # interleaved: the machine's load hits each alike
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                started = time.perf_counter()
                subprocess.run([self.python, "-c", "pass"], env=envs[kind], check=True)
                walls[kind].append((time.perf_counter() - started) * 1000)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpus[kind].append((after.ru_utime - before.ru_utime
                                   + after.ru_stime - before.ru_stime) * 1000)
        without, with_ = statistics.median(walls["without"]), statistics.median(walls["with"])
        # Each run beside the one just before it: steadier than a difference of medians when
        # the machine's load comes and goes.
        cost = statistics.median(b - a for a, b in zip(walls["without"], walls["with"]))
        print("\n    %s: -c pass %.1f ms without, %.1f ms with the bootstrap (+%.1f ms); "
              "CPU %.1f and %.1f ms" % (self.label, without, with_, cost,
                                          statistics.median(cpus["without"]),
                                          statistics.median(cpus["with"])),
              end=" ", file=sys.stderr)
        print("\n    %s: -c pass with the attachable bootstrap (forkcheck attach --env): "
              "+%.1f ms, CPU %.1f ms" % (
                  self.label,
                  statistics.median(b - a for a, b in zip(walls["without"], walls["attachable"])),
                  statistics.median(cpus["attachable"])),
              end=" ", file=sys.stderr)
        self.wait_for(lambda: len(self.forkcheck.connections) == 40, 30,
                      "two connections from each run with the bootstrap")
        # The figure is printed, not asserted: a busy machine makes any bound flaky. The bound
        # (at most 50 ms and 20 MiB) is checked by ci/bench-exec-cost.py.

    # torch

    def test_a_torch_that_fails_to_import_fails_as_without_us(self):
        fake = os.path.join(self.dir, "fake")
        os.makedirs(os.path.join(fake, "torch"))
        with open(os.path.join(fake, "torch", "__init__.py"), "w") as out:
            out.write("def set_num_threads(n): pass\n"
                      "def set_num_interop_threads(n): pass\n"
                      "from . import _C\n")
        with open(os.path.join(fake, "torch", "_C.py"), "w") as out:
            out.write("raise RuntimeError('module compiled against API version 0x10')\n")
        path, _ = self.program("""
            import sys
            sys.path.insert(0, sys.argv[1])
            import torch
        """)
        plain = subprocess.run([self.python, path, fake], stderr=subprocess.PIPE,
                               env=clean_env()).stderr.decode()
        self.assertIn("RuntimeError", plain)
        self.run_program(path, fake, expect_rc=1)  # and no frame of ours in its traceback
        self.assertEqual(self.stderr, plain)

    def test_torch_facts_and_thread_counts(self):
        self.need_torch()
        path, _ = self.program("""
            import os
            import torch

            def fork():
                pid = os.fork()
                if pid == 0:
                    os._exit(0)
                os.waitpid(pid, 0)

            fork()  # torch is told at the program's first import, fork or exit after its own
            torch.set_num_threads(2)
            torch.ones(1000, 1000).sum()
            fork()
            print(torch.__version__)
        """)
        stdout, processes = self.run_program(path)
        main = main_process(processes, path)
        torch_events = main.of("torch")
        self.assertEqual(len(torch_events), 2)
        self.assertEqual(torch_events[0]["version"], stdout.strip())
        self.assertEqual(torch_events[1]["num_threads"], 2)
        self.assertIn("ATen parallel backend", torch_events[1]["parallel_info"])
        self.assertIn(torch_events[1]["sharing_strategy"], ("file_descriptor", "file_system"))
        forks = main.of("fork")
        self.assertEqual([fork["torch"]["num_threads"] for fork in forks],
                         [torch_events[0]["num_threads"], 2])
        self.assertEqual(main.of("exit")[-1]["torch"]["num_threads"], 2)

    def test_torch_multiprocessing_and_dataloader_follow_the_default(self):
        self.need_torch()
        path, _ = self.program("""
            import json, os
            import torch
            import torch.multiprocessing as tmp
            from torch.utils.data import DataLoader, Dataset

            class Pids(Dataset):
                def __len__(self):
                    return 2

                def __getitem__(self, index):
                    return os.getpid()

            if __name__ == "__main__":
                process = tmp.Process(target=print)
                process.start()
                process.join()
                loader = DataLoader(Pids(), num_workers=1)
                print(json.dumps([process.pid] + sorted({int(pid) for pid in loader})))
        """)
        for method, born in (("spawn", "exec"), ("fork", "fork")):
            env = self.env(FORKCHECK_START_METHOD=method)
            stdout, processes = self.run_program(path, env=env, timeout=120)
            pids = json.loads(stdout)
            self.assertEqual(len(pids), 2)
            self.assertEqual([processes[pid].hello["born"] for pid in pids], [born, born], method)
            self.forkcheck.close()
            self.forkcheck = Forkcheck()


def clean_env():
    """The environment without anything of forkcheck's or Python's that would change a run."""
    return {key: value for key, value in os.environ.items()
            if not key.startswith(("FORKCHECK_", "PYTHON"))}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--interpreter", action="append",
                        help="the python to test (repeatable); default: every one found")
    parser.add_argument("--label", action="append",
                        help="only the interpreter of this label (pyenv_3.9, system; repeatable):"
                             " exit status 77 when none of them is on this machine")
    parser.add_argument("--labels", action="store_true",
                        help="print the labels of the interpreters looked for, and exit")
    args, unittest_args = parser.parse_known_args()
    if args.labels:
        print(";".join(label for label, _, _ in find_interpreters()))
        return True
    if args.interpreter:
        interpreters = [(path, path, "no " + path) for path in args.interpreter]
    else:
        interpreters = find_interpreters()
    if args.label:
        interpreters = [i for i in interpreters if i[0] in args.label]
        missing = [reason for _, path, reason in interpreters if path is None]
        if not interpreters or len(missing) == len(interpreters):
            print("SKIP: " + ("; ".join(missing) or "no interpreter labelled "
                              + ", ".join(args.label)))
            sys.exit(77)
    suite = unittest.TestSuite()
    loader = unittest.TestLoader()
    for label, path, reason in interpreters:
        name = "Bootstrap_" + re.sub(r"\W", "_", label)
        if path is None or not os.access(path, os.X_OK):
            case = type(name, (unittest.TestCase,), {"test_interpreter": skipped(reason)})
        else:
            case = type(name, (BootstrapChecks, unittest.TestCase),
                        {"python": path, "label": label})
        globals()[name] = case
        suite.addTests(loader.loadTestsFromTestCase(case))
    runner = unittest.TextTestRunner(verbosity=2, resultclass=TimedResult)
    if unittest_args:  # e.g. -k, or TestCase.test names: let unittest choose among them
        return unittest.main(module=__name__, argv=[sys.argv[0]] + unittest_args,
                             testRunner=runner, exit=False).result.wasSuccessful()
    return runner.run(suite).wasSuccessful()


class TimedResult(unittest.TextTestResult):
    """Each test's time after its verdict, and at the end each interpreter's total and the
    slowest tests: where the suite's time goes, said by every run."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.times = []
        self._started = None

    def startTest(self, test):
        self._started = time.monotonic()
        super().startTest(test)

    def stopTest(self, test):
        took = time.monotonic() - self._started
        self.times.append((took, test.id()))
        self.stream.write("    (%.1f s)\n" % took)
        super().stopTest(test)

    def printErrors(self):
        super().printErrors()
        per_class = {}
        for took, test_id in self.times:
            label = test_id.split(".")[-2]
            per_class[label] = per_class.get(label, 0) + took
        self.stream.write("\nTime per interpreter: %s\n" % ", ".join(
            "%s %.1f s" % item for item in sorted(per_class.items())))
        self.stream.write("Slowest: %s\n" % "; ".join(
            "%s %.1f s" % (test_id.split(".", 1)[-1], took)
            for took, test_id in sorted(self.times, reverse=True)[:8]))


def process_state(pid):
    with open("/proc/%d/stat" % pid) as stat:
        return stat.read().rsplit(") ", 1)[1][0]


def skipped(reason):
    @unittest.skip(reason)
    def test_interpreter(self):
        pass
    return test_interpreter


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
