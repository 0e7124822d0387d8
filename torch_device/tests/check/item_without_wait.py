# expect: unsynchronized host access
# item() synchronizes the current stream only; the producer on another
# stream was never waited for.
import torch

x = torch.zeros(1, device="evrt")
s = torch.evrt.Stream()
s.wait_stream(torch.evrt.current_stream())
with torch.evrt.stream(s):
    x.add_(1)
print(x.item())
torch.evrt.synchronize()
