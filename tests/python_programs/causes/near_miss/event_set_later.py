# Near miss of a deadlock across processes: a waiter on an Event a sleeper sets in 8 s. The chain
# must end at the sleeper (asleep), never a cycle.
import multiprocessing as mp, time
def waiter(ev): ev.wait()
def setter(ev):
    time.sleep(8); ev.set()        # sets it in 8 s
if __name__ == "__main__":
    mp.set_start_method("fork")
    ev = mp.Event()
    w = mp.Process(target=waiter, args=(ev,)); w.start()
    s = mp.Process(target=setter, args=(ev,)); s.start()
    w.join(); s.join(); print("done")
