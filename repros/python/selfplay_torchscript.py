#!/usr/bin/env python3
"""What real PyTorch does with the TorchScript model of source 001 (dlshogi self-play) when it is
handed to worker processes, the check behind forkcheck's `selfplay-pipeline` case:

  spawn-shared   the scripted module, after share_memory(), as a Process argument under spawn
                 (what the source tried with torch.multiprocessing: pickling it fails in the parent)
  fork-shared    the same under fork (nothing is pickled: the child inherits the module)
  spawn-load     the parent saves the module, each spawned worker torch.jit.load()s it (the
                 source's fix)
  fork-load      the same under fork

Each worker runs one forward and sends back its output's sum; the parent compares it with its
own. Prints one JSON document on stdout. Run with Debian's /usr/bin/python3 (python3-torch 1.13).
"""
import json
import os
import sys
import tempfile
import traceback

import torch
import torch.multiprocessing as mp


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = torch.nn.Linear(8, 16)
        self.policy = torch.nn.Linear(16, 4)
        self.value = torch.nn.Linear(16, 1)

    def forward(self, x):
        h = torch.relu(self.l1(x))
        return self.policy(h), torch.tanh(self.value(h))


def infer(model, q):
    torch.manual_seed(0)
    with torch.no_grad():
        p, v = model(torch.ones(2, 8))
    q.put({"pid": os.getpid(), "sum": float(p.sum() + v.sum())})


def shared_worker(model, q):
    infer(model, q)


def load_worker(path, q):
    infer(torch.jit.load(path), q)


def run(method, how, model, path, parent_sum):
    ctx = mp.get_context(method)
    q = ctx.Queue()
    target, arg = (shared_worker, model) if how == "shared" else (load_worker, path)
    p = ctx.Process(target=target, args=(arg, q))
    try:
        p.start()
    except Exception as e:  # the parent's pickling of the Process object (spawn)
        return {"outcome": "error", "where": "Process.start in the parent",
                "exception": type(e).__name__, "text": str(e),
                "raised_at": traceback.extract_tb(e.__traceback__)[-1].name}
    r = q.get(timeout=60)
    p.join(60)
    return {"outcome": "ok" if p.exitcode == 0 else "error", "exitcode": p.exitcode, **r,
            "same_as_parent": r["sum"] == parent_sum}


def main():
    torch.manual_seed(1)
    model = torch.jit.script(Net())
    model.share_memory()  # what the source tried, with torch.multiprocessing
    with torch.no_grad():
        p, v = model(torch.ones(2, 8))
    results = {"torch": torch.__version__, "python": sys.version.split()[0],
               "scripted_type": model._c._type().qualified_name(),
               "parent_sum": float(p.sum() + v.sum())}
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "net.pt")
        model.save(path)
        for method in ("spawn", "fork"):
            for how in ("shared", "load"):
                results[f"{method}-{how}"] = run(method, how, model, path, results["parent_sum"])
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
