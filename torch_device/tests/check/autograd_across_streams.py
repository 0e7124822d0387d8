# expect: clean
# Forward on a side stream, backward from the default stream: autograd
# orders the backward ops after the forward ones and the caller after them.
import torch

w = torch.randn(16, 16, device="evrt", requires_grad=True)
s = torch.evrt.Stream()
s.wait_stream(torch.evrt.current_stream())
with torch.evrt.stream(s):
    loss = (w @ w).relu().sum()
torch.evrt.current_stream().wait_stream(s)
loss.backward()
print(w.grad.abs().sum().item())
