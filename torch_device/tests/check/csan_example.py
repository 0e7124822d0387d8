# expect: data race
# CSAN's documented example: an in-place op on a second stream with no
# wait for the default stream's producer.
import torch

a = torch.rand(4, 2, device="evrt")
with torch.evrt.stream(torch.evrt.Stream()):
    torch.mul(a, 5, out=a)
torch.evrt.synchronize()
