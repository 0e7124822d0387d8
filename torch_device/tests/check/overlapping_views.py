# expect: data race
# Two views of one storage that overlap but start at different addresses
# (different data_ptr(): CSAN never compares them), written on two streams.
import torch

base = torch.zeros(1024, device="evrt")
s1, s2 = torch.evrt.Stream(), torch.evrt.Stream()
s1.wait_stream(torch.evrt.current_stream())
s2.wait_stream(torch.evrt.current_stream())
with torch.evrt.stream(s1):
    base[0:600].add_(1)
with torch.evrt.stream(s2):
    base[400:1024].add_(2)
torch.evrt.synchronize()
