# expect: clean
import torch

x = torch.zeros(1, device="evrt")
s = torch.evrt.Stream()
s.wait_stream(torch.evrt.current_stream())
with torch.evrt.stream(s):
    x.add_(1)
torch.evrt.current_stream().wait_stream(s)
print(x.item(), x.tolist())
