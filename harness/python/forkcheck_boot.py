"""forkcheck's bootstrap: tells forkcheck what happens inside a Python process, as it happens.

sitecustomize.py starts it in every Python process of the program forkcheck runs. It opens two
connections to forkcheck's channel (FORKCHECK_PY_CHANNEL), again in every forked child:

- "events": one JSON object per line: hello, thread, fork, exception, child_exit, torch,
  start_method, exit (and argv on Python 3.6, whose sys.argv comes after the hello);
- "dumps": its hello line, with a copy of an anonymous file (memfd, or O_TMPFILE) that
  faulthandler writes into: one thread's own Python stack when forkcheck sends
  FORKCHECK_PY_SIGNAL to that thread (tgkill), and a crash's Python stack. A file, since
  faulthandler of 3.6 to 3.8 writes one character at a time, and a non-blocking socket refuses
  the rest of a stack after a few hundred of those (each write costs a buffer of its own); where
  no such file can be made, faulthandler writes to the connection itself.

Stacks on demand are read only where reading them is safe while the program runs: a thread's own
frames by that thread (faulthandler with all_threads=False: nothing else changes them while it
is in the handler; forkcheck asks only threads it has seen asleep for a while without a wake,
one at a time: on 3.11 to 3.13 a thread interrupted as a call returns to C dies of its own dump),
and every thread's frames by the main thread under the GIL (sys._current_frames(), in a
Python-level handler of FORKCHECK_PY_STACKS_SIGNAL, answered as a "stacks" event at the main
thread's next bytecode). Never faulthandler's all-threads dump, which reads other threads' frames without the
GIL while they run and change them: made for a process that is dying, it can crash one that is
not.

It also gives multiprocessing the default start method FORKCHECK_START_METHOD (and, with
FORKCHECK_FORCE_START_METHOD=1, imposes it on the program's own choices).

The program must not notice it: no output, no thread, no signal handler but faulthandler's and
the stacks handler (installed with SA_RESTART: it interrupts no system call), a few
milliseconds at start (so only modules that cost next to nothing are imported here; json,
socket, threading and sysconfig each cost several), no exception of ours ever reaching it, and
no frame of ours in the tracebacks it prints (but where a call we wrap fails by itself: a
Thread.start() that cannot start a thread, get_context() of an unknown method).
"""

import atexit
import faulthandler
import itertools
import os
import struct
import sys
import _signal
import _socket
import _thread

_CONNECT_TIMEOUT_S = 1  # forkcheck accepts at once; this only bounds a stuck forkcheck
_FINISH_LINE_TIMEOUT_S = 0.5  # for the rest of a line the socket took only part of
_LOCK_TIMEOUT_S = 1.0
_MESSAGE_CAP = 4096  # characters of an exception's message
_FRAMES_CAP = 100  # frames in one stack: the outermost 20 and the innermost 80
_OUTER_FRAMES_KEPT = 20
_MSG_NOSIGNAL = getattr(_socket, "MSG_NOSIGNAL", 0)  # EPIPE, not SIGPIPE, once forkcheck is gone
_START_METHODS = ("fork", "spawn", "forkserver")

_address = None  # the channel's address, for a forked child's own connections
_events = None  # the events _Channel
_dumps = None  # the dumps connection
_dumps_identity = None
_dump_target = None  # the descriptor faulthandler writes to: a file, or the connection's
_dump_target_identity = None
_dump_signal = None
_stacks_signal = None
_crash_dumps = None
_fork_counter = itertools.count(1)
_forking = {}  # thread ident -> (seq, thread name) of the fork that thread is making
_main_ident = None
_main_native_id = None
_told_main_exception = None  # its id only: holding it would keep its frames' locals alive
_argv_pending = False  # Python 3.6 sets sys.argv only after site.py
_torch_told = False
_thread_started_at = {}  # Thread -> frame of its start(): weak keys once threading is imported
_process_targets = {}  # multiprocessing Process -> its target: the same, with multiprocessing


# ---------------------------------------------------------------------------------------------
# Sending


def _identity(fd):
    """Tells our socket from what the program may have put under its number after closing it
    (a daemon closes every descriptor): a socket's inode number is its own."""
    try:
        status = os.fstat(fd)
    except OSError:
        return None
    return status.st_dev, status.st_ino


class _Channel:
    """The events connection: whole lines or nothing, never holding up the program for long."""

    def __init__(self, sock):
        self._sock = sock
        self._identity = sock and _identity(sock.fileno())
        self._lock = _thread.allocate_lock()
        self._sender = None  # ident of the thread inside send()
        self._deferred = []  # lines a signal handler of ours gave while its thread was in send()

    def _ours(self):
        return self._sock is not None and _identity(self._sock.fileno()) == self._identity

    def send(self, line):
        if not self._ours():
            self.release()
            return
        me = _thread.get_ident()
        if self._sender == me:
            # A signal handler (the program's, or our stacks answer) re-entered us mid-send:
            # sent once the line under way is whole, never waiting on our own lock.
            self._deferred.append(line)
            return
        if not self._lock.acquire(True, _LOCK_TIMEOUT_S):
            return
        self._sender = me
        try:
            self._send_whole(line)
        finally:
            # Released before _sender is cleared: a handler between the two defers its line,
            # and a handler after them sends its own.
            self._lock.release()
            self._sender = None
        if self._deferred:
            lines, self._deferred = self._deferred, []
            for deferred in lines:
                self.send(deferred)

    def _send_whole(self, line):
        try:
            sent = self._sock.send(line, _MSG_NOSIGNAL)
        except BlockingIOError:
            return  # forkcheck is not reading: drop this line, the stream stays whole
        except OSError:
            self.release()  # forkcheck is gone
            return
        if sent == len(line):
            return
        # Linux takes a line this short whole or not at all; should it ever take part of one,
        # the line must be finished, or the stream is corrupt and is given up.
        try:
            self._sock.settimeout(_FINISH_LINE_TIMEOUT_S)
            self._sock.sendall(line[sent:], _MSG_NOSIGNAL)
            self._sock.setblocking(False)
        except BaseException as error:
            self.release()
            if not isinstance(error, OSError):
                raise

    def release(self):
        """Closes this process's descriptor, without shutdown(), which would end the connection
        for a parent or child that shares it; one the program closed and reused stays its own."""
        if self._sock is not None:
            if self._ours():
                self._sock.close()
            else:
                self._sock.detach()
            self._sock = None


_JSON_ESCAPES = {code: "\\u%04x" % code for code in range(0x20)}
_JSON_ESCAPES.update({ord('"'): '\\"', ord("\\"): "\\\\"})


def _json(value):
    """JSON text of a value made of dicts, lists, strings, numbers, bools and None (the json module
    would cost about 5 ms at every start: it imports re)."""
    if isinstance(value, str):
        return '"' + value.translate(_JSON_ESCAPES) + '"'
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(int(value))  # an IntEnum (a signal number) as a plain number
    if isinstance(value, float):
        return repr(value) if value - value == 0 else "null"  # JSON has no inf or nan
    if isinstance(value, dict):
        return "{" + ",".join(_json(str(k)) + ":" + _json(v) for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(map(_json, value)) + "]"
    return _json(str(value))


def _line(obj):
    # "replace": a file name's undecodable bytes (lone surrogates) must not break the line.
    return (_json(obj) + "\n").encode("utf-8", "replace")


def _emit(ev, **fields):
    fields = dict(ev=ev, **fields)
    _events.send(_line(fields))


def _quietly(function):
    """Our own failures never reach the program."""

    def quiet(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except Exception:
            return None

    return quiet


def _dressed_as(original, wrapper):
    """wrapper with original's name, doc and module, as functools.wraps would do (importing
    functools costs up to a few ms on old versions)."""
    for attribute in ("__module__", "__name__", "__qualname__", "__doc__"):
        try:
            setattr(wrapper, attribute, getattr(original, attribute))
        except (AttributeError, TypeError):
            pass
    wrapper.__wrapped__ = original
    return wrapper


# ---------------------------------------------------------------------------------------------
# Frames and names


def _frame(frame):
    return {"file": frame.f_code.co_filename, "line": frame.f_lineno,
            "function": frame.f_code.co_name}


def _capped(frames, event):
    """Keeps the outermost and innermost frames of a very deep stack (a RecursionError)."""
    if len(frames) > _FRAMES_CAP:
        event["frames_omitted"] = len(frames) - _FRAMES_CAP
        frames = frames[:_OUTER_FRAMES_KEPT] + frames[_OUTER_FRAMES_KEPT - _FRAMES_CAP:]
    return frames


def _stack(frame):
    """The frames from the outermost one to frame, outermost first, ours left out."""
    frames = []
    while frame is not None:
        if frame.f_globals is not globals():
            frames.append(_frame(frame))
        frame = frame.f_back
    frames.reverse()
    return frames


def _wrappers_caller():
    """The frame that called the wrapper calling this; None where no Python code did (atexit at
    the interpreter's end, a thread a C library started): _getframe would raise there."""
    try:
        return sys._getframe(2)
    except ValueError:
        return None


def _calling_frame(frame, passing_through):
    """From frame outwards, the first frame of a module neither ours nor one of passing_through:
    the code that called into those modules."""
    while frame is not None and (frame.f_globals is globals()
                                 or frame.f_globals.get("__name__") in passing_through):
        frame = frame.f_back
    return frame


def _traceback_frames(traceback):
    import linecache  # only now: an exception is being told
    frames = []
    while traceback is not None:
        code = traceback.tb_frame.f_code
        source = linecache.getline(code.co_filename, traceback.tb_lineno or 0,
                                   traceback.tb_frame.f_globals).strip()
        frames.append({"file": code.co_filename, "line": traceback.tb_lineno,
                       "function": code.co_name, "code": source or None})
        traceback = traceback.tb_next
    return frames


def _qualified_name(obj):
    """'module.Qualified.name' of a function, method or class; builtins' without the module."""
    functools = sys.modules.get("functools")
    while functools is not None and isinstance(obj, functools.partial):
        obj = obj.func
    name = getattr(obj, "__qualname__", None) or type(obj).__qualname__
    module = getattr(obj, "__module__", None)
    return name if module in (None, "builtins") else "%s.%s" % (module, name)


def _target(obj, base_run):
    """What a Thread or Process runs: its target, or its class's own run()."""
    run = type(obj).run
    if run is not base_run:
        return _qualified_name(run)
    target = getattr(obj, "_target", None)
    return None if target is None else _qualified_name(target)


def _thread_name():
    threading = sys.modules.get("threading")
    return threading.current_thread().name if threading else "MainThread"


def _process_name():
    process = sys.modules.get("multiprocessing.process")
    return process.current_process().name if process else "MainProcess"


def _start_method():
    multiprocessing = sys.modules.get("multiprocessing")
    get_start_method = getattr(multiprocessing, "get_start_method", None)
    return get_start_method(allow_none=True) if get_start_method else None


@_quietly
def _torch_facts():
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    torch_multiprocessing = sys.modules.get("torch.multiprocessing")
    return {
        "version": str(torch.__version__),
        "num_threads": torch.get_num_threads(),
        "num_interop_threads": torch.get_num_interop_threads(),
        # All of it: 13 short lines, 40 us; the OpenMP runtime, thread counts, OMP_NUM_THREADS.
        "parallel_info": torch.__config__.parallel_info().strip(),
        "sharing_strategy": (torch_multiprocessing.get_sharing_strategy()
                             if torch_multiprocessing else None),
    }


# ---------------------------------------------------------------------------------------------
# Connecting


def _channel_address(value):
    return "\0" + value[1:] if value.startswith("@") else value


def _connect():
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)  # close-on-exec by default
    try:
        # A blocking connect waits for room in forkcheck's backlog; this bounds the wait.
        sock.setsockopt(_socket.SOL_SOCKET, _socket.SO_SNDTIMEO,
                        struct.pack("ll", _CONNECT_TIMEOUT_S, 0))
        sock.connect(_address)
        return sock
    except OSError:
        sock.close()
        return None


def _dump_file():
    """An anonymous file for faulthandler to write into, close-on-exec, or None."""
    memfd_create = getattr(os, "memfd_create", None)  # 3.8, Linux
    if memfd_create is not None:
        try:
            return _above_stdio(memfd_create("forkcheck-dumps", getattr(os, "MFD_CLOEXEC", 1)))
        except OSError:
            pass
    o_tmpfile = getattr(os, "O_TMPFILE", None)  # Linux
    if o_tmpfile is not None:
        for folder in ("/dev/shm", "/tmp"):
            try:
                # forkcheck reads it
                return _above_stdio(os.open(folder, o_tmpfile | os.O_RDWR, 0o600))
            except OSError:
                pass
    return None


def _open_dumps():
    """The dumps connection, its hello sent with a copy of faulthandler's file (SCM_RIGHTS), and
    the descriptor faulthandler is to write to: that file, else the connection itself, made
    non-blocking so that a dump forkcheck does not read is cut short rather than hanging a signal
    handler. (None, None) when forkcheck cannot be reached."""
    sock = _connect()
    if sock is None:
        return None, None
    target = _dump_file()
    hello = _line({"ev": "hello", "role": "dumps", "pid": os.getpid(), "file": target is not None})
    try:
        if target is not None:
            rights = [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, struct.pack("i", target))]
            if sock.sendmsg([hello], rights, _MSG_NOSIGNAL) != len(hello):
                raise OSError("the dumps hello went in part")
        else:
            sock.sendall(hello, _MSG_NOSIGNAL)
        sock.setblocking(False)
    except OSError:
        sock.close()
        if target is not None:
            os.close(target)
        return None, None
    return sock, target if target is not None else sock.fileno()


def _open_events():
    sock = _connect()
    if sock is not None:
        sock.setblocking(False)
    return sock


def _own_native_id():
    """The calling thread's kernel id: Python 3.8's get_native_id(), or on 3.6 and 3.7 (Linux
    3.17 and later) the name of /proc/thread-self; None elsewhere."""
    if hasattr(_thread, "get_native_id"):
        return _thread.get_native_id()
    try:
        return int(os.readlink("/proc/thread-self").rsplit("/", 1)[-1])
    except (OSError, ValueError):
        return None


def _native_id_of(thread):
    """A Thread's kernel id: Thread.native_id (3.8), or what our _bootstrap_inner noted."""
    native_id = getattr(thread, "native_id", None)
    return native_id if native_id is not None else getattr(thread, "_forkcheck_native_id", None)


def _hello(born, thread_name, fork_seq=None):
    fields = {"role": "events", "pid": os.getpid(), "ppid": os.getppid(), "born": born}
    if born == "fork":
        fields["fork_seq"] = fork_seq
    fields.update(
        # The thread this process began with (a fork child's: the one that forked), which
        # names it in the dumps (faulthandler gives idents only).
        main_thread={"ident": _thread.get_ident(), "name": thread_name,
                     "native_id": _own_native_id()},
        python={"version": "%d.%d.%d" % sys.version_info[:3],
                "implementation": sys.implementation.name, "executable": sys.executable},
        # Python 3.6 sets sys.argv only after site.py: the "argv" event follows then.
        argv=getattr(sys, "argv", None),
        cwd=_cwd(),
        dump_signal=_dump_signal,
        stacks_signal=_stacks_signal,
        crash_dumps=_crash_dumps,
        paths=_paths(),
        start_method=_start_method(),
    )
    test = os.environ.get(_PYTEST_TEST)  # a child starts in its parent's test
    if test:
        fields["test"] = {"name": test, "by": "pytest"}
    _emit("hello", **fields)


def _cwd():
    try:
        return os.getcwd()
    except OSError:  # removed
        return None


def _paths():
    """Where the standard library and installed packages are, to tell the program's own frames
    from theirs. Not from sysconfig: it costs 3 to 7 ms on 3.12 and 3.13; and on Debian its
    purelib (/usr/local/lib/python3.X/dist-packages) misses /usr/lib/python3/dist-packages,
    hence site_packages: every one on sys.path. purelib and platlib are its first, as
    sysconfig's are with pyenv's, a venv's and Debian's Pythons."""
    stdlib = os.path.dirname(os.__file__)
    dynload = [entry for entry in sys.path if os.path.basename(entry) == "lib-dynload"]
    site_packages = [entry for entry in sys.path
                     if os.path.basename(entry) in ("site-packages", "dist-packages")]
    first = site_packages[0] if site_packages else None
    return {"stdlib": stdlib, "platstdlib": os.path.dirname(dynload[0]) if dynload else stdlib,
            "purelib": first, "platlib": first, "site_packages": site_packages}


def _catch_up():
    """Tells what becomes known only as the program runs on, at its next import, fork or exit:
    its sys.argv on Python 3.6, and torch once imported. Nothing where nothing is told (the
    attachable bootstrap: torch is neither asked nor wrapped)."""
    if _events is None:
        return
    if _argv_pending:
        _tell_argv()
    _notice_torch()


@_quietly
def _tell_argv():
    global _argv_pending
    if hasattr(sys, "argv"):
        _argv_pending = False
        _emit("argv", argv=sys.argv)


def _serve_dumps():
    """faulthandler writes to the dumps connection: a thread's own stack when forkcheck signals
    that thread, and a crash's stack, unless the program enabled faulthandler before us
    (-X faulthandler, PYTHONFAULTHANDLER): its crash stacks then go where it said."""
    global _dump_signal, _crash_dumps
    try:
        signal_number = int(os.environ["FORKCHECK_PY_SIGNAL"])
        # Chained to a handler the process already has; never to the default action, which
        # for a real-time signal is to die.
        chain = _signal.getsignal(signal_number) not in (_signal.SIG_DFL, _signal.SIG_IGN)
        # all_threads=False: the thread that gets the signal writes its own frames, which
        # nothing else can change while it is in the handler (never other threads' frames).
        faulthandler.register(signal_number, file=_dump_target, all_threads=False, chain=chain)
        _dump_signal = signal_number
    except (KeyError, ValueError, OSError, RuntimeError):
        pass  # no signal given, or not one that can be caught
    if faulthandler.is_enabled():
        _crash_dumps = "program"
    else:
        faulthandler.enable(file=_dump_target, all_threads=True)
        _crash_dumps = "dumps"


def _serve_stacks():
    """Every thread's stack, taken by the main thread under the GIL when forkcheck sends
    FORKCHECK_PY_STACKS_SIGNAL: a Python-level handler, so it runs between two bytecodes, where
    sys._current_frames() is safe whatever the other threads do. SA_RESTART (siginterrupt
    False): the signal interrupts no system call of the program; a main thread asleep in one
    answers when it next runs Python (in time.sleep() or select() at once, since Python resumes
    them after the handler; in a lock or a read only once that returns)."""
    global _stacks_signal
    try:
        signal_number = int(os.environ["FORKCHECK_PY_STACKS_SIGNAL"])
        if _signal.getsignal(signal_number) not in (_signal.SIG_DFL, None):
            return  # the program's own (or ignored): left alone
        _signal.signal(signal_number, _answer_stacks)
        _signal.siginterrupt(signal_number, False)
        _stacks_signal = signal_number
    except (KeyError, ValueError, OSError, RuntimeError):
        pass  # none given, not one that can be caught, or not the main thread


def _answer_stacks(signal_number, frame):
    try:
        _send_stacks()
    except Exception:
        pass  # never into the program


def _send_stacks():
    threading = sys.modules.get("threading")
    known = {}
    if threading is not None:
        # A plain dict read under the GIL: no lock of threading's is taken here, since the
        # program may hold one at the instant it was interrupted.
        for thread in list(getattr(threading, "_active", {}).values()):
            known[thread.ident] = thread
    threads = []
    for ident, top in sys._current_frames().items():
        thread = known.get(ident)
        if thread is not None:
            name, native_id = thread.name, _native_id_of(thread)
        elif ident == _main_ident:
            name, native_id = "MainThread", _main_native_id
        else:
            name, native_id = None, None
        entry = {"ident": ident, "name": name, "native_id": native_id}
        entry["frames"] = _capped(_stack(top), entry)
        threads.append(entry)
    _emit("stacks", threads=threads)


def start():
    """Connects to forkcheck and installs the hooks; a channel that cannot be reached leaves the
    process as it was."""
    global _address, _events, _dumps, _dumps_identity, _dump_target, _dump_target_identity
    global _main_ident, _main_native_id, _argv_pending
    _address = _channel_address(os.environ["FORKCHECK_PY_CHANNEL"])
    events = _open_events()
    dumps, target = _open_dumps() if events is not None else (None, None)
    if dumps is None:
        if events is not None:
            events.close()
        return
    _dumps, _dump_target = dumps, target
    _events = _Channel(events)
    _dumps_identity = _identity(_dumps.fileno())
    _dump_target_identity = _identity(_dump_target)
    _main_ident = _thread.get_ident()
    _main_native_id = _own_native_id()
    _argv_pending = not hasattr(sys, "argv")
    _serve_dumps()
    _serve_stacks()
    _hello("exec", "MainThread")
    _watch_forks()
    _watch_main_thread_and_exit()
    _watch_os_exit()
    _watch_signals_sent()
    _watch_signal_handlers()
    _watch_pytest_test()
    _after_import.install()


# ---------------------------------------------------------------------------------------------
# Attachable: Python frames for `forkcheck attach`, nothing said until it asks

_THREADS_FILE_CAP = 65536  # bytes: past it the threads file is written afresh, live ones only
_attach_signal = None
_attach_chain = False  # faulthandler chains to the program's own handler of the signal
_threads_file = None  # "forkcheck-py-threads": a header, then "+TID START NAME" lines
_threads_file_identity = None
_threads_file_pid = None  # the process whose files they are (a child without its own: not ours)
_threads_file_size = 0
_threads_file_cap = _THREADS_FILE_CAP
_threads_lock = None


def start_attachable():
    """FORKCHECK_PY_ATTACHABLE=SIGNAL (the lines `forkcheck attach --env` prints for a job
    script). Nothing is sent anywhere and no thread runs: two anonymous files are made, which
    forkcheck attach finds by name through /proc/PID/fd, and each Python thread it asks writes
    its own frames with faulthandler (all_threads=False), as under exec:
    - "forkcheck-py-dumps": what faulthandler writes, on SIGNAL;
    - "forkcheck-py-threads": "forkcheck-py-threads pid=PID signal=SIGNAL", then "+TID START
      NAME" as each Python thread starts (START: the kernel's start time of that thread, so that
      an id the kernel gave again to another thread is never taken for it), so that no other
      thread is asked (a signal can end another library's wait: its poll() returns EINTR).
    A forked child makes its own. Crash dumps stay as the program set them."""
    global _attach_signal, _attach_chain, _threads_lock
    signal_number = int(os.environ["FORKCHECK_PY_ATTACHABLE"])
    # Chained to a handler the process already has; never to the default action, which for a
    # real-time signal is to die.
    _attach_chain = _signal.getsignal(signal_number) not in (_signal.SIG_DFL, _signal.SIG_IGN)
    _attach_signal = signal_number
    _threads_lock = _thread.allocate_lock()
    if not _attachable_files():
        return
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_attachable_child)
    else:  # Python 3.6
        os.fork = _forking_call(os.fork, after_in_child=_attachable_child)
        os.forkpty = _forking_call(os.forkpty, after_in_child=_attachable_child)
    _AfterImport({"threading": _list_threads}).install()


def _above_stdio(fd):
    """fd, moved to 3 or above: a program that closed its stdio must get 0, 1 and 2 back when it
    opens files, never find ours there (its prints would go into our file)."""
    if fd is None or fd > 2:
        return fd
    import fcntl  # rare: only where the program started with its stdio closed
    try:
        return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    finally:
        os.close(fd)


def _named_file(name):
    """An anonymous file that /proc/PID/fd shows by `name`, close-on-exec, at 3 or above, or None:
    a memfd ("/memfd:NAME"), else (Python 3.6, 3.7) a file made and removed at once
    ("/dev/shm/NAME.PID.N (deleted)")."""
    memfd_create = getattr(os, "memfd_create", None)  # 3.8, Linux
    if memfd_create is not None:
        try:
            return _above_stdio(memfd_create(name, getattr(os, "MFD_CLOEXEC", 1)))
        except OSError:
            pass
    for folder in ("/dev/shm", "/tmp"):
        for attempt in range(8):
            path = "%s/%s.%d.%d" % (folder, name, os.getpid(), attempt)
            try:
                fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
            except FileExistsError:
                continue
            except OSError:
                break
            try:
                os.unlink(path)
                return _above_stdio(fd)
            except OSError:
                os.close(fd)
                return None
    return None


def _attachable_files():
    """This process's two files, faulthandler registered on the dumps one (again in a forked
    child: that changes its file only, the handler it chains to stays the first one's). The
    process is left as it was when either cannot be made."""
    global _dump_target, _dump_target_identity, _threads_file, _threads_file_identity
    global _threads_file_size, _threads_file_pid, _threads_file_cap, _dump_signal
    dumps = _named_file("forkcheck-py-dumps")
    threads = _named_file("forkcheck-py-threads") if dumps is not None else None
    try:
        if threads is None:
            raise OSError("no file")
        header = "forkcheck-py-threads pid=%d signal=%d\n" % (os.getpid(), _attach_signal)
        _threads_file_size = os.write(threads, header.encode())
        faulthandler.register(_attach_signal, file=dumps, all_threads=False, chain=_attach_chain)
    except (OSError, ValueError, RuntimeError):
        for fd in (dumps, threads):
            if fd is not None:
                os.close(fd)
        return False
    inherited = [(_dump_target, _dump_target_identity), (_threads_file, _threads_file_identity)]
    _dump_target, _dump_target_identity = dumps, _identity(dumps)
    _threads_file, _threads_file_identity = threads, _identity(threads)
    _threads_file_pid, _threads_file_cap = os.getpid(), _THREADS_FILE_CAP
    _dump_signal = _attach_signal
    for fd, identity in inherited:  # the parent's, unless the program reused the number
        if fd is not None and _identity(fd) == identity:
            os.close(fd)
    return True


@_quietly
def _attachable_child():
    global _threads_lock
    _threads_lock = _thread.allocate_lock()  # may have been copied held by a thread not here
    # A child that could not make its own files lists nothing (_list_thread: they are its
    # parent's) and is never asked (their header names the parent). faulthandler's registration
    # is left as it is: unregistering would put back the handler of the process's start, over one
    # the program installed since.
    if _attachable_files():
        _list_thread(_own_native_id(), _forking_thread_name())


def _forking_thread_name():
    threading = sys.modules.get("threading")
    if threading is None:
        return "MainThread"
    # A plain dict read: threading's own locks may have been copied held.
    thread = getattr(threading, "_active", {}).get(_thread.get_ident())
    return thread.name if thread is not None else None


def _list_threads(threading):
    """Each Python thread's OS id goes into the threads file when it has started: told by
    start() (3.8: Thread.native_id), or noted by the thread itself (3.6, 3.7)."""
    if hasattr(threading.Thread, "native_id"):
        def make_start(start):
            def listed_start(self):
                start(self)
                _list_thread(self.native_id, self.name)

            return listed_start

        _patch(threading.Thread, "start", make_start)
    else:
        def make_bootstrap_inner(bootstrap_inner):
            def listed_bootstrap_inner(self):
                self._forkcheck_native_id = _own_native_id()
                _list_thread(self._forkcheck_native_id, self.name)
                return bootstrap_inner(self)

            return listed_bootstrap_inner

        _patch(threading.Thread, "_bootstrap_inner", make_bootstrap_inner)


def _thread_line(native_id, name):
    """'+TID START NAME': START, the thread's start time in the kernel's clock ticks (field 22 of
    /proc/self/task/TID/stat), tells this thread from a later one given the same id."""
    try:
        with open("/proc/self/task/%d/stat" % native_id, "rb") as stat:
            start = int(stat.read().rsplit(b")", 1)[1].split()[19])
    except (OSError, ValueError, IndexError):
        return None  # ended already, or no /proc: not listed, never asked
    return "+%d %d %s\n" % (native_id, start, str(name).replace("\n", " "))


@_quietly
def _list_thread(native_id, name):
    """Its line in the threads file; at the file's cap, the file written afresh with the threads
    alive now (a program that starts threads all day keeps a file of its live ones)."""
    global _threads_file_size, _threads_file_cap
    if native_id is None or _threads_file is None or os.getpid() != _threads_file_pid:
        return  # no file, or its parent's (a child that could not make its own)
    if _identity(_threads_file) != _threads_file_identity:
        return  # the program closed it and reused the number
    line = _thread_line(native_id, name)
    if line is None or not _threads_lock.acquire(True, _LOCK_TIMEOUT_S):
        return
    try:
        data = line.encode("utf-8", "replace")
        if _threads_file_size + len(data) <= _threads_file_cap:
            _threads_file_size += os.write(_threads_file, data)
            return
        text = "forkcheck-py-threads pid=%d signal=%d\n" % (os.getpid(), _attach_signal)
        threading = sys.modules.get("threading")
        for thread in list(getattr(threading, "_active", {}).values()):
            tid = _native_id_of(thread)
            if tid is not None and tid != native_id:
                text += _thread_line(tid, thread.name) or ""
        data = (text + line).encode("utf-8", "replace")
        # Written over the old text before it is cut to length: a reader, or a write that fails,
        # never finds the file without its header.
        os.pwrite(_threads_file, data, 0)
        os.ftruncate(_threads_file, len(data))
        os.lseek(_threads_file, len(data), os.SEEK_SET)
        _threads_file_size = len(data)
        # Room to grow past what is alive now: not a rewrite at every start.
        _threads_file_cap = max(_THREADS_FILE_CAP, 2 * len(data))
    finally:
        _threads_lock.release()


# ---------------------------------------------------------------------------------------------
# Forks


@_quietly
def _before_fork():
    _catch_up()
    me = _thread.get_ident()
    seq = next(_fork_counter)
    event = {"seq": seq}
    event["stack"] = _capped(_stack(sys._getframe()), event)
    threading = sys.modules.get("threading")
    threads = threading.enumerate() if threading else []
    # Not current_thread(): from a thread threading does not know, it would add one.
    thread_name = next((thread.name for thread in threads if thread.ident == me),
                       "MainThread" if me == _main_ident else None)
    _forking[me] = seq, thread_name  # for the child, which must not ask threading (below)
    event.update(
        thread_name=thread_name,
        threads=[{"ident": thread.ident, "native_id": _native_id_of(thread),
                  "name": thread.name, "daemon": thread.daemon,
                  "started_at": _thread_started_at.get(thread)}
                 for thread in threads if thread.ident != me],
        native_threads=_native_threads(len(threads) or 1),
        torch=_torch_facts(),
        start_method=_start_method(),
    )
    _emit("fork", **event)


def _native_threads(python_threads):
    """OS threads beyond the Python ones: an OpenMP or BLAS pool the program's libraries run."""
    try:
        return max(len(os.listdir("/proc/self/task")) - python_threads, 0)
    except OSError:
        return None


@_quietly
def _after_fork_in_parent():
    _forking.pop(_thread.get_ident(), None)


@_quietly
def _after_fork_in_child():
    """The child gets its own connections before it says anything: it must never write on its
    parent's, and our lock may have been copied held by a thread the child does not have (so
    may threading's own, until its after-fork hook, which may come after ours, renews them)."""
    global _events, _fork_counter, _main_ident, _main_native_id
    fork_seq, thread_name = _forking.get(_thread.get_ident(), (None, None))
    _forking.clear()
    _fork_counter = itertools.count(1)
    _main_ident = _thread.get_ident()
    _main_native_id = _own_native_id()
    inherited, _events = _events, _Channel(_open_events())
    inherited.release()
    _adopt_dumps()
    _hello("fork", thread_name, fork_seq)


def _adopt_dumps():
    """The child's own dumps connection and file, each under the inherited descriptor (the one
    faulthandler writes to, whoever registered it; /dev/null when forkcheck cannot be reached),
    so that the child never writes into its parent's. A descriptor the program closed, and may
    have reused, stays its own."""
    global _dumps_identity, _dump_target_identity
    own, own_target = _open_dumps()
    separate = _dump_target != _dumps.fileno()  # a file, beside the connection
    if separate and _identity(_dump_target) == _dump_target_identity:
        replacement = own_target if own is not None else os.open(os.devnull, os.O_WRONLY)
        os.dup2(replacement, _dump_target, inheritable=False)
        _dump_target_identity = _identity(_dump_target)
        if own is None or own_target != own.fileno():
            os.close(replacement)
    elif own is not None and own_target != own.fileno():
        os.close(own_target)
    if _identity(_dumps.fileno()) == _dumps_identity:
        replacement = own.fileno() if own is not None else os.open(os.devnull, os.O_WRONLY)
        os.dup2(replacement, _dumps.fileno(), inheritable=False)
        _dumps_identity = _identity(_dumps.fileno())
        if not separate:
            _dump_target_identity = _dumps_identity
        if own is None:
            os.close(replacement)
    if own is not None:
        own.close()


def _forking_call(fork, before=None, after_in_parent=None, after_in_child=None):
    """os.fork or os.forkpty told to us as os.register_at_fork would (Python 3.6): exec's hooks,
    unless others are given."""
    if after_in_child is None:
        before, after_in_parent, after_in_child = (_before_fork, _after_fork_in_parent,
                                                   _after_fork_in_child)

    def forking(*args):
        if before is not None:
            before()
        try:
            result = fork(*args)
        except BaseException:
            if after_in_parent is not None:
                after_in_parent()
            raise
        pid = result[0] if isinstance(result, tuple) else result
        if pid:
            if after_in_parent is not None:
                after_in_parent()
        else:
            after_in_child()
        return result

    return _dressed_as(fork, forking)


def _watch_forks():
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent,
                            after_in_child=_after_fork_in_child)
    else:
        os.fork = _forking_call(os.fork)
        os.forkpty = _forking_call(os.forkpty)


# ---------------------------------------------------------------------------------------------
# Exceptions and exit


@_quietly
def _tell_exception(where, error, traceback, thread_name):
    # A spawned or forkserver worker that fails before its target runs (unpickling it, or
    # re-importing a main module without a __main__ guard) fails inside spawn._main.
    if where == "main" and _passes_through(traceback, "multiprocessing.spawn", "_main"):
        where = "process"
    try:
        message = str(error)
    except Exception:
        message = "<str() failed>"
    event = {"where": where, "type": _qualified_name(type(error)),
             "message": message[:_MESSAGE_CAP]}
    event["frames"] = _capped(_traceback_frames(traceback), event)
    event.update(thread_name=thread_name, process_name=_process_name())
    _emit("exception", **event)


def _passes_through(traceback, module, function):
    while traceback is not None:
        frame = traceback.tb_frame
        if frame.f_code.co_name == function and frame.f_globals.get("__name__") == module:
            return True
        traceback = traceback.tb_next
    return False


def _watch_os_exit():
    """A process that the program's own code ends with os._exit(N), N not 0 (a task that ends its
    pool worker): where, told before it goes, as nothing else will say it. multiprocessing's own
    calls (a worker's last act) are not the program's. No frame of ours outlives the call."""

    def make_exit(exit_):
        def told_exit(*args, **kwargs):
            # The arguments as given (its own errors are the original's); whatever happens while
            # telling (a signal handler that raises), the process ends as the program asked.
            try:
                if len(args) == 1 and not kwargs and type(args[0]) is int and args[0] != 0:
                    _tell_exit_call(args[0], _wrappers_caller())
            except BaseException:
                pass
            return exit_(*args, **kwargs)

        return told_exit

    _patch(os, "_exit", make_exit)


@_quietly
def _tell_exit_call(status, caller):
    if caller.f_globals.get("__name__", "").startswith("multiprocessing."):
        return
    event = {"where": "exit", "type": "os._exit", "message": str(status)}
    event["frames"] = _capped(_stack(caller), event)
    event.update(thread_name=_thread_name(), process_name=_process_name())
    _emit("exception", **event)


def _watch_signals_sent():
    """Each signal a process of the program sends to another (os.kill, os.killpg; what
    Popen.terminate() and kill() call too), with where: a child that a signal of the program's
    own ended was dealt with by the program, not a failure of it."""

    def make_kill(kill, group):
        def told_kill(*args, **kwargs):
            result = kill(*args, **kwargs)  # its errors are the original's
            if len(args) == 2 and not kwargs:
                _tell_signal_sent(args[0], args[1], group, _wrappers_caller())
            return result

        return told_kill

    _patch(os, "kill", lambda kill: make_kill(kill, False))
    if hasattr(os, "killpg"):
        _patch(os, "killpg", lambda killpg: make_kill(killpg, True))


@_quietly
def _tell_signal_sent(to, signalnum, group, caller):
    if type(to) is not int or int(signalnum) == 0:
        return  # a look whether it is alive, not a signal
    caller = _calling_frame(caller, ("subprocess", "multiprocessing.popen_fork",
                                     "multiprocessing.process", "multiprocessing.pool",
                                     "concurrent.futures.process"))
    _emit("signal_sent", to=to, group=group, signal=int(signalnum),
          where=caller and _frame(caller))


# pytest names the test it runs, and its phase, in this variable of every process it runs in:
# "tests/test_loader.py::test_workers (call)".
_PYTEST_TEST = "PYTEST_CURRENT_TEST"


def _watch_pytest_test():
    """Each test pytest begins and ends, as it sets and removes PYTEST_CURRENT_TEST: a stall, a
    crash or a failed worker is named by the test that was running."""
    environ = type(os.environ)

    def make_set(setitem):
        def told_setitem(self, key, value):
            setitem(self, key, value)
            if key == _PYTEST_TEST:
                _tell_test(value, "pytest")

        return told_setitem

    def make_delete(delitem):
        def told_delitem(self, key):
            delitem(self, key)
            if key == _PYTEST_TEST:
                _tell_test(None, "pytest")

        return told_delitem

    _patch(environ, "__setitem__", make_set)
    _patch(environ, "__delitem__", make_delete)


@_quietly
def _tell_test(name, by):
    _emit("test", name=name if isinstance(name, str) else None, by=by)


def _on_unittest_case(case):
    """unittest's test as it runs (TestCase.run), where pytest does not name one."""

    def make_run(run):
        def told_run(self, *args, **kwargs):
            _tell_unittest_test(self)
            try:
                return run(self, *args, **kwargs)
            finally:
                _tell_test(None, "unittest")

        return told_run

    _patch(case.TestCase, "run", make_run)


@_quietly
def _tell_unittest_test(test):
    _tell_test(test.id(), "unittest")


def _watch_signal_handlers():
    """The handlers the program sets for SIGTERM, SIGINT and SIGHUP, with where: a process that
    catches SIGTERM and goes on is why a terminate() never ends it. And its alarms."""
    import signal

    def make_signal(signal_):
        def told_signal(*args, **kwargs):
            previous = signal_(*args, **kwargs)  # its errors are the original's
            if len(args) == 2 and not kwargs:
                _tell_signal_handler(args[0], args[1], _wrappers_caller())
            return previous

        return told_signal

    _patch(signal, "signal", make_signal)

    # An alarm (signal.alarm, setitimer's ITIMER_REAL) ends a wait by itself: forkcheck counts a
    # still process with one pending as sleeping until it comes, not as hung.
    def make_alarm(alarm):
        def told_alarm(*args, **kwargs):
            previous = alarm(*args, **kwargs)
            if len(args) == 1 and not kwargs:
                _tell_alarm(args[0], _wrappers_caller())
            return previous

        return told_alarm

    def make_setitimer(setitimer):
        def told_setitimer(*args, **kwargs):
            previous = setitimer(*args, **kwargs)
            if 2 <= len(args) <= 3 and not kwargs and args[0] == signal.ITIMER_REAL:
                _tell_alarm(args[1], _wrappers_caller())
            return previous

        return told_setitimer

    if hasattr(signal, "alarm"):
        _patch(signal, "alarm", make_alarm)
    if hasattr(signal, "setitimer"):
        _patch(signal, "setitimer", make_setitimer)


@_quietly
def _tell_alarm(seconds, caller):
    """An alarm set from within the SIGALRM handler is a heartbeat, which wakes the process again
    and again whether or not it goes on: that one is told as such (from_handler)."""
    import signal
    handler = signal.getsignal(signal.SIGALRM)
    code = getattr(getattr(handler, "__func__", handler), "__code__", None)
    frame = caller
    while code is not None and frame is not None and frame.f_code is not code:
        frame = frame.f_back
    _emit("alarm", seconds=float(seconds), where=_frame(caller),
          ignored=handler == signal.SIG_IGN, from_handler=code is not None and frame is not None)


@_quietly
def _tell_signal_handler(signalnum, handler, caller):
    import signal
    if signalnum not in (signal.SIGTERM, signal.SIGINT, getattr(signal, "SIGHUP", None)):
        return
    if handler in (signal.SIG_DFL, signal.SIG_IGN):
        name = "SIG_DFL" if handler == signal.SIG_DFL else "SIG_IGN"
    else:
        name = _qualified_name(handler)
    _emit("signal_handler", signal=signal.Signals(signalnum).name, handler=name,
          where=_frame(caller))


def _watch_main_thread_and_exit():
    def make_excepthook(excepthook):
        def told_excepthook(error_type, error, traceback):
            global _told_main_exception
            _told_main_exception = id(error)
            _tell_exception("main", error, traceback, _thread_name())
            return excepthook(error_type, error, traceback)

        return told_excepthook

    _patch(sys, "excepthook", make_excepthook)
    atexit.register(_at_exit)  # first registered, so it runs last


@_quietly
def _at_exit():
    _catch_up()
    last = getattr(sys, "last_value", None)
    # While sys.last_value holds it, no other object has its id.
    if last is not None and id(last) != _told_main_exception:
        # The program's own sys.excepthook did not call ours.
        _tell_exception("main", last, last.__traceback__, "MainThread")
    # Known only after an uncaught exception: a wrapper of sys.exit, to learn its code, would
    # be the innermost frame of every SystemExit traceback (pytest prints them).
    uncaught = last is not None and not isinstance(last, KeyboardInterrupt)
    _emit("exit", code=1 if uncaught else None, torch=_torch_facts())


# ---------------------------------------------------------------------------------------------
# Modules the program imports


class _AfterImport:
    """A sys.meta_path finder that lets an import happen as it would have, then runs a hook on
    the new module: threading, multiprocessing and subprocess are patched only if the program
    imports them, and never imported by us. Every import the program makes lets us catch up."""

    def __init__(self, hooks):
        self._hooks = hooks  # module name -> hook(module)

    def install(self):
        for name in list(self._hooks):
            if name in sys.modules:  # imported before us, by a .pth file
                _quietly(self._hooks.pop(name))(sys.modules[name])
        sys.meta_path.insert(0, self)

    def find_spec(self, name, path=None, target=None):
        _catch_up()
        hook = self._hooks.get(name)
        if hook is None:
            return None
        spec = self._spec_from_later_finders(name, path, target)
        _quietly(self._hook_into)(spec, hook)
        return spec

    def _hook_into(self, spec, hook):
        loader = spec.loader
        if isinstance(loader, type):  # a builtin or frozen module's: shared, not to be touched
            return
        exec_module = loader.exec_module

        def exec_then_hook(module):
            try:
                exec_module(module)
            finally:
                del loader.exec_module  # the loader is as it was
            self._hooks.pop(spec.name, None)
            _quietly(hook)(module)

        # Set on this loader object only, made for this one module: module.__loader__ stays
        # the real loader. (Only for modules of the standard library, which do not fail to
        # import: a failure's traceback would show this frame.)
        loader.exec_module = exec_then_hook

    def _spec_from_later_finders(self, name, path, target):
        finders = sys.meta_path
        for finder in finders[finders.index(self) + 1:]:
            find_spec = getattr(finder, "find_spec", None)
            spec = find_spec(name, path, target) if find_spec else None
            if spec is not None:
                return spec
        return None


def _patch(owner, name, make_wrapper):
    """Replaces owner.name by make_wrapper(original); owner.__name__ too when it is the same
    object, as sys.__excepthook__ is: programs test "excepthook is __excepthook__" before
    installing their own."""
    original = getattr(owner, name)
    wrapper = _dressed_as(original, make_wrapper(original))
    # A module's function is pickled by reference (module, name): where the original's module is
    # another (os._exit is posix's), the wrapper names the module it now lives in, so that it
    # still pickles (a spawn Process whose target is os._exit).
    if isinstance(owner, type(sys)) and getattr(
            sys.modules.get(getattr(wrapper, "__module__", None)), name, None) is not wrapper:
        try:
            wrapper.__module__ = owner.__name__
        except (AttributeError, TypeError):
            pass
    setattr(owner, name, wrapper)
    dunder = "__%s__" % name
    if getattr(owner, dunder, None) is original:
        setattr(owner, dunder, wrapper)


def _on_threading(threading):
    global _thread_started_at
    import weakref
    _thread_started_at = weakref.WeakKeyDictionary()

    def make_start(start):
        def told_start(self):
            # Before start(): a quick thread may be gone, its target forgotten, when it returns.
            facts = _thread_facts(self)
            start(self)
            _tell_thread_started(self, facts)

        return told_start

    _patch(threading.Thread, "start", make_start)
    if not hasattr(threading.Thread, "native_id"):
        # Python 3.6 and 3.7 keep no kernel id: noted in the new thread before start() returns
        # (start() waits for _bootstrap_inner to say it started), so that forks and stacks can
        # name the thread as the kernel sees it.
        def make_bootstrap_inner(bootstrap_inner):
            def noting_bootstrap_inner(self):
                self._forkcheck_native_id = _own_native_id()
                return bootstrap_inner(self)

            return noting_bootstrap_inner

        _patch(threading.Thread, "_bootstrap_inner", make_bootstrap_inner)
    # A thread's uncaught exception is told where threading reports it, so that no frame of
    # ours joins the traceback it prints (as a wrapper of run() would).
    if hasattr(threading, "excepthook"):
        _patch(threading, "excepthook", _told_thread_exception_hook)
    else:  # Python 3.6 and 3.7: Thread._bootstrap_inner formats it with _format_exc()
        _patch(threading, "_format_exc", _told_thread_exception_formatter)


def _told_thread_exception_hook(excepthook):
    def told_excepthook(args):
        if not issubclass(args.exc_type, SystemExit):  # an ending, not an error
            _tell_exception("thread", args.exc_value, args.exc_traceback, _thread_name())
        return excepthook(args)

    return told_excepthook


def _told_thread_exception_formatter(format_exc):
    def told_format_exc(*args, **kwargs):
        _, error, traceback = sys.exc_info()
        _tell_exception("thread", error, traceback, _thread_name())
        return format_exc(*args, **kwargs)

    return told_format_exc


@_quietly
def _thread_facts(thread):
    caller = _calling_frame(sys._getframe(), ("threading",))
    return {"started_at": caller and _frame(caller),
            "target": _target(thread, sys.modules["threading"].Thread.run)}


@_quietly
def _tell_thread_started(thread, facts):
    _thread_started_at[thread] = facts["started_at"]
    _emit("thread", ident=thread.ident, native_id=_native_id_of(thread),
          name=thread.name, daemon=thread.daemon, **facts)


def _on_traceback(traceback):
    """A multiprocessing worker's uncaught exception is printed by BaseProcess._bootstrap with
    traceback.print_exc(): told there, no frame of ours joins the traceback it prints (as a
    wrapper of run() would)."""

    def make_print_exc(print_exc):
        def told_print_exc(*args, **kwargs):
            caller = _wrappers_caller()
            if (caller is not None and caller.f_code.co_name == "_bootstrap"
                    and caller.f_globals.get("__name__") == "multiprocessing.process"):
                _, error, traceback = sys.exc_info()
                _tell_exception("process", error, traceback, _thread_name())
            return print_exc(*args, **kwargs)

        return told_print_exc

    _patch(traceback, "print_exc", make_print_exc)


def _on_multiprocessing_util(util):
    """A multiprocessing process whose target ends it with sys.exit(N) (N not 0): where, told when
    BaseProcess._bootstrap calls util._exit_function() in the finally clause the SystemExit passes
    through, which no traceback shows (a Pool worker that exits mid-task leaves map() waiting for
    ever; its line is the fix). No frame of ours joins the SystemExit's traceback."""

    def make_exit_function(exit_function):
        def told_exit_function(*args, **kwargs):
            caller = _wrappers_caller()  # None when atexit calls it at the interpreter's end
            if (caller is not None and caller.f_code.co_name == "_bootstrap"
                    and caller.f_globals.get("__name__") == "multiprocessing.process"):
                _, error, traceback = sys.exc_info()
                if isinstance(error, SystemExit) and error.code not in (None, 0):
                    _tell_exception("process", error, traceback, _thread_name())
            return exit_function(*args, **kwargs)

        return told_exit_function

    _patch(util, "_exit_function", make_exit_function)


def _watch_worker_exits(process):
    """Python 3.13 moved that call out of the SystemExit's path: there the exception is seen as
    BaseProcess._bootstrap catches it (sys.monitoring's EXCEPTION_HANDLED, in multiprocessing's
    processes only, which _bootstrap begins), with its whole traceback. No frame of ours joins
    it: ours is above _bootstrap, which prints none of its callers. The tool id is one the
    program's debugger, coverage and profiler do not hold (they take 0 to 2); one the program
    asks for itself is handed over to it (use_tool_id), and we take another or none."""
    monitoring = getattr(sys, "monitoring", None)
    if monitoring is None or sys.version_info < (3, 13):
        return
    bootstrap_code = process.BaseProcess._bootstrap.__code__
    handled_event = monitoring.events.EXCEPTION_HANDLED
    held = []  # the tool id we hold, if any

    def handled(code, offset, error):
        try:
            if code is not bootstrap_code or not isinstance(error, SystemExit):
                return
            if error.code in (None, 0):  # False too: sys.exit(False) exits 0
                return
            _tell_exception("process", error, error.__traceback__, _thread_name())
        except Exception:
            pass

    def take(avoid=None):
        for tool in (4, 3):
            if tool != avoid and monitoring.get_tool(tool) is None:
                monitoring.use_tool_id(tool, "forkcheck")
                monitoring.register_callback(tool, handled_event, handled)
                monitoring.set_events(tool, handled_event)
                held[:] = [tool]
                return

    def release():
        tool = held.pop()
        monitoring.set_events(tool, 0)
        monitoring.register_callback(tool, handled_event, None)
        monitoring.free_tool_id(tool)

    @_quietly
    def watch():
        if held and monitoring.get_tool(held[0]) == "forkcheck":
            return
        held[:] = []
        take()

    def make_use_tool_id(use_tool_id):
        def handing_over(tool_id, name):
            if held and held[0] == tool_id and monitoring.get_tool(tool_id) == "forkcheck":
                _quietly(release)()
                result = use_tool_id(tool_id, name)
                _quietly(take)(avoid=tool_id)
                return result
            return use_tool_id(tool_id, name)

        return handing_over

    _patch(monitoring, "use_tool_id", make_use_tool_id)

    def make_bootstrap(bootstrap):
        def watched_bootstrap(self, *args, **kwargs):
            watch()
            return bootstrap(self, *args, **kwargs)

        return watched_bootstrap

    _patch(process.BaseProcess, "_bootstrap", make_bootstrap)


def _told_end(method, tell):
    """method of a Popen, followed by tell(popen) when it is the call that learnt the child's
    end (returncode went from None to a value): once per child, however the program asked."""

    def wrapper(self, *args, **kwargs):
        running = self.returncode is None
        result = method(self, *args, **kwargs)
        if running and self.returncode is not None:
            tell(self)
        return result

    return wrapper


def _on_multiprocessing_process(process):
    global _process_targets
    import weakref
    _process_targets = weakref.WeakKeyDictionary()

    def make_init(init):
        def told_init(self, *args, **kwargs):
            init(self, *args, **kwargs)
            _remember_target(self)  # start() forgets it (bpo-30775), long before the end

        return told_init

    _patch(process.BaseProcess, "__init__", make_init)
    _watch_worker_exits(process)
    _watch_exitcode_looks(process)


def _watch_exitcode_looks(process):
    """Each non-zero exit code the program reads through Process.exitcode (itself, not
    multiprocessing's own upkeep, as a Pool's replacing of dead workers): a child whose end the
    program looked at was dealt with by it, whatever that end was."""
    exitcode = process.BaseProcess.__dict__.get("exitcode")
    if not isinstance(exitcode, property) or exitcode.fset is not None:
        return
    fget = exitcode.fget

    def told_exitcode(self):
        code = fget(self)
        if code:
            _note_exitcode_read(self, code, _wrappers_caller())
        return code

    process.BaseProcess.exitcode = property(_dressed_as(fget, told_exitcode), None, None,
                                            exitcode.__doc__)


@_quietly
def _note_exitcode_read(process, code, caller):
    popen = process._popen
    if getattr(popen, "_forkcheck_looked", False):
        return
    if caller.f_globals is globals() or (caller.f_globals.get("__name__") or "").startswith(
            "multiprocessing."):
        return
    popen._forkcheck_looked = True
    _emit("end_looked", child=popen.pid, code=code, via="exitcode", where=_frame(caller))


@_quietly
def _remember_target(process):
    base = sys.modules["multiprocessing.process"].BaseProcess
    _process_targets[process] = _target(process, base.run)


@_quietly
def _tell_process_end(popen):
    # The Process is still among its parent's children: poll() comes before they drop it.
    children = sys.modules["multiprocessing.process"]._children
    child = next((child for child in children if child._popen is popen), None)
    _emit("child_exit", pid=popen.pid, returncode=popen.returncode, via="multiprocessing",
          name=child and child.name, target=child and _process_targets.get(child),
          asked=getattr(popen, "_forkcheck_asked", None))


def _noting_request(name):
    """Popen.terminate or kill, noting that the program itself asked for its child's end: a
    worker a Pool's exit terminates is not a worker that failed."""

    def make(method):
        def asking(self, *args, **kwargs):
            if self.returncode is None:
                self._forkcheck_asked = name
                _tell_end_asked(self.pid, name)
            return method(self, *args, **kwargs)

        return asking

    return make


@_quietly
def _tell_end_asked(pid, how):
    """Where the program asked a child to end (Process.terminate() at train.py:40): a child that
    then goes on (its SIGTERM handler returned) leaves that request unanswered."""
    caller = _calling_frame(sys._getframe(), ("multiprocessing.popen_fork",
                                              "multiprocessing.process"))
    by = caller and caller.f_globals.get("__name__")  # a Pool, an executor, the program
    caller = _calling_frame(caller, ("multiprocessing.pool", "concurrent.futures.process",
                                     "threading"))
    _emit("end_asked", child=pid, how=how, by=by, where=caller and _frame(caller))


def _on_multiprocessing_popen_fork(popen_fork):
    # popen_spawn_posix's and popen_forkserver's Popen are subclasses of this one.
    _patch(popen_fork.Popen, "poll", lambda poll: _told_end(poll, _tell_process_end))
    for name in ("terminate", "kill"):  # kill() since Python 3.7
        if hasattr(popen_fork.Popen, name):
            _patch(popen_fork.Popen, name, _noting_request(name))


def _on_multiprocessing_popen_forkserver(popen_forkserver):
    # Its poll() reads the exit status from the forkserver, not from waitpid().
    _patch(popen_forkserver.Popen, "poll", lambda poll: _told_end(poll, _tell_process_end))


def _on_multiprocessing_context(context):
    """multiprocessing's default start method becomes FORKCHECK_START_METHOD, as Python 3.14
    makes forkserver the default: the program's own set_start_method() still works. The
    program's own choices are told, and overridden with FORKCHECK_FORCE_START_METHOD=1."""
    default = os.environ.get("FORKCHECK_START_METHOD")
    if default not in _START_METHODS:
        default = None
    forced = default if os.environ.get("FORKCHECK_FORCE_START_METHOD") == "1" else None
    if default:
        context._default_context._default_context = context._concrete_contexts[default]

    @_quietly
    def chosen(method):
        """The method to use where the program named one (told), or where multiprocessing did
        (a spawned child taking its parent's method: neither told nor overridden)."""
        caller = _calling_frame(sys._getframe(), ("multiprocessing.context",))
        module = (caller.f_globals.get("__name__") or "") if caller else ""
        if method is None or module.partition(".")[0] == "multiprocessing":
            return method
        overridden_by = forced if forced and forced != method else None
        _emit("start_method", method=method, where=caller and _frame(caller),
              overridden_by=overridden_by)
        return overridden_by or method

    def make_get_context(get_context):
        def told_get_context(self, method=None):
            return get_context(self, chosen(method) or method)

        return told_get_context

    # set_start_method(method) too gets its context from get_context(method), on every version.
    _patch(context.BaseContext, "get_context", make_get_context)


@_quietly
def _tell_subprocess_end(popen):
    args = popen.args  # a command line (its program, or with shell=True the whole line)
    program = args if isinstance(args, (str, bytes, os.PathLike)) else args[0]
    _emit("child_exit", pid=popen.pid, returncode=popen.returncode, via="subprocess",
          name=os.fsdecode(program), target=None)


def _on_subprocess(subprocess):
    # Every real exit status goes through _handle_exitstatus: wait(), poll(), communicate(),
    # __exit__, __del__ and the module's own cleanup of dead children.
    _patch(subprocess.Popen, "_handle_exitstatus",
           lambda handle: _told_end(handle, _tell_subprocess_end))
    _watch_returncode_looks(subprocess.Popen)


# subprocess's functions that hand the exit status on to their caller (returned, or raised as
# CalledProcessError): a read of returncode under them is the program's look at it.
_HANDING_RETURNCODE = ("wait", "poll", "call", "check_call", "run", "check_output",
                       "getstatusoutput")


def _watch_returncode_looks(popen):
    """Each non-zero exit status of a child that reaches the program: Popen.returncode read by
    it, or handed to it by wait(), poll(), run(), call(), check_call()... But not one that only
    __exit__, __del__ or subprocess's own reaping of dead children learnt. returncode stays an
    entry of the object's __dict__, behind a property of the class that reads it there."""
    import weakref
    if "returncode" in popen.__dict__:
        return
    looked = weakref.WeakSet()

    def get(self):
        try:
            code = self.__dict__["returncode"]
        except KeyError:
            raise AttributeError("'%s' object has no attribute 'returncode'" %
                                 type(self).__name__) from None
        if code:
            _note_returncode_read(self, code, _wrappers_caller(), looked)
        return code

    def set_(self, value):
        self.__dict__["returncode"] = value

    def delete(self):
        del self.__dict__["returncode"]

    popen.returncode = property(get, set_, delete)


@_quietly
def _note_returncode_read(popen, code, caller, looked):
    if popen in looked:
        return
    outermost = None
    while caller is not None and (caller.f_globals is globals()
                                  or caller.f_globals.get("__name__") == "subprocess"):
        if caller.f_globals is not globals():
            outermost = caller.f_code.co_name
        caller = caller.f_back
    if caller is None or (outermost is not None and outermost not in _HANDING_RETURNCODE):
        return
    looked.add(popen)
    _emit("end_looked", child=popen.pid, code=code, via=outermost or "returncode",
          where=_frame(caller))


def _on_concurrent_futures_process(process):
    """A worker whose death broke a ProcessPoolExecutor was told to the program: every future
    it had pending fails with BrokenProcessPool, which the program gets from result()."""

    def make_init(init):
        def told_init(self, *args, **kwargs):
            init(self, *args, **kwargs)
            _tell_pool_broken(_wrappers_caller())

        return told_init

    _patch(process.BrokenProcessPool, "__init__", make_init)


_pool_told_broken = None  # its workers' pids (3.6-3.8 make one error per pending future)


@_quietly
def _tell_pool_broken(caller):
    # Where the executor's manager breaks it, its workers (pid -> Process) are at hand: the
    # manager's `processes` (3.9 and later: self.processes; before: the argument). A
    # BrokenProcessPool that submit() raises later has none and is not told again.
    global _pool_told_broken
    if caller.f_globals.get("__name__") != "concurrent.futures.process":
        return
    processes = caller.f_locals.get("processes")
    if processes is None:
        processes = getattr(caller.f_locals.get("self"), "processes", None)
    if not isinstance(processes, dict):
        return
    workers = sorted(pid for pid in processes if type(pid) is int)
    if workers == _pool_told_broken:
        return
    _pool_told_broken = workers
    _emit("pool_broken", workers=workers)


@_quietly
def _tell_torch():
    _emit("torch", **_torch_facts())


@_quietly
def _notice_torch():
    """torch is told, and its thread-count setters patched, once its import is over, at the
    program's next import, fork or exit. Not from inside its import: a hook around it would
    put a frame of ours into the traceback of a torch that fails to import, and torch itself
    needs its setters as they are while it imports (it adds their docstrings)."""
    global _torch_told
    torch = sys.modules.get("torch")
    if _torch_told or torch is None or getattr(torch.__spec__, "_initializing", False):
        return
    _torch_told = True
    _patch(torch, "set_num_threads", _told_torch_setter)
    _patch(torch, "set_num_interop_threads", _told_torch_setter)
    _tell_torch()


def _told_torch_setter(setter):
    def told_setter(*args, **kwargs):
        result = setter(*args, **kwargs)
        _tell_torch()
        return result

    return told_setter


def _on_torch_signal_handling(signal_handling):
    """PyTorch's DataLoader workers install their own SIGSEGV, SIGBUS and SIGFPE handlers
    (_set_worker_signal_handlers: a message, then death by the signal) over faulthandler's, and
    a worker's crash would lose its Python line. Right after them, ours again, chained to theirs:
    the crash's stack first, then their message and the same death."""

    def make_set(original):
        def set_then_ours_first(*args, **kwargs):
            result = original(*args, **kwargs)
            if _crash_dumps == "dumps":
                _quietly(_crash_dumps_before)(original, args, kwargs)
            return result

        return set_then_ours_first

    _patch(signal_handling, "_set_worker_signal_handlers", make_set)


def _crash_dumps_before(install, args, kwargs):
    """faulthandler on top of the handlers `install` sets: disabling it puts back what it found
    (not theirs), so theirs are set again, then ours, which saves theirs and calls them after
    writing the stack."""
    faulthandler.disable()
    install(*args, **kwargs)
    faulthandler.enable(file=_dump_target, all_threads=True)
    _emit("crash_dumps_rearmed", over=_qualified_name(install))


_after_import = _AfterImport({
    "threading": _on_threading,
    "multiprocessing.context": _on_multiprocessing_context,
    "multiprocessing.process": _on_multiprocessing_process,
    "multiprocessing.util": _on_multiprocessing_util,
    "traceback": _on_traceback,
    "multiprocessing.popen_fork": _on_multiprocessing_popen_fork,
    "multiprocessing.popen_forkserver": _on_multiprocessing_popen_forkserver,
    "subprocess": _on_subprocess,
    "concurrent.futures.process": _on_concurrent_futures_process,
    "unittest.case": _on_unittest_case,
    "torch.utils.data._utils.signal_handling": _on_torch_signal_handling,
})
