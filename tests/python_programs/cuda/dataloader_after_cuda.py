# Source: traveller59/spconv#408 "RuntimeError: Cannot re-initialize CUDA in forked subprocess"
#   https://github.com/traveller59/spconv/issues/408 (the maintainer: "you can't use cuda code in
#   process with fork mode, I guess you use CUDA ... in dataloader"), and
#   https://github.com/facebookresearch/pycls/issues/183
# Shape: the training loop has used the GPU; a DataLoader with worker processes (forked) runs a
# Dataset whose __getitem__ puts each sample on the GPU.
# Run: a worker raises "Cannot re-initialize CUDA in forked subprocess"; the DataLoader re-raises
# it in the parent ("Caught RuntimeError in DataLoader worker process 0"), which exits 1.
import torch
from torch.utils.data import DataLoader, Dataset


class OnGpu(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        return torch.tensor([float(i)]).cuda()


if __name__ == "__main__":
    model = torch.nn.Linear(1, 1).cuda()
    for batch in DataLoader(OnGpu(), batch_size=4, num_workers=2):
        print(model(batch).sum().item())
