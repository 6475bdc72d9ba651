# Waits in signal.pause() for an alarm set in native code (libc's alarm() through ctypes, as a C
# extension would set it), which forkcheck's Python bootstrap does not see (written here): the
# tree is still, and said stalled, until the signal comes. Any other caught signal would end the
# wait early, so forkcheck's own look (a signal, for Python stacks) must not be sent to it.
import ctypes
import ctypes.util
import signal
import sys

rang = []
signal.signal(signal.SIGALRM, lambda *_: rang.append(True))
ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True).alarm(4)
signal.pause()  # <pause>
sys.exit(0 if rang else "signal.pause() returned before the alarm: another signal ended it")
