"""The caching allocator: reuse in stream order, record_stream."""
import torch


# Each test uses a size of its own: blocks other tests freed stay cached.


def test_reuse_on_same_stream_at_once():
    x = torch.empty(4096, device="evrt")
    p = x.data_ptr()
    del x
    y = torch.empty(4096, device="evrt")
    assert y.data_ptr() == p


def test_reuse_across_streams_waits_for_record_stream(gate):
    s2 = torch.evrt.Stream()
    x = torch.ones(5000, device="evrt")
    p = x.data_ptr()
    with torch.evrt.stream(s2):
        g = gate(s2)
        x.record_stream(s2)
    del x
    # s2's work after record_stream has not run: the block is not reused.
    y = torch.empty(5000, device="evrt")
    assert y.data_ptr() != p
    g.open()
    s2.synchronize()
    del y
    z = torch.empty(5000, device="evrt")
    w = torch.empty(5000, device="evrt")
    assert p in (z.data_ptr(), w.data_ptr())


def test_without_record_stream_reused_at_once(gate):
    # Like a device: without record_stream the block is reused at once on
    # its own stream, even while another stream's work on it is pending
    # (the user's missing record_stream; EVRT_CHECK reports it, issue 27).
    s2 = torch.evrt.Stream()
    x = torch.ones(6000, device="evrt")
    p = x.data_ptr()
    with torch.evrt.stream(s2):
        g = gate(s2)
        x.mul_(2)  # pending on s2, without record_stream
    del x
    y = torch.empty(6000, device="evrt")
    assert y.data_ptr() == p
    g.open()


def test_stats_and_empty_cache():
    torch.evrt.synchronize()
    torch.evrt.empty_cache()
    base = torch.evrt.memory_allocated()
    x = torch.empty(1 << 20, device="evrt")
    assert torch.evrt.memory_allocated() == base + (4 << 20)
    assert torch.evrt.memory_reserved() >= 4 << 20
    assert torch.evrt.max_memory_allocated() >= base + (4 << 20)
    del x
    assert torch.evrt.memory_allocated() == base
    reserved = torch.evrt.memory_reserved()
    torch.evrt.empty_cache()
    assert torch.evrt.memory_reserved() <= reserved - (4 << 20)
