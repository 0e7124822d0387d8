"""Copies in stream order, with CUDA's rules for pageable host memory: a
host-to-device copy reads the host's bytes at the call; a device-to-host
copy has finished when it returns."""
import torch


def test_h2d_reads_host_bytes_at_the_call(gate):
    x = torch.arange(8.0)
    s = torch.evrt.current_stream()
    g = gate(s)  # the copy itself waits behind the gate
    d = x.to("evrt")
    x.fill_(-1)  # the program reuses its host buffer at once
    g.open()
    assert d.cpu().tolist() == list(map(float, range(8)))


def test_d2h_waits_for_the_producer(gate):
    s = torch.evrt.Stream()
    d = torch.zeros(1000, device="evrt")
    s.wait_stream(torch.evrt.current_stream())
    with torch.evrt.stream(s):
        g = gate(s)
        d.add_(5)
        g.open()
        host = d.cpu()  # on s: returns after the add
    assert host.eq(5).all().item()


def test_strided_and_cross_device_copies():
    x = torch.arange(12.0).reshape(3, 4)
    d0 = x.to("evrt:0")
    t = d0.t()  # not contiguous
    d1 = t.to("evrt:1")
    assert d1.device == torch.device("evrt", 1)
    assert torch.equal(d1.cpu(), x.t())
    back = d1.to("evrt:0")
    assert torch.equal(back.cpu(), x.t())
    dst = torch.empty(4, 3, device="evrt:0").t()  # a strided destination
    dst.copy_(x)
    assert torch.equal(dst.cpu(), x)
    h = torch.empty(4, 3).t()
    h.copy_(d0)  # D2H into a strided host tensor
    assert torch.equal(h, x)
    assert torch.equal(d0.to(torch.int64).cpu(), x.to(torch.int64))
