# The worker is defined under the __main__ guard: fork has it, spawn and forkserver workers
# re-import the module as __mp_main__ and do not; the parent exits 0 all the same.
import multiprocessing as mp

if __name__ == "__main__":
    def worker(q):
        q.put(42)

    q = mp.Queue()
    p = mp.Process(target=worker, args=(q,))
    p.start()
    p.join()
    print("parent done", p.exitcode)
