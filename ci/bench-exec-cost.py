#!/usr/bin/env python3
"""What `forkcheck exec` costs a Python program: the wall time and memory it adds to a program
that does nothing (`python3 -c pass`; the target: at most 50 ms and 20 MiB), the time it adds to
each fork of a program that starts short-lived multiprocessing workers one after another (the
target: at most 2 ms a fork; the size of the report it leaves is printed), and the share of
wall time it adds to a torch program of about 1 s of training (the target: at most 5 %).

Each figure is measured here, side by side in one run: the plain program and the same program
under `forkcheck exec --quiet` alternate, run for run, so that both see the same machine, and the
cost is the median of each pair's difference (steadier than a difference of medians when the
machine's load comes and goes). Memory is the sum, over every process of the run, of its peak
resident set (VmHWM, shared pages counted in each process: an upper bound of what is added),
sampled from /proc every millisecond or so until the run ends; timed runs are not sampled.

With --long-forks N (100000 for the figure docs/reports.md quotes), a long fork-heavy run under
exec alone: forkcheck's own resident memory sampled every half second (at a quarter, half, three
quarters of the run and at its end, and its peak), and the sizes of the report and run log it
left: what stays bounded over a long run, and what does not.

Usage: ci/bench-exec-cost.py [--build build] [--python PY] [--torch-python PY] [--runs N]
                             [--long-forks N]
Exit status: 0 when every figure is within its target, 1 when one is not, 2 when a program
could not be run.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

TARGET_PASS_MS = 50
TARGET_PASS_MIB = 20
TARGET_TORCH_SHARE = 0.05
TARGET_FORK_MS = 2
FORKS = 300

FORK_PROGRAM = """
import multiprocessing as mp, sys

def work():
    pass

if __name__ == "__main__":
    context = mp.get_context("fork")
    for _ in range(int(sys.argv[1])):
        p = context.Process(target=work)
        p.start()
        p.join()
"""

TORCH_PROGRAM = """
import sys, time, torch
torch.manual_seed(0)
net = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))
optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
x, y = torch.randn(256, 64), torch.randn(256, 1)
started = time.perf_counter()
for _ in range(int(sys.argv[1])):
    optimizer.zero_grad()
    torch.nn.functional.mse_loss(net(x), y).backward()
    optimizer.step()
print("%.3f" % (time.perf_counter() - started))
"""


def fail(message):
    print("bench-exec-cost: " + message, file=sys.stderr)
    sys.exit(2)


def children_of(pids):
    """Every process whose parent is in pids, read from /proc/PID/stat."""
    found = set()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name, "rb") as stat:
                ppid = int(stat.read().rsplit(b") ", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if ppid in pids:
            found.add(int(name))
    return found


def peak_kib(pid):
    try:
        with open("/proc/%d/status" % pid) as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def run(argv, sample=None, every=0.0005):
    """Wall seconds; fails on a non-zero exit status. `sample(process, seconds)` is called every
    `every` seconds while it runs."""
    started = time.perf_counter()
    process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    while sample and process.poll() is None:
        sample(process, time.perf_counter() - started)
        time.sleep(every)
    _, stderr = process.communicate()
    wall = time.perf_counter() - started
    if process.returncode != 0:
        fail("%s exited %d: %s" % (" ".join(argv), process.returncode,
                                   stderr.decode(errors="replace")[-500:]))
    return wall


def tree_peak_kib(argv):
    """The peak resident set of every process of the run, summed (KiB)."""
    peaks, tree = {}, set()

    def sample(process, _):
        tree.add(process.pid)
        tree.update(children_of(tree))
        for pid in tree:
            kib = peak_kib(pid)
            if kib is not None:
                peaks[pid] = max(kib, peaks.get(pid, 0))

    run(argv, sample)
    return sum(peaks.values())


def rss_kib(pid):
    """(VmRSS, VmHWM) of pid in KiB, or None once it is gone."""
    found = {}
    try:
        with open("/proc/%d/status" % pid) as status:
            for line in status:
                if line.startswith(("VmRSS:", "VmHWM:")):
                    found[line.split(":")[0]] = int(line.split()[1])
    except OSError:
        return None
    return found.get("VmRSS"), found.get("VmHWM")


def long_fork_run(forkcheck, python, forker, forks, out):
    """forkcheck exec on `forks` forks one after another: its own memory over time, sizes left."""
    argv = [forkcheck, "exec", "--quiet", "--out", out, "--", python, forker, str(forks)]
    samples = []  # (seconds, VmRSS KiB, VmHWM KiB) of forkcheck's own process

    def sample(process, seconds):
        got = rss_kib(process.pid)
        if got and got[0] is not None:
            samples.append((seconds, got[0], got[1]))

    wall = run(argv, sample, every=0.5)
    if not samples:
        fail("forkcheck ended before its memory could be read")

    def at(fraction):
        t = wall * fraction
        return min(samples, key=lambda s: abs(s[0] - t))

    marks = ", ".join("%.0f s %.1f MiB" % (s[0], s[1] / 1024)
                      for s in (at(0.25), at(0.5), at(0.75), samples[-1]))
    sizes = ", ".join("%s %.0f KiB" % (name, os.path.getsize(os.path.join(out, name)) / 1024)
                      for name in ("report.json", "run.jsonl")
                      if os.path.exists(os.path.join(out, name)))
    print("%d forks one after another under exec: %.1f s; forkcheck's own resident memory %s "
          "(peak %.1f MiB); it left %s" % (forks, wall, marks, samples[-1][2] / 1024, sizes))


def has_torch(python):
    return python and subprocess.run([python, "-c", "import torch"], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL).returncode == 0


def pairs(label, plain, under, runs):
    """Alternating plain and forkcheck runs: (plain walls, forkcheck walls)."""
    walls = ([], [])
    for i in range(runs):
        walls[0].append(run(plain))
        walls[1].append(run(under(i)))
    print("  %s: plain %s" % (label, " ".join("%.3f" % w for w in walls[0])))
    print("  %s: exec  %s" % (label, " ".join("%.3f" % w for w in walls[1])))
    return walls


def verdict(within):
    return "within the target" if within else "OVER the target"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--python", default="/usr/bin/python3")
    parser.add_argument("--torch-python", default="/usr/bin/python3")
    parser.add_argument("--runs", type=int, default=20, help="pairs for -c pass (torch: a quarter)")
    parser.add_argument("--long-forks", type=int, default=0,
                        help="also a long run of this many forks under exec (0: none)")
    args = parser.parse_args()
    forkcheck = os.path.join(args.build, "bin", "forkcheck")
    if not os.access(forkcheck, os.X_OK):
        fail("%s is not built" % forkcheck)
    if not shutil.which(args.python):
        fail("no Python at %s" % args.python)
    scratch = tempfile.mkdtemp(prefix="forkcheck-bench-")
    ok = True
    try:
        def under(command):
            return lambda i: [forkcheck, "exec", "--quiet", "--out",
                              os.path.join(scratch, "out-%d" % i), "--"] + command

        with open("/proc/loadavg") as loadavg:
            load = " ".join(loadavg.read().split()[:3])
        print("forkcheck exec's cost (%d CPUs, load %s before), %s"
              % (os.cpu_count(), load, args.python))
        do_nothing = [args.python, "-c", "pass"]
        walls = pairs("-c pass wall s", do_nothing, under(do_nothing), args.runs)
        added_ms = statistics.median(b - a for a, b in zip(*walls)) * 1000
        plain_mib = statistics.median(
            tree_peak_kib(do_nothing) for _ in range(5)) / 1024
        with_mib = statistics.median(
            tree_peak_kib(under(do_nothing)(i)) for i in range(5)) / 1024
        print("-c pass: %.1f ms plainly, %.1f ms under exec: +%.1f ms (median of pairs; target "
              "at most %d ms): %s" % (statistics.median(walls[0]) * 1000,
                                      statistics.median(walls[1]) * 1000, added_ms,
                                      TARGET_PASS_MS, verdict(added_ms <= TARGET_PASS_MS)))
        print("-c pass: %.1f MiB plainly, %.1f MiB with forkcheck's processes: +%.1f MiB (peak RSS "
              "summed over processes, median of 5; target at most %d MiB): %s"
              % (plain_mib, with_mib, with_mib - plain_mib, TARGET_PASS_MIB,
                 verdict(with_mib - plain_mib <= TARGET_PASS_MIB)))
        ok = added_ms <= TARGET_PASS_MS and with_mib - plain_mib <= TARGET_PASS_MIB

        forker = os.path.join(scratch, "forks.py")
        with open(forker, "w") as out:
            out.write(FORK_PROGRAM)
        command = [args.python, forker, str(FORKS)]
        walls = pairs("%d forks wall s" % FORKS, command, under(command), 3)
        per_fork_ms = statistics.median(b - a for a, b in zip(*walls)) * 1000 / FORKS
        report = os.path.join(scratch, "out-0")
        sizes = ", ".join("%s %.0f KiB" % (name, os.path.getsize(os.path.join(report, name)) / 1024)
                          for name in ("report.json", "run.jsonl")
                          if os.path.exists(os.path.join(report, name)))
        print("%d forks one after another: %.2f s plainly, %.2f s under exec: +%.2f ms a fork "
              "(median of pairs; target at most %d ms): %s; it left %s"
              % (FORKS, statistics.median(walls[0]), statistics.median(walls[1]), per_fork_ms,
                 TARGET_FORK_MS, verdict(per_fork_ms <= TARGET_FORK_MS), sizes))
        ok = ok and per_fork_ms <= TARGET_FORK_MS
        if args.long_forks > 0:
            long_fork_run(forkcheck, args.python, forker, args.long_forks,
                          os.path.join(scratch, "long"))

        if not has_torch(args.torch_python):
            print("torch program: not measured: %s cannot import torch" % args.torch_python)
            return 0 if ok else 1
        program = os.path.join(scratch, "train.py")
        with open(program, "w") as out:
            out.write(TORCH_PROGRAM)
        # Steps for about 1 s of training on this machine, counted once plainly.
        trained = float(subprocess.run([args.torch_python, program, "200"], check=True,
                                       stdout=subprocess.PIPE).stdout)
        steps = str(max(int(200 / max(trained, 1e-3)), 1))
        command = [args.torch_python, program, steps]
        walls = pairs("torch wall s", command, under(command), max(args.runs // 4, 3))
        share = statistics.median(b / a - 1 for a, b in zip(*walls))
        print("torch program (%s steps, about 1 s of training after import): %.2f s plainly, "
              "%.2f s under exec: +%.1f %% (median of pairs; target at most %d %%): %s"
              % (steps, statistics.median(walls[0]), statistics.median(walls[1]), share * 100,
                 TARGET_TORCH_SHARE * 100, verdict(share <= TARGET_TORCH_SHARE)))
        ok = ok and share <= TARGET_TORCH_SHARE
        return 0 if ok else 1
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
