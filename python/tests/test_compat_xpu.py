"""evrt.xpu: torch.xpu's stream and event API (names, reprs, messages)."""
import inspect
import re

import pytest

import evrt
import evrt.xpu as xpu


def test_signatures_and_hierarchy():
    assert str(inspect.signature(xpu.Event)) == \
        "(enable_timing=False, blocking=False, interprocess=False)"
    assert str(inspect.signature(xpu.Stream)) == \
        "(device=None, priority=0, **kwargs)"
    assert isinstance(xpu.Event(), evrt.Event)
    assert type(xpu.current_stream()) is xpu.Stream
    assert xpu.Event(True).enable_timing  # positional: enable_timing


def test_reprs_and_handles():
    s = xpu.current_stream()
    assert repr(s) == "torch.xpu.Stream(device=xpu:0 sycl_queue=%#x)" % \
        s.sycl_queue
    # an xpu default stream has a real handle (only cuda's is 0)
    assert s.sycl_queue == s.stream_id == s.handle != 0
    e = xpu.Event()
    assert str(e) == "torch.xpu.Event(uninitialized)"
    assert e.sycl_event == e.event_id == 0
    s.record_event(e)
    assert str(e) == "torch.xpu.Event(sycl_event=%#x)" % e.sycl_event
    assert e.sycl_event == e.event_id == e.handle != 0


def test_messages_are_torch_xpus(two_devices):
    with pytest.raises(RuntimeError,
                       match=re.escape("The device index is out of range. It "
                                       "must be in [0, 2), but got 2.")):
        xpu.current_stream(2)
    with pytest.raises(ValueError, match="Expected a xpu device, but got: cpu"):
        xpu.synchronize("cpu")
    # torch.xpu.Event.elapsed_time: recorded, completed, timing; all
    # RuntimeError
    with pytest.raises(RuntimeError, match="must be recorded") as ei:
        xpu.Event().elapsed_time(xpu.Event())
    assert not isinstance(ei.value, ValueError)
    a, b = xpu.Event(), xpu.Event()
    s = xpu.Stream()
    a.record(s)
    s.delay(200)
    b.record(s)
    with pytest.raises(RuntimeError, match="must be completed"):
        a.elapsed_time(b)
    b.synchronize()
    with pytest.raises(RuntimeError, match="enable_timing=True") as ei:
        a.elapsed_time(b)
    assert not isinstance(ei.value, ValueError)
    with pytest.raises(RuntimeError, match="requires the event to be "
                                           "constructed with interprocess"):
        xpu.Event().ipc_handle()


def test_context_managers(two_devices):
    with xpu.device(1):
        assert xpu.current_device() == 1
    with xpu._DeviceGuard(1):
        assert xpu.current_device() == 1
    s0, s2 = xpu.Stream(), xpu.Stream()
    xpu.set_stream(s2)
    with xpu.stream(s0):
        assert xpu.current_stream() == s0
    assert xpu.current_stream() == s2
    with xpu.Stream(1) as s:
        assert xpu.current_device() == 1 and xpu.current_stream() == s
    assert xpu.current_device() == 0
