#!/usr/bin/python3
"""forkcheck.exe end to end under wine (ci/check-win32-cross.sh, step 6).

Runs the cross-built forkcheck.exe as a Windows user would: `all` (with forkcheck-repro.exe
beside it; the torch program is not built by the cross check, and the run must say so), `exec`
of a child that hangs, crashes, or leaves a grandchild behind, and bad input. Checks what the
reports say, not only the exit statuses.

usage: check_forkcheck_exe.py WINE BIN_DIR SMOKE_CHILD WORK_DIR SCHEMA
"""
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import validate_report  # noqa: E402  (tests/validate_report.py)

# Spawn variants that do not run on Windows, and the words their reasons must hold. Every other
# spawn variant must run: a new skip here is a change someone has to look at.
SPAWN_SKIPS = {
    ("cuda-before-fork", "spawn"): "no CUDA driver",
    ("graceful-shutdown", "spawn"): "Windows has no SIGTERM",
    ("objc-initialize-fork", "spawn"): "Objective-C runtime",
    ("socket-handle-spawn", "spawn-dupfd"): "not implemented on Windows",
    ("shm-bus-error", "spawn"): "needs Linux",
    ("fd-passing-exhaustion", "spawn"): "needs Linux",
}

failures = []


def check(ok, what):
    print(("   ok    " if ok else "   FAIL  ") + what)
    if not ok:
        failures.append(what)
    return ok


def win(path):
    """A host path as wine's Z: drive names it."""
    return "Z:" + os.path.abspath(path).replace("/", "\\")


def run(wine, exe, *args, cwd, timeout=600):
    """Runs forkcheck.exe in `cwd` (so that a default out directory lands there, not in the tree)."""
    t0 = time.monotonic()
    try:
        p = subprocess.run([wine, exe, *args], capture_output=True, text=True, errors="replace",
                           timeout=timeout, stdin=subprocess.DEVNULL, cwd=cwd)
    except subprocess.TimeoutExpired:
        check(False, f"forkcheck.exe {' '.join(args)}: still running after {timeout} s")
        return None, "", [], time.monotonic() - t0
    # wine's own complaints (its debugger at a crash) are not forkcheck's lines
    err = [l for l in p.stderr.splitlines() if l.startswith("forkcheck")]
    return p.returncode, p.stdout, err, time.monotonic() - t0


def load(out_dir):
    with open(os.path.join(out_dir, "report.json"), encoding="utf-8") as f:
        return json.load(f)


def check_all(wine, exe, work, schema):
    out = os.path.join(work, "fc-all")
    rc, stdout, err, took = run(wine, exe, "all", "--out", win(out), cwd=work)
    print(f"   forkcheck.exe all: exit {rc} in {took:.1f} s")
    # A native build (no libtorch for mingw): it looks for no torch program, says so, and exits 0
    # when every native case is as documented.
    check(rc == 0, f"all: exit 0 (every native case as documented), got {rc}")
    catalog = [l for l in err if "--list" in l]
    check(not catalog, f"all: no catalog error: {catalog}")
    check("torch cases: none: this forkcheck was built without libtorch" in stdout,
          "all: says the torch cases are not in this build, and why")
    for name in ("report.json", "report.html", "junit.xml", "summary.md", "run.jsonl"):
        check(os.path.getsize(os.path.join(out, name)) > 0, f"all: wrote {name}")
    check(validate_report.main(schema, os.path.join(out, "report.json")) == 0,
          "all: report.json matches the schema")
    r = load(out)
    run_ = r["run"]
    env = run_.get("environment", {})
    check(run_["platform"]["os"] == "Windows", f"all: platform {run_['platform']['os']}")
    check(env.get("start_methods") == ["spawn"], f"all: start methods {env.get('start_methods')}")
    meaning = env.get("ptrace_scope", {}).get("meaning", "")
    check("dbghelp" in meaning, f"all: the environment says how stacks are taken: {meaning}")
    check(not run_.get("catalog_errors"), "all: report.json names no catalog error")
    check(env.get("collected_by", {}).get("torch_program") is False,
          "all: report.json says this forkcheck has no torch program")
    s = r["summary"]
    check(s["mismatches"] == 0 and s["harness_failures"] == 0,
          f"all: every outcome as expected ({s['mismatches']} mismatches, "
          f"{s['harness_failures']} harness failures)")
    variants = [(c["id"], v) for c in r["cases"] for v in c["variants"]]
    check(len(r["cases"]) >= 8 and len(variants) >= 30,
          f"all: {len(r['cases'])} cases, {len(variants)} variants of the native program")
    not_spawn = [(c, v) for c, v in variants if v["start_method"] in ("fork", "forkserver")]
    check(len(not_spawn) >= 20 and
          all(v["outcome"] == "skip" and "Windows has no fork()" in v["skip_reason"]
              for _, v in not_spawn),
          f"all: {len(not_spawn)} fork and forkserver variants skipped, saying Windows has no fork()")
    ran = 0
    seen = set()
    for c, v in variants:
        if v["start_method"] != "spawn":
            continue
        why = SPAWN_SKIPS.get((c, v["name"]))
        if why:
            seen.add((c, v["name"]))
            check(v["outcome"] == "skip" and why in v["skip_reason"],
                  f"all: {c}/{v['name']} skipped because: {v['skip_reason']}")
        else:
            ran += v["outcome"] != "skip"
            check(v["outcome"] != "skip" and v["matched"],
                  f"all: {c}/{v['name']} ran: {v['outcome']} (expected {v['expected']})")
    check(seen == set(SPAWN_SKIPS), f"all: every expected spawn skip was there: {sorted(seen)}")
    check(ran >= 8, f"all: {ran} spawn variants ran")
    verdicts = {c["id"]: c["verdict"] for c in r["cases"]}
    for case in ("global-config-spawn", "socket-handle-spawn", "state-not-shared"):
        check(verdicts.get(case) == "reproduced", f"all: {case} {verdicts.get(case)} under spawn")

    junit = ET.parse(os.path.join(out, "junit.xml")).getroot()
    cases = junit.findall(".//testcase")
    skipped = sum(1 for _, v in variants if v["outcome"] == "skip")
    catalog_cases = [t for t in cases if t.get("classname") == "forkcheck"]
    check(len(cases) == len(variants) and len(junit.findall(".//skipped")) == skipped,
          f"all: junit.xml has {len(cases)} testcases ({len(variants)} variants), {skipped} "
          f"skipped")
    check(not catalog_cases, "all: junit.xml has no catalog error")
    with open(os.path.join(out, "summary.md"), encoding="utf-8") as f:
        md = f.read()
    check(all(c["id"] in md for c in r["cases"]) and "built without libtorch" in md,
          "all: summary.md names every case and says the torch cases are not in this build")
    with open(os.path.join(out, "report.html"), encoding="utf-8") as f:
        html = f.read()
    check('id="catalog-errors"' not in html and "built without libtorch" in html,
          "all: report.html says the torch cases are not in this build, and no case is missing")
    return out


def check_exec(wine, exe, child, work):
    out = os.path.join(work, "fc-exec-hang")
    # No --hang-after: the deadline ends it. Whether it is then called a hang or a timeout is what
    # the tree was doing at the deadline: on a busy machine wine may still be starting the child
    # (working) when 3 s have passed, and a timeout is then the truth (the hang rule itself is
    # checked by the stall below and by supervisor_smoke).
    rc, _, _, _ = run(wine, exe, "exec", "--timeout", "3", "--out", win(out), "--",
                         win(child), "hang", cwd=work)
    v = load(out)["cases"][0]["variants"][0]
    check(rc == 1 and v["outcome"] in ("hang", "timeout") and v["watchdog"]["deadline_passed"],
          f"exec hang: exit {rc}, {v['outcome']}: {v['message']}")
    check(v["duration_s"] >= 3.0, f"exec hang: ended {v['duration_s']:.2f} s after its start")
    # At a deadline the stacks get what is left of its promise: on a busy machine (beside stress
    # -c 4, under wine) dbghelp overran it once; then the note must say so. Taken at the stall,
    # which on a busy machine can begin before the child reaches its Sleep (wine's start-up was
    # once still for a second there, in a clean-clone run beside other builds): walked, then.
    walked = [t for t in v["stacks"] if t["frames"]]
    check((v["stacks_method"] == "dbghelp" and walked) or "budget" in v.get("stacks_note", ""),
          f"exec hang: stacks taken with {v['stacks_method']}, {len(v['stacks'])} threads, "
          f"{len(walked)} walked; {v.get('stacks_note', '')}")
    # Time called by a stall instead: the stacks get the whole budget, and dbghelp walks them.
    out = os.path.join(work, "fc-exec-stall")
    # 3 s still: wine's own start-up, on a busy machine, has been still for a second before the
    # child reached its Sleep; the stall must be the child's.
    rc, _, _, _ = run(wine, exe, "exec", "--hang-after", "3", "--timeout", "120", "--out",
                      win(out), "--", win(child), "hang", cwd=work)
    v = load(out)["cases"][0]["variants"][0]
    walked = [t for t in v["stacks"] if any("Sleep" in f for f in t["frames"])]
    check(rc == 1 and v["outcome"] == "hang" and not v["watchdog"]["deadline_passed"],
          f"exec stall: exit {rc}, {v['outcome']}: {v['message']}")
    check(v["stacks_method"] == "dbghelp" and walked,
          f"exec stall: stacks taken with {v['stacks_method']}, {len(v['stacks'])} threads, "
          f"{len(walked)} in Sleep; {v.get('stacks_note', '')}")

    out = os.path.join(work, "fc-exec-crash")
    rc, _, _, _ = run(wine, exe, "exec", "--timeout", "20", "--out", win(out), "--",
                      win(child), "crash", cwd=work)
    v = load(out)["cases"][0]["variants"][0]
    check(rc == 1 and v["outcome"] == "crash" and "0xC0000005" in v["message"],
          f"exec crash: exit {rc}, {v['outcome']}: {v['message']}")

    out = os.path.join(work, "fc-exec-tree")
    rc, _, _, _ = run(wine, exe, "exec", "--timeout", "20", "--out", win(out), "--",
                      win(child), "tree", cwd=work)
    v = load(out)["cases"][0]["variants"][0]
    m = re.search(r"grandchild (\d+)", v["stdout"])
    killed = v["watchdog"]["leftovers_killed"]
    check(rc == 0 and v["outcome"] == "ok", f"exec tree: exit {rc}, {v['outcome']}")
    check(m is not None and int(m.group(1)) in killed,
          f"exec tree: the grandchild left behind ({m and m.group(1)}) was killed with the job: "
          f"{killed}")


def check_bad_input(wine, exe, child, work, kept):
    report = os.path.join(kept, "report.json")
    with open(report, "rb") as f:
        before = hashlib.sha256(f.read()).hexdigest()
    bad = {
        # aimed at the kept report's directory: an error must leave it as it was
        "an unknown case": (["run", "--out", win(kept), "no-such-case"],
                            "unknown case 'no-such-case'"),
        "a bad flag": (["all", "--out", win(kept), "--no-such-flag"], "--no-such-flag"),
        "a command that does not exist": (["exec", "--out", win(kept), "--",
                                           "C:\\no\\such\\program.exe"], "cannot execute"),
        "an --out under a file": (["all", "--out", win(report) + "\\sub"], "--out"),
        "watch, which needs fork": (["watch", "--", win(child), "ok"], "not supported on Windows"),
    }
    for what, (args, words) in bad.items():
        rc, _, err, _ = run(wine, exe, *args, cwd=work)
        errors = [l for l in err if l.startswith("forkcheck: error:")]
        check(rc == 2 and len(errors) == 1 and words in errors[0],
              f"{what}: exit {rc}, {errors}")
    with open(report, "rb") as f:
        check(hashlib.sha256(f.read()).hexdigest() == before,
              "bad input lost nothing: the earlier report.json is unchanged")


def main(wine, bin_dir, child, work, schema):
    exe = os.path.join(bin_dir, "forkcheck.exe")
    shutil.rmtree(os.path.join(work, "forkcheck-report"), ignore_errors=True)  # an earlier run's
    kept = check_all(wine, exe, work, schema)
    check_exec(wine, exe, child, work)
    check_bad_input(wine, exe, child, work, kept)
    check(not os.path.exists(os.path.join(work, "forkcheck-report")),
          "no command wrote to the default out directory")
    if failures:
        print(f"forkcheck.exe under wine: {len(failures)} check(s) failed")
        return 1
    print("forkcheck.exe under wine: ok")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 6:
        print(__doc__)
        sys.exit(2)
    sys.exit(main(*sys.argv[1:]))
