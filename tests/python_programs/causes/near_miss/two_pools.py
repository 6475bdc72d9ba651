# Near miss of pool-worker-ended-mid-task: pool A loses a fire-and-forget task (os._exit) while
# pool B waits for a task that never ends. Which Pool lost a task is not known: no FIX.
import multiprocessing as mp, os, time
def die(_):
    os._exit(3)
def block(_):
    mp.Event()  # placeholder
    time.sleep(0.1)
    import threading; threading.Event().wait()   # this task never ends
if __name__ == "__main__":
    mp.set_start_method("fork")
    a = mp.Pool(1)
    a.apply_async(die, (0,))          # fire and forget: nobody waits on it
    time.sleep(0.5)
    b = mp.Pool(1)
    b.map(block, [1])                 # waits for a task that never ends
