#!/usr/bin/env python3
"""shm-bus-error in Python: DataLoader workers hand 4 MiB batches to the main process through
shared memory. Run it with /dev/shm replaced by a small tmpfs (root, a mount namespace of its own):

    unshare -m sh -c 'mount -t tmpfs -o size=4m tmpfs /dev/shm && python3 shm_bus_error.py'
    unshare -m sh -c 'mount -t tmpfs -o size=4m tmpfs /dev/shm && python3 shm_bus_error.py file_system'
    unshare -m sh -c 'mount -t tmpfs -o size=64m tmpfs /dev/shm && python3 shm_bus_error.py'

With torch 1.13 (Debian bookworm) the first two die the same way: "ERROR: Unexpected bus error
encountered in worker. This might be caused by insufficient shared memory (shm)." and
"RuntimeError: DataLoader worker (pid N) is killed by signal: Bus error. ..." The file_system
strategy does not help: it too creates each storage in /dev/shm (shm_open of
/dev/shm/torch_<pid>_<n>, seen with strace); it only passes the name instead of the descriptor.
The third (a bigger shm) prints "batches 4"."""
import sys

import torch
import torch.multiprocessing as mp
from torch.utils.data import DataLoader, Dataset


class Big(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        return torch.full((512, 1024), float(i))  # 2 MiB; a batch of 2 is collated into 4 MiB


if __name__ == "__main__":
    if len(sys.argv) > 1:
        mp.set_sharing_strategy(sys.argv[1])
    print("strategy", mp.get_sharing_strategy(), flush=True)
    n = sum(1 for _ in DataLoader(Big(), batch_size=2, num_workers=2))
    print("batches", n)
