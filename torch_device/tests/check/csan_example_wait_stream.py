# expect: clean
# CSAN's example fixed: the second stream waits for the default stream.
import torch

a = torch.rand(4, 2, device="evrt")
s = torch.evrt.Stream()
s.wait_stream(torch.evrt.current_stream())
with torch.evrt.stream(s):
    torch.mul(a, 5, out=a)
torch.evrt.current_stream().wait_stream(s)
print(a.sum().item())
