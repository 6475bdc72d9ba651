# A Python program that runs a shell line, which runs a Python child that fails and handles its
# failure itself (`|| echo`), as build and test scripts do. forkcheck sees the child fail but not
# the shell look at it: that end is reported as not counted, with why, unless --worker-failures
# fail is given.
import subprocess
import sys

subprocess.run(["/bin/sh", "-c", '"$0" -c "raise ValueError(42)" 2>/dev/null || echo handled by the shell',
                sys.executable], check=True)
