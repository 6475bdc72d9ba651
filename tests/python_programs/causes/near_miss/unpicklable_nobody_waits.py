# Near miss of queue-put-unpicklable: the feeder prints a PicklingError, but nothing waits for
# that queue: the program waits on a threading.Event. The error is not why it stopped.
import multiprocessing as mp, threading, time
if __name__ == "__main__":
    q = mp.Queue()
    q.put(lambda: 0)            # a log queue nobody reads: the feeder prints a PicklingError
    time.sleep(0.5)
    threading.Event().wait()    # the program then waits on something else entirely
