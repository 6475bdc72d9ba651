# Sets torch's intra-op threads to a count no default gives on a small machine, then fails.
import torch

torch.set_num_threads(3)
x = torch.randn(256, 256)
print(bool((x @ x).sum().item() != 0))
raise SystemExit("failing on purpose, for issue.md")
