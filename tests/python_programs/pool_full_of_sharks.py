# "Why your multiprocessing Pool is stuck (it's full of sharks!)", Itamar Turner-Trauring:
# https://pythonspeed.com/articles/python-multiprocessing/
# The article's program, as published but for one change: its log file is os.devnull (the
# original writes out.log, which the parent's logging thread grows by megabytes a second). A
# fork Pool's worker inherits logging's handler lock held by the parent's logging threads and
# waits on it for ever, while the parent's threads keep running Python code.
import logging
import os
from logging.handlers import QueueHandler, QueueListener
from multiprocessing import Pool
from queue import Queue
from threading import Thread


def setup_logging():
    # Logs get written to a queue, and then a thread reads
    # from that queue and writes messages to a file:
    _log_queue = Queue()
    QueueListener(_log_queue, logging.FileHandler(os.devnull)).start()
    logging.getLogger().addHandler(QueueHandler(_log_queue))

    # Our parent process is running a thread that
    # logs messages:
    def write_logs():
        while True:
            logging.error("hello, I just did something")

    Thread(target=write_logs).start()


def runs_in_subprocess():
    print("About to log...")
    logging.error("hello, I did something")  # <blocked>
    print("...logged")


if __name__ == "__main__":
    setup_logging()

    # Meanwhile, we start a process pool that writes some
    # logs. We do this in a loop to make race condition more
    # likely to be triggered.
    while True:
        with Pool() as pool:
            pool.apply(runs_in_subprocess)
