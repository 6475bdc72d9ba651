# After "Pytorch多进程睡死的大坑" (ZERO-A-ONE, 2021-03-09): torch training workers never end on a
# Linux server, and work on Windows (spawn). Here, as in many such scripts, the worker is defined
# under the __main__ guard. fork: the parent's OpenMP pool (libgomp) is copied dead into each
# worker, whose first parallel region waits for ever; spawn and forkserver: each worker imports
# the module again as __mp_main__, finds no `train` and fails, and the parent exits 0.
import multiprocessing as mp

import torch

if __name__ == "__main__":

    def train(steps):  # <def>
        x = torch.ones(512, 512)
        for _ in range(steps):
            x.sum()  # <parallel>  an OpenMP parallel region (512x512 is above ATen's grain)
        return steps

    torch.set_num_threads(2)  # Debian's libtorch starts with 1 on a 2-CPU machine
    torch.ones(512, 512).sum()  # the parent's OpenMP pool is live from here
    workers = [mp.Process(target=train, args=(10,)) for _ in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    print("done: exit codes", [w.exitcode for w in workers])
