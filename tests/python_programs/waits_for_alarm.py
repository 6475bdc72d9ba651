# Waits in signal.pause() for its own alarm (signal.alarm): a still program that goes on by itself
# when the signal comes (written here). A wait that ends by itself: sleeping, never a hang.
import signal
import sys

rang = []
signal.signal(signal.SIGALRM, lambda *_: rang.append(True))
signal.alarm(4)  # <alarm>
signal.pause()  # <pause>
sys.exit(0 if rang else "signal.pause() returned before the alarm: another signal ended it")
