#!/usr/bin/env python3
"""The Python peer of `forkcheck bench`: worker start latency of multiprocessing with torch
imported, for fork, spawn and forkserver, measured as forkcheck measures its own: from the parent
asking for a worker (Process.start) to the worker running its first line (CLOCK_MONOTONIC, the
same clock in every process). Prints one JSON document on stdout.

forkserver is measured twice: plain (the server imports nothing, so each worker imports this
script, and torch with it, as __mp_main__) and with set_forkserver_preload(["torch"]) (the server
has torch loaded, as forkcheck's forkserver has libtorch: the like-for-like comparison). A server
cannot be told to preload once it runs, so the second is measured by a fresh copy of this script
(--preload-torch-only)."""
import json
import os
import subprocess
import sys
import time

try:
    import torch  # noqa: F401  (what a training program has loaded before it starts workers)
    import multiprocessing as mp
except Exception as e:  # pragma: no cover - reported, not raised
    print(json.dumps({"available": False, "reason": f"import torch failed: {e!r}"}))
    sys.exit(0)


def first_line(q):
    q.put(time.clock_gettime_ns(time.CLOCK_MONOTONIC))


def measure(method, repeat):
    ctx = mp.get_context(method)
    q = ctx.Queue()
    samples = []
    for _ in range(repeat):
        asked = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        p = ctx.Process(target=first_line, args=(q,))
        p.start()
        t = q.get(timeout=120)
        p.join()
        samples.append((t - asked) / 1e6)
    return samples


def measure_preloaded(repeat):
    mp.set_forkserver_preload(["torch"])
    return measure("forkserver", repeat)


def main():
    repeat = int(sys.argv[sys.argv.index("--repeat") + 1]) if "--repeat" in sys.argv else 10
    if "--preload-torch-only" in sys.argv:
        print(json.dumps(measure_preloaded(repeat)))
        return
    out = {"available": True, "python": sys.version.split()[0], "torch": torch.__version__,
           "start_latency_ms": {}}
    for method in ("fork", "spawn", "forkserver"):
        if method in mp.get_all_start_methods():
            out["start_latency_ms"][method] = measure(method, repeat)
    if "forkserver" in mp.get_all_start_methods():
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "--repeat", str(repeat),
                            "--preload-torch-only"], capture_output=True, text=True, timeout=600)
        try:
            out["start_latency_ms"]["forkserver_preload_torch"] = json.loads(r.stdout)
        except ValueError:
            out["forkserver_preload_torch_error"] = (r.stderr or r.stdout)[-500:]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
