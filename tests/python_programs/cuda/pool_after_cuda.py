# Source: pytorch/pytorch#1494 "Improper error msg when calling Variable.cuda() in forked subprocess"
#   https://github.com/pytorch/pytorch/issues/1494, and the reports gathered in
#   https://github.com/pytorch/pytorch/issues/40403 ("Cannot re-initialize CUDA in forked subprocess")
# Shape: the parent puts its model on the GPU, then hands work to a multiprocessing.Pool under the
# default start method (fork on Linux before Python 3.14); each worker moves its batch to the GPU.
# Run: each worker raises "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use
# CUDA with multiprocessing, you must use the 'spawn' start method"; map() re-raises it in the
# parent, which exits 1. Under spawn or forkserver each worker initialises CUDA itself and the
# program prints the four sums.
import multiprocessing as mp

import torch

weights = None


def score(i):
    batch = torch.full((4,), float(i)).cuda()
    return float(batch.sum())


if __name__ == "__main__":
    weights = torch.nn.Linear(4, 1).cuda()  # CUDA initialised in the parent
    with mp.Pool(2) as pool:
        print(pool.map(score, range(4)))
