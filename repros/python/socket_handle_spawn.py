#!/usr/bin/env python3
"""What Python does with a live socket handed to a worker (the socket-handle-spawn case, source
002): a plain pickler refuses it; multiprocessing's own pickler passes it by duplicating the
descriptor, so the worker shares the parent's connection. Prints one JSON document on stdout.

    /usr/bin/python3 repros/python/socket_handle_spawn.py

An Env instance owns a connection to a loopback "game host" (a thread here) that records each
connection it accepts and answers "ask <worker> <k>" with "reply <worker> <k>". Then:
  pickle        pickle.dumps(env): what cloudpickle (SB3's CloudpickleWrapper) runs into too
  wrapper-*     Process(args=(CloudpickleLike(env),)): a wrapper whose __getstate__ pickles the
                instance with a plain pickler, as SB3's CloudpickleWrapper does with cloudpickle
  instance-*    Process(args=(env, i)): multiprocessing's ForkingPickler, which has a reducer for
                sockets; each worker asks once, in turn, and reports its socket's addresses
"""
import json
import multiprocessing as mp
import pickle
import socket
import threading

WORKERS = 4


class GameHost:
    def __init__(self):
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.connections = []  # one entry per accepted connection: its peer and who asked on it
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            conn, peer = self.listener.accept()
            record = {"peer": f"{peer[0]}:{peer[1]}", "workers": []}
            self.connections.append(record)
            threading.Thread(target=self._serve, args=(conn, record), daemon=True).start()

    def _serve(self, conn, record):
        for line in conn.makefile("r"):
            _, worker, k = line.split()
            record["workers"].append(int(worker))
            conn.sendall(f"reply {worker} {k}\n".encode())


class Env:
    """The source's environment: its instance owns a live connection."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port))


class CloudpickleLike:
    """SB3's CloudpickleWrapper, with pickle standing in for cloudpickle (not installed here;
    cloudpickle's Pickler subclasses pickle's and reaches the same socket.__getstate__)."""

    def __init__(self, var):
        self.var = var

    def __getstate__(self):
        return pickle.dumps(self.var)

    def __setstate__(self, state):
        self.var = pickle.loads(state)


def wrapped_worker(wrapper):
    pass


def instance_worker(env, me, turn, out):
    with turn:  # one at a time: this program shows the sharing, not the crossing of replies
        env.sock.sendall(f"ask {me} 0\n".encode())
        reply = env.sock.recv(64).decode().strip()
    out.put({"worker": me, "fd": env.sock.fileno(), "sockname": env.sock.getsockname(),
             "peername": env.sock.getpeername(), "reply": reply})


def refusal(fn):
    try:
        fn()
        return "no error"
    except Exception as e:  # what it raised is the finding
        return f"{type(e).__name__}: {e}"


def run_wrapper(method, env):
    ctx = mp.get_context(method)
    p = ctx.Process(target=wrapped_worker, args=(CloudpickleLike(env),))

    def start_and_join():
        p.start()
        p.join()
        if p.exitcode != 0:
            raise RuntimeError(f"worker exit code {p.exitcode}")

    return refusal(start_and_join)


def run_instance(method, port):
    host = GameHost() if port is None else None
    env = Env(host.port if host else port)
    ctx = mp.get_context(method)
    turn, out = ctx.Lock(), ctx.Queue()
    procs = [ctx.Process(target=instance_worker, args=(env, i, turn, out)) for i in range(WORKERS)]
    for p in procs:
        p.start()
    results = sorted((out.get(timeout=60) for _ in procs), key=lambda r: r["worker"])
    for p in procs:
        p.join()
    parent = "%s:%d" % env.sock.getsockname()
    return {
        "parent": f"fd {env.sock.fileno()}, local {parent}",
        "workers": [f"worker {r['worker']}: fd {r['fd']}, local %s:%d, read {r['reply']!r}"
                    % tuple(r["sockname"]) for r in results],
        "same_connection_as_parent": all("%s:%d" % tuple(r["sockname"]) == parent
                                         for r in results),
        "host_connections": host.connections,
    }


def main():
    host = GameHost()
    env = Env(host.port)
    report = {"python": __import__("sys").version.split()[0]}
    try:
        import torch

        report["torch"] = torch.__version__
    except ImportError:
        report["torch"] = None
    report["pickle"] = refusal(lambda: pickle.dumps(env))
    for method in ("spawn", "forkserver", "fork"):
        report[f"wrapper-{method}"] = run_wrapper(method, env)
    for method in ("spawn", "forkserver", "fork"):
        report[f"instance-{method}"] = run_instance(method, None)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
