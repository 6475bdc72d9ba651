#!/usr/bin/env python3
"""The Python peer of `forkcheck bench`: worker start latency of multiprocessing with torch
imported, for fork, spawn and forkserver, measured as forkcheck measures its own: from the parent
asking for a worker (Process.start) to the worker running its first line (CLOCK_MONOTONIC, the
same clock in every process). Prints one JSON document on stdout."""
import json
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


def main():
    repeat = int(sys.argv[sys.argv.index("--repeat") + 1]) if "--repeat" in sys.argv else 10
    out = {"available": True, "python": sys.version.split()[0], "torch": torch.__version__,
           "start_latency_ms": {}}
    for method in ("fork", "spawn", "forkserver"):
        if method in mp.get_all_start_methods():
            out["start_latency_ms"][method] = measure(method, repeat)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
