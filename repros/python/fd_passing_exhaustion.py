#!/usr/bin/env python3
"""fd-passing-exhaustion in Python: 2 workers put 64 small tensors each on a torch.multiprocessing
queue, the main process keeps every one it gets. Its RLIMIT_NOFILE is lowered to LIMIT after the
workers started (the receiver alone, as in the C++ case):

    python3 fd_passing_exhaustion.py file_descriptor 32   # RuntimeError: received 0 items of ancdata
    python3 fd_passing_exhaustion.py file_system 32       # received 128 tensors
    python3 fd_passing_exhaustion.py file_descriptor 1024 # received 128 tensors

With torch 1.13 and Python 3.11, the first fails in multiprocessing/reduction.py recvfds (reached
from torch's rebuild_storage_fd and resource_sharer's detach) with exactly that message. With the
limit on the whole tree instead (`ulimit -n 32`), the workers run out first: their resource_sharer
threads fail in accept() with "OSError: [Errno 24] Too many open files" and the main process gets
an EOFError in recvfds."""
import resource
import sys

import torch
import torch.multiprocessing as mp

N = 64


def worker(q, w, done):
    for i in range(N):
        q.put(torch.full((16,), float(w * 1000 + i)))
    q.put(None)
    done.wait()  # a descriptor is fetched from its sender: the sender must outlive the fetch


if __name__ == "__main__":
    if len(sys.argv) > 1:
        mp.set_sharing_strategy(sys.argv[1])
    q, done = mp.Queue(), mp.Event()
    ps = [mp.Process(target=worker, args=(q, w, done), daemon=True) for w in range(2)]
    for p in ps:
        p.start()
    if len(sys.argv) > 2:
        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        resource.setrlimit(resource.RLIMIT_NOFILE, (int(sys.argv[2]), hard))
    print("strategy", mp.get_sharing_strategy(), "RLIMIT_NOFILE",
          resource.getrlimit(resource.RLIMIT_NOFILE), flush=True)
    kept, ended = [], 0
    while ended < 2:
        t = q.get()
        if t is None:
            ended += 1
        else:
            kept.append(t)
    done.set()
    for p in ps:
        p.join()
    print("received", len(kept), "tensors")
