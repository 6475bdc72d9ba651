# Source: the fix forkcheck gives for pool_after_cuda.py ("touch no CUDA before forking"), as the
#   CUDA semantics notes of PyTorch put it: https://pytorch.org/docs/stable/notes/multiprocessing.html
#   ("The CUDA runtime does not support the fork start method")
# Shape: pool_after_cuda.py with the parent's first CUDA use moved after the pool's workers were
# forked: torch is imported before the fork, but nothing has initialised CUDA yet.
# Run: each forked worker initialises CUDA itself and the program prints the four sums, then the
# parent's model; exit 0.
import multiprocessing as mp

import torch


def score(i):
    batch = torch.full((4,), float(i)).cuda()
    return float(batch.sum())


if __name__ == "__main__":
    with mp.Pool(2) as pool:
        print(pool.map(score, range(4)))
    print(torch.nn.Linear(4, 1).cuda())  # the parent's CUDA, after every fork
