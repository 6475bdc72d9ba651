"""The torch kit names a package's torch cases from their source files (repros/cases/CMakeLists.txt:
autograd_after_fork.cc is autograd-after-fork): those names are the ids the torch program lists.

    torch_case_list_test.py TORCH_PROGRAM SOURCE...
"""
import json
import os
import subprocess
import sys


def main():
    program, sources = sys.argv[1], sys.argv[2:]
    named = sorted(os.path.splitext(os.path.basename(s))[0].replace("_", "-") for s in sources)
    listed = sorted(c["id"] for c in json.loads(
        subprocess.run([program, "--list"], check=True, stdout=subprocess.PIPE).stdout)["cases"])
    if named != listed:
        print("FAIL: the kit would name %s; %s lists %s" % (named, program, listed))
        return 1
    print("ok: the %d torch cases' files are named as their ids: %s" % (len(named), ", ".join(named)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
