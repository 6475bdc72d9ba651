# Near miss of sigterm-handler-returned: the SIGTERM handler sets a flag that the loop reads after
# its 8 s step; the child ends by itself. Under --timeout 4 it is a timeout, with no such cause.
import multiprocessing as mp, signal, sys, time
stop = False
def on_term(signum, frame):
    global stop
    stop = True                  # asks the loop to end: it does, at its next turn
def work():
    signal.signal(signal.SIGTERM, on_term)
    while not stop:
        time.sleep(8)            # one long step of work
    sys.exit(0)
if __name__ == "__main__":
    mp.set_start_method("fork")
    p = mp.Process(target=work); p.start()
    time.sleep(0.5)
    p.terminate()
    p.join()                     # returns within 8 s
    print("joined")
