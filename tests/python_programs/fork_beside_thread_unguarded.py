# fork_beside_thread.py as a script without a __main__ guard (as notebooks and quick scripts
# are): the fork is as hazardous, and spawn or forkserver alone would not fix it, since each of
# their workers runs this top level again and fails there. Written here.
import multiprocessing as mp
import threading

stop = threading.Event()


def flush_metrics():
    while not stop.wait(0.05):
        pass


def work():
    pass


threading.Thread(target=flush_metrics, name="metrics-flusher", daemon=True).start()
worker = mp.get_context("fork").Process(target=work)
worker.start()  # <fork>
worker.join()
stop.set()
