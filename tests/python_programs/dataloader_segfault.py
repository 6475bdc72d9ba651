# A DataLoader worker that segfaults in __getitem__, as in
# https://github.com/pytorch/pytorch/issues/4969 ("ERROR: Unexpected segmentation fault encountered
# in worker", then "DataLoader worker (pid N) is killed by signal: Segmentation fault"): the
# workers install PyTorch's own SIGSEGV handler, which prints that line and dies, and nothing says
# where. A null read through ctypes stands in for the native library that crashed there.
import ctypes

import torch
from torch.utils.data import DataLoader, Dataset


class Crashes(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        if i == 2:
            ctypes.string_at(0)  # <segfault>
        return torch.tensor([i])


if __name__ == "__main__":
    for batch in DataLoader(Crashes(), num_workers=1):
        print(batch)
