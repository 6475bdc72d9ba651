# Forks a worker while a named thread runs: what `forkcheck watch` flags.
import multiprocessing as mp
import threading

stop = threading.Event()


def flush_metrics():
    while not stop.wait(0.05):
        pass


def work():
    pass


if __name__ == "__main__":
    threading.Thread(target=flush_metrics, name="metrics-flusher", daemon=True).start()  # <thread>
    worker = mp.get_context("fork").Process(target=work)
    worker.start()  # <fork>
    worker.join()
    stop.set()
