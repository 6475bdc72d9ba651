# Writes lines of the wrong shape to forkcheck's Python channel, as a program that found the
# bootstrap's connection could (written here): fields of the wrong type in a hello and in events.
# forkcheck drops those lines and runs on; the program ends with 0. Plainly (no bootstrap) it
# writes nothing and ends with 0.
import os
import sys

boot = sys.modules.get("forkcheck_boot")
if boot is not None:
    pid = str(os.getpid()).encode()
    sock = boot._connect()
    sock.sendall(b'{"ev":"hello","pid":' + pid + b',"role":"dumps","file":"yes"}\n')
    sock.close()
    boot._emit("alarm", seconds="soon", ignored="no")
    boot._emit("exit", code={"not": "a number"}, torch=[1, 2])
    boot._emit("thread", ident="one", native_id="two", name=3)
print("garbled")
