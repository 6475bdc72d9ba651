"""forkcheck watch's Python subject: torch runs a parallel op (libgomp starts its pool), then a
multiprocessing worker starts with the start method named on the command line.
  fork   the worker is forked from a process with a live OpenMP pool: hazardous
  spawn  the worker is a fresh interpreter (fork+exec, or vfork+exec): not hazardous
The worker does no parallel work (under fork it would hang, which is not what this tests).
Usage: python3 mp_torch.py fork|spawn|forkserver"""
import multiprocessing as mp
import sys

import torch


def worker(n):
    print(f"worker {n}: ok", flush=True)


if __name__ == "__main__":
    torch.set_num_threads(2)
    total = torch.ones(512, 512).sum().item()  # 262144 elements: above ATen's grain, enters OpenMP
    print(f"parent: sum {total:.0f} with {torch.get_num_threads()} threads", flush=True)
    ctx = mp.get_context(sys.argv[1])
    p = ctx.Process(target=worker, args=(1,))
    p.start()
    p.join()
    print(f"parent: worker exit code {p.exitcode}", flush=True)
    sys.exit(p.exitcode)
