# expect: data race
# empty_cache synchronizes the devices for the allocator's own sake: that
# must not order the side stream's write before the default stream's read
# (on a GPU nothing does).
import torch

x = torch.zeros(4096, device="evrt")
s = torch.evrt.Stream()
s.wait_stream(torch.evrt.current_stream())
with torch.evrt.stream(s):
    x.add_(1)
torch.evrt.empty_cache()
y = x * 2
torch.evrt.synchronize()
