"""Ops through the fallback give CPU eager's values, shapes and dtypes;
the metadata cache tells calls apart by their inputs' metadata and
arguments."""
import torch


def same(evrt_result, cpu_result):
    assert evrt_result.device.type == "evrt"
    assert evrt_result.dtype == cpu_result.dtype, (evrt_result.dtype, cpu_result.dtype)
    assert evrt_result.shape == cpu_result.shape
    assert torch.equal(evrt_result.cpu(), cpu_result)


def test_metadata_follows_the_inputs():
    for n in (3, 4, 3):
        a = torch.arange(n, dtype=torch.int32)
        same(a.to("evrt") + 1, a + 1)  # int32 + int scalar: int32
        same(a.to("evrt") + 1.5, a + 1.5)  # + float scalar: float32
        same(a.to("evrt") * torch.tensor(2.0), a * torch.tensor(2.0))
    # (a structured op's functional form reaches the fallback as its out=
    # variant with the output allocated; index_select is not structured: its
    # output's metadata comes from the meta run or the cache)
    idx = torch.tensor([4, 0, 2])
    for dt in (torch.int32, torch.float32, torch.int32, torch.float64):
        a = torch.arange(5).to(dt)
        same(a.to("evrt") + a.to("evrt"), a + a)  # same shapes, another dtype
        same(torch.index_select(a.to("evrt"), 0, idx.to("evrt")), torch.index_select(a, 0, idx))
    x = torch.arange(6.0).reshape(2, 3)
    same(x.to("evrt") + torch.arange(3.0).to("evrt"), x + torch.arange(3.0))
    same(x.to("evrt").sum(1), x.sum(1))
    same(x.to("evrt").sum(0, keepdim=True), x.sum(0, keepdim=True))


def test_out_argument_resized_every_call():
    a, b = torch.arange(4.0), torch.ones(4)
    for _ in range(2):
        o = torch.empty(0, device="evrt")
        torch.add(a.to("evrt"), b.to("evrt"), out=o)
        same(o, a + b)


def test_lists_tuples_and_views():
    x = torch.arange(12.0).reshape(3, 4)
    d = x.to("evrt")
    same(torch.cat([d, d], 0), torch.cat([x, x], 0))
    vals, idx = torch.topk(d, 2, dim=1)
    cvals, cidx = torch.topk(x, 2, dim=1)
    same(vals, cvals)
    same(idx, cidx)
    for p, q in zip(torch.split(d, [1, 2]), torch.split(x, [1, 2])):
        same(p, q)
    same(d.unfold(1, 2, 2), x.unfold(1, 2, 2))  # a view op with no kernel of its own
    same(d.t().contiguous(), x.t().contiguous())
    same(d[1:, ::2] * 2, x[1:, ::2] * 2)
    same(torch.where(d > 5, d, -d), torch.where(x > 5, x, -x))
    assert "device='evrt:0'" in repr(d)
    assert d.sum().item() == 66.0
    assert d.tolist() == x.tolist()


def test_in_place_on_a_view_writes_the_base():
    x = torch.zeros(4, 4)
    d = x.to("evrt")
    d[1].fill_(7)
    d[:, 2].add_(1)
    x[1].fill_(7)
    x[:, 2].add_(1)
    same(d, x)
