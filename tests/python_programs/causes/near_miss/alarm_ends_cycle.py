# Near miss of a proven deadlock: parent and child each read a pipe the other writes, but the
# parent armed alarm(5), whose handler writes: not proven. The alarm is set in native code (libc's
# alarm() through ctypes), which the bootstrap does not see: --hang-after then calls time, and the
# wait chain must still not claim a deadlock (the parent catches SIGALRM).
import ctypes, ctypes.util, os, signal, sys
r1, w1 = os.pipe(); r2, w2 = os.pipe()
if os.fork() == 0:
    os.read(r1, 1); os.write(w2, b"x"); os._exit(0)   # waits for the parent
signal.signal(signal.SIGALRM, lambda *a: os.write(w1, b"x"))
ctypes.CDLL(ctypes.util.find_library("c")).alarm(5)  # in 5 s the parent's own timer lets the child go on
os.read(r2, 1)                  # waits for the child
os.wait(); print("went on")
