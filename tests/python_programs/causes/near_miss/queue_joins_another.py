# Near miss of queue-joined-before-drained: one child is stuck writing a queue nobody reads, but
# the parent joins another child (waiting on an Event). No rule may say the join is the cause.
import multiprocessing as mp, time
def putter(q):
    q.put(b"x" * 1000000)   # feeder blocks: nobody reads q
def waiter(ev):
    ev.wait()               # never set
if __name__ == "__main__":
    mp.set_start_method("fork")
    q = mp.Queue()
    ev = mp.Event()
    p1 = mp.Process(target=putter, args=(q,)); p1.start()
    p2 = mp.Process(target=waiter, args=(ev,)); p2.start()
    time.sleep(0.5)
    p2.join()               # joins p2, not p1
