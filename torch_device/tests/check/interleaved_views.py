# expect: clean
# Interleaved views (even and odd elements, rows of a transposed view) touch
# disjoint bytes: writing them on two streams is no race.
import torch

base = torch.zeros(1024, device="evrt")
m = torch.zeros(64, 64, device="evrt")
s1, s2 = torch.evrt.Stream(), torch.evrt.Stream()
s1.wait_stream(torch.evrt.current_stream())
s2.wait_stream(torch.evrt.current_stream())
with torch.evrt.stream(s1):
    base[0::2].add_(1)
    m.t()[:, 0:32].add_(1)
with torch.evrt.stream(s2):
    base[1::2].add_(2)
    m.t()[:, 32:64].add_(2)
torch.evrt.synchronize()
print(base.sum().item(), m.sum().item())
