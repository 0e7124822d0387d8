"""torch.Stream / torch.Event on evrt follow the device's rules, which
OpenReg's streams break: a wait binds at its call, a re-record is a new
generation, a stream whose task is running is not idle."""
import pytest
import torch

from conftest import wait_until


def test_stream_ids_and_pool():
    s = torch.Stream(device="evrt")
    assert s.stream_id != 0 and s.device_index == 0
    hi = torch.Stream(device="evrt", priority=-1)
    assert hi.stream_id != s.stream_id
    # 32 pool streams per priority class, round-robin, as CUDA's.
    ids = {torch.Stream(device="evrt").stream_id for _ in range(64)}
    assert len(ids) == 32
    s2 = torch.Stream(stream_id=s.stream_id, device_index=0, device_type=s.device_type)
    assert s2 == s
    assert torch.accelerator.current_stream().stream_id == 0


def test_query_false_while_task_runs(gate):
    s = torch.evrt.Stream()
    x = torch.zeros(4, device="evrt")
    torch.evrt.synchronize()
    with torch.evrt.stream(s):
        g = gate(s)
        x.add_(1)
    assert not s.query()
    g.open()
    s.synchronize()
    assert s.query()
    assert x.cpu().tolist() == [1.0] * 4


def test_wait_binds_at_call(gate):
    # s2 waits for the record current at its call: recording e again on s1
    # later (behind a second gate) must not hold s2 back.
    s1, s2 = torch.evrt.Stream(), torch.evrt.Stream()
    e = torch.Event(device="evrt")
    done = torch.zeros(1, device="evrt")
    torch.evrt.synchronize()
    g1 = gate(s1)
    e.record(s1)
    s2.wait_event(e)
    with torch.evrt.stream(s2):
        done.add_(1)
    g2 = gate(s1)
    e.record(s1)  # the newer generation, held by g2
    assert not s2.query()
    g1.open()
    assert wait_until(s2.query), "s2 waited for the record made after its wait"
    assert not e.query()  # the newer record is still pending
    g2.open()
    e.synchronize()
    assert done.cpu().item() == 1.0


def test_re_record_is_pending_until_it_completes(gate):
    s = torch.evrt.Stream()
    e = torch.Event(device="evrt")
    e.record(s)
    e.synchronize()
    assert e.query()
    g = gate(s)
    e.record(s)
    assert not e.query()  # the older, complete record does not complete it
    g.open()
    e.synchronize()
    assert e.query()


def test_wait_stream_orders_work(gate):
    s1, s2 = torch.evrt.Stream(), torch.evrt.Stream()
    x = torch.zeros(8, device="evrt")
    torch.evrt.synchronize()
    with torch.evrt.stream(s1):
        g = gate(s1)
        x.add_(3)
    s2.wait_stream(s1)
    with torch.evrt.stream(s2):
        y = x * 2
    # s2 stays blocked (given time to run, it does not: a missing wait would
    # let it read the zeros now)
    assert not wait_until(s2.query, timeout=0.2)
    g.open()
    s2.synchronize()
    assert y.cpu().tolist() == [6.0] * 8


def test_event_rules_and_errors():
    e = torch.Event(device="evrt")
    assert e.query()  # never recorded
    e.synchronize()
    a, b = torch.Event(device="evrt"), torch.Event(device="evrt")
    with pytest.raises(ValueError, match="enable_timing=True"):
        a.elapsed_time(b)
    ta = torch.Event(device="evrt", enable_timing=True)
    tb = torch.Event(device="evrt", enable_timing=True)
    with pytest.raises(ValueError, match="recorded"):
        ta.elapsed_time(tb)
    ta.record()
    torch.ones(100, device="evrt").sum()
    tb.record()
    tb.synchronize()
    assert ta.elapsed_time(tb) >= 0
    # an event of device 0 recorded on device 1's stream
    with pytest.raises(RuntimeError, match="does not match"):
        ta.record(torch.Stream(device=torch.device("evrt", 1)))


def test_cross_device_wait(gate):
    s0 = torch.Stream(device=torch.device("evrt", 0))
    s1 = torch.Stream(device=torch.device("evrt", 1))
    g = gate(s0)
    e = s0.record_event()
    s1.wait_event(e)
    assert not s1.query()
    g.open()
    s1.synchronize()
    assert s1.query()


def test_accelerator_api():
    assert torch.accelerator.is_available()
    s = torch.Stream(device="evrt")
    torch.accelerator.set_stream(s)
    try:
        assert torch.accelerator.current_stream() == s
    finally:
        torch.accelerator.set_stream(torch.evrt.default_stream())
    torch.accelerator.synchronize()
    with torch.accelerator.device_index(1):
        assert torch.accelerator.current_device_index() == 1
