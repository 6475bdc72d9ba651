#!/usr/bin/env python3
"""The layers are held by the build (cmake/ForkcheckLayers.cmake), shown here by compiling.

For each layer's target, with that target's own compile command from compile_commands.json: a
file that includes a header of a layer the target links compiles, and one that includes a header
of a layer it does not link fails with "No such file". The first half keeps the second honest: a
command that could find nothing would fail both.

Usage: layering_test.py BUILD_DIR
"""
import concurrent.futures
import json
import os
import shlex
import subprocess
import sys

# target: (headers it must see, headers it must not see)
LAYERS = {
    "fc_launch": (["launch/process.h", "forkcheck/launch.h"],
                  ["core/channel.h", "cases/support/scratch_dir.h", "reports/text.h",
                   "harness/supervise/watchdog.h"]),
    "fc_repro_core": (["core/channel.h", "core/outcome.h", "launch/process.h"],
                      ["cases/support/scratch_dir.h", "reports/text.h",
                       "harness/supervise/watchdog.h"]),
    "forkcheck-repro": (["cases/support/scratch_dir.h", "core/channel.h", "launch/process.h"],
                        ["reports/text.h", "harness/supervise/watchdog.h"]),
    "fc_reports": (["reports/text.h", "core/outcome.h", "core/quantity_text.h"],
                   ["core/channel.h", "cases/support/scratch_dir.h",
                    "harness/supervise/watchdog.h"] +
                   ([] if os.name == "nt" else ["launch/process.h"])),
    "fc_harness": (["harness/supervise/watchdog.h", "reports/text.h", "launch/process.h",
                    "core/outcome.h", "core/quantity_text.h"],
                   ["core/channel.h", "cases/support/scratch_dir.h"]),
}


def command_of(entries, target):
    """The compile command of one of `target`'s translation units, as an argument list."""
    marker = "CMakeFiles/%s.dir/" % target
    for e in entries:
        out = e.get("output", "")
        args = e.get("arguments") or shlex.split(e["command"])
        if not out and "-o" in args:
            out = args[args.index("-o") + 1]
        if marker in out.replace(os.sep, "/"):
            return e["directory"], args, e["file"]
    return None


def probe(directory, args, source, header):
    """Compiles `#include "header"` with `args` in place of `source`: (ok, compiler's output)."""
    cmd = []
    skip = False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
            continue
        if a in ("-c", "-MD", "-MMD") or a == source or os.path.basename(a).startswith("ccache"):
            continue
        cmd.append(a)
    cmd += ["-fsyntax-only", "-x", "c++", "-"]
    env = dict(os.environ, LC_ALL="C")  # the compiler's words, in English
    p = subprocess.run(cmd, cwd=directory, input='#include "%s"\n' % header, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    return p.returncode == 0, p.stdout


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    with open(os.path.join(sys.argv[1], "compile_commands.json")) as f:
        entries = json.load(f)
    failures = []
    tries = []  # (target, header, whether it must compile, the compile under way)
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        for target, (sees, blind_to) in LAYERS.items():
            found = command_of(entries, target)
            if found is None:
                failures.append("%s: no compile command in compile_commands.json" % target)
                continue
            for header in sees + blind_to:
                tries.append((target, header, header in sees, pool.submit(probe, *found, header)))
        for target, header, must, done in tries:
            ok, out = done.result()
            if must and not ok:
                failures.append("%s cannot include %s, which it links:\n%s" % (target, header, out))
            elif not must and ok:
                failures.append("%s includes %s, of a layer it does not link" % (target, header))
            elif not must and "No such file" not in out and "file not found" not in out:
                failures.append("%s: including %s failed, but not for want of the file:\n%s"
                                % (target, header, out))
    checked = len(tries)
    for f in failures:
        print("FAIL: " + f)
    if failures:
        return 1
    print("layers: %d includes tried on %d targets; each sees its own layer and those it links,"
          " and no other" % (checked, len(LAYERS)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
