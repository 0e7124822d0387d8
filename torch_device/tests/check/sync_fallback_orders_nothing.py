# expect: data race
# nonzero runs on the host after a synchronize the fallback makes for
# itself; the side stream's write is still not ordered before the default
# stream's later read.
import torch

x = torch.zeros(4096, device="evrt")
s = torch.evrt.Stream()
s.wait_stream(torch.evrt.current_stream())
with torch.evrt.stream(s):
    x.add_(1)
    torch.nonzero(x)  # synchronous on s
y = x * 2
torch.evrt.synchronize()
