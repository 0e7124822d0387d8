# expect: use after free
# A block freed on its stream while another stream still reads it, with no
# record_stream: the allocator may hand it out again on its stream at once.
import torch

s = torch.evrt.Stream()
x = torch.ones(1 << 16, device="evrt")
s.wait_stream(torch.evrt.current_stream())
with torch.evrt.stream(s):
    y = x * 2
del x
z = torch.empty(1 << 16, device="evrt")  # reuses x's block at once
# (a write to z would make the report a data race with z's new life, or a
# use after free, whichever reaches the checker first: docs/check.md)
torch.evrt.synchronize()
