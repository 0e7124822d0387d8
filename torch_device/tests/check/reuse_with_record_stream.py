# expect: clean
# The same with record_stream: the block's free waits for the other stream.
import torch

s = torch.evrt.Stream()
x = torch.ones(1 << 16, device="evrt")
s.wait_stream(torch.evrt.current_stream())
with torch.evrt.stream(s):
    y = x * 2
x.record_stream(s)
del x
z = torch.zeros(1 << 16, device="evrt")
torch.evrt.synchronize()
print(y.sum().item(), z.sum().item())
