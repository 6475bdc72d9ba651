# An alarm that can never end the wait (written here, after a review of forkcheck's alarm rule):
# SIGALRM is blocked in the only thread, which then reads a pipe only it could write. The pending
# alarm changes nothing: a hang, never a sleep until an alarm.
import os
import signal

signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
signal.alarm(60)
r, w = os.pipe()
print("reading my own pipe", flush=True)
os.read(r, 1)  # <deadlock>
