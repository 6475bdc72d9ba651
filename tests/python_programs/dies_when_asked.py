# A program that dies of SIGSEGV when forkcheck asks it for its stacks: it replaces the stacks
# handler the bootstrap installed with one that kills it, then keeps running Python code. Stands
# for any harm a look could do: the death must be said to follow forkcheck's request, never to be
# the program's own crash.
import os
import signal

asked = int(os.environ["FORKCHECK_PY_STACKS_SIGNAL"])
signal.signal(asked, lambda number, frame: os.kill(os.getpid(), signal.SIGSEGV))
print("running", flush=True)
while True:
    sorted(range(1000))
