# expect: clean
import torch

s1, s2 = torch.evrt.Stream(), torch.evrt.Stream()
x = torch.zeros(256, device="evrt")
s1.wait_stream(torch.evrt.current_stream())
with torch.evrt.stream(s1):
    x.add_(1)
    e = torch.evrt.Event()
    e.record()
s2.wait_event(e)
with torch.evrt.stream(s2):
    y = x * 3
e2 = s2.record_event()
e2.synchronize()
print(y.sum().item())
