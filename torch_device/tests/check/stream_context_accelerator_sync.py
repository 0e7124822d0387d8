# expect: clean
# Stream context managers, torch.accelerator.synchronize between phases.
import torch

x = torch.ones(512, device="evrt")
torch.accelerator.synchronize()
s = torch.evrt.Stream()
with torch.evrt.stream(s):
    x.mul_(3)
torch.accelerator.synchronize()
with torch.evrt.stream(torch.evrt.Stream()):
    y = x + 1
torch.accelerator.synchronize()
print(y.sum().item())
