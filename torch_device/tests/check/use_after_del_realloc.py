# expect: use after free
# A view kept by a side stream's pending work after the last tensor was
# deleted and its block reallocated (no record_stream).
import torch

s = torch.evrt.Stream()
x = torch.ones(4096, device="evrt")
s.wait_stream(torch.evrt.current_stream())
with torch.evrt.stream(s):
    x[100:200].mul_(2)
del x
y = torch.empty(4096, device="evrt")  # x's block, at once
torch.evrt.synchronize()
