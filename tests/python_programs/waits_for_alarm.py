# Waits in signal.pause() for its own alarm: a still program that goes on by itself when the
# signal comes (written here). Any other caught signal would end the wait early, so forkcheck's
# own look (a signal, for Python stacks) must not be sent to it: it would change the program.
import signal
import sys

rang = []
signal.signal(signal.SIGALRM, lambda *_: rang.append(True))
signal.alarm(4)
signal.pause()  # <pause>
sys.exit(0 if rang else "signal.pause() returned before the alarm: another signal ended it")
