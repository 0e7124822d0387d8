"""evrt.Event: torch.Event behaviour (torch.cuda.Event's rules), names and
errors."""
import re
import time

import pytest

import evrt

TIMING_MSG = "Both events must be created with argument 'enable_timing=True'."
RECORDED_MSG = "Both events must be recorded before calculating elapsed time."
COMPLETED_MSG = "Both events must be completed before calculating elapsed time."


def pending_event(ms=200, **flags):
    """An event recorded behind a delay of ms on a new stream."""
    s = evrt.Stream()
    s.delay(ms)
    e = evrt.Event(**flags)
    e.record(s)
    return s, e


def test_types_and_hierarchy():
    e = evrt.Event()
    assert type(e) is evrt.Event and evrt.Event is evrt._evrt.Event
    assert type(evrt.Stream()) is evrt.Stream

    class MyEvent(evrt.Event):
        pass

    m = MyEvent(enable_timing=True)
    assert m.enable_timing and m.query()


def test_flags_must_be_integers_as_in_torch():
    """torch parses the flags as "b" (an integer 0..255, bool included):
    a string, a float or None is a TypeError, never a truth value."""
    import evrt.cuda
    import evrt.xpu
    makers = [evrt.Event, evrt.cuda.Event, evrt.xpu.Event]
    for make in makers:
        for flag in ("enable_timing", "blocking", "interprocess"):
            for bad in ("yes", "", 1.0, None, [1]):
                with pytest.raises(TypeError):
                    make(**{flag: bad})
            e = make(**{flag: 1})  # an int is a bool's worth, as in torch
            assert getattr(e, flag) is True
            assert getattr(make(**{flag: 0}), flag) is False
    for make in (evrt.Event, evrt.cuda.Event):
        with pytest.raises(TypeError):
            make(external="yes")
    with pytest.raises(TypeError):
        evrt.cuda.Event("yes")  # positional, as torch allows
    assert evrt.cuda.Event(True).enable_timing


def test_defaults_and_flags():
    e = evrt.Event()
    assert (e.enable_timing, e.blocking, e.interprocess) == (False, False, False)
    e = evrt.Event(enable_timing=True, blocking=True)
    assert (e.enable_timing, e.blocking, e.interprocess) == (True, True, False)
    # Flags are keyword-only, as in the signature.
    with pytest.raises(TypeError):
        evrt.Event(None, True)


def test_lazy_before_first_record():
    e = evrt.Event(enable_timing=True)
    assert e.query() is True
    e.synchronize()  # returns at once
    # torch.Event: a device of the event's type without an index
    assert e.device == evrt.device("evrt") and e.device.index is None
    assert e.event_id == 0 and e.handle == 0
    assert repr(e) == ("torch.Event device_type=evrt, device_index=-1, "
                       "event_flag=1, event_id=0")
    # wait() on a never-recorded event inserts no dependency: work behind it
    # runs at once.
    s = evrt.Stream()
    e.wait(s)
    done = []
    s.launch(done.append, 1)
    s.synchronize()
    assert done == [1]


def test_record_query_synchronize():
    s, e = pending_event(150)
    assert e.query() is False
    assert e.device == evrt.device("evrt:0")
    assert e.event_id != 0 and e.handle == e.event_id
    assert repr(e) == ("torch.Event device_type=evrt, device_index=0, "
                       "event_flag=0, event_id=%d" % e.event_id)
    t0 = time.monotonic()
    e.synchronize()
    assert e.query() is True
    # It really waited for the delay (the delay started before t0).
    assert time.monotonic() - t0 > 0.05


def test_record_default_uses_current_stream():
    s = evrt.Stream()
    with s:
        s.delay(150)
        e = evrt.Event()
        e.record()  # on s, the current stream
    assert e.query() is False
    s.synchronize()
    assert e.query() is True


def test_rerecord_looks_at_latest_generation():
    s = evrt.Stream()
    e = evrt.Event()
    e.record(s)
    s.synchronize()
    assert e.query() is True
    s.delay(150)
    e.record(s)
    assert e.query() is False
    e.synchronize()
    assert e.query() is True


def test_wait_orders_streams():
    a, b = evrt.Stream(), evrt.Stream()
    order = []
    a.delay(100)
    a.launch(order.append, "a")
    e = a.record_event()
    e.wait(b)  # b's later work waits for a's launch
    b.launch(order.append, "b")
    b.synchronize()
    assert order == ["a", "b"]


def test_wait_binds_to_generation_at_call():
    # A later record does not change what an earlier wait waits for.
    a, b = evrt.Stream(), evrt.Stream()
    e = evrt.Event()
    e.record(a)  # complete at once: a is idle
    b.wait_event(e)
    a.delay(300)
    e.record(a)  # pending now; b's wait still binds the old generation
    done = []
    b.launch(done.append, 1)
    b.synchronize()
    assert done == [1] and e.query() is False
    a.synchronize()


def test_elapsed_time():
    s = evrt.Stream()
    start = evrt.Event(enable_timing=True)
    end = evrt.Event(enable_timing=True)
    start.record(s)
    s.delay(50)
    end.record(s)
    end.synchronize()
    ms = start.elapsed_time(end)
    assert isinstance(ms, float)
    assert 45.0 <= ms < 2000.0
    assert end.elapsed_time(start) == pytest.approx(-ms, abs=0.01)


def test_elapsed_time_errors_in_torch_order():
    # 1: timing (before the recorded check, as torch does)
    a, b = evrt.Event(), evrt.Event()
    with pytest.raises(ValueError, match=re.escape(TIMING_MSG)):
        a.elapsed_time(b)
    # default-constructed events have timing off
    with pytest.raises(ValueError, match=re.escape(TIMING_MSG)):
        evrt.Event(enable_timing=True).elapsed_time(evrt.Event())
    # 2: recorded
    a, b = evrt.Event(enable_timing=True), evrt.Event(enable_timing=True)
    with pytest.raises(ValueError, match=re.escape(RECORDED_MSG)):
        a.elapsed_time(b)
    a.record(evrt.Stream())
    with pytest.raises(ValueError, match=re.escape(RECORDED_MSG)):
        a.elapsed_time(b)
    # 3: completed, a RuntimeError
    s, pending = pending_event(200, enable_timing=True)
    a.synchronize()
    with pytest.raises(RuntimeError, match=re.escape(COMPLETED_MSG)):
        a.elapsed_time(pending)
    with pytest.raises(RuntimeError, match=re.escape(COMPLETED_MSG)):
        pending.elapsed_time(a)
    # timing is checked before completion
    plain = evrt.Event()
    plain.record(s)
    with pytest.raises(ValueError, match=re.escape(TIMING_MSG)):
        pending.elapsed_time(plain)
    with pytest.raises(TypeError):
        a.elapsed_time(42)
    s.synchronize()


def test_elapsed_time_across_devices(two_devices):
    a = evrt.Event(enable_timing=True)
    b = evrt.Event(enable_timing=True)
    a.record(evrt.Stream(0))
    b.record(evrt.Stream(1))
    a.synchronize()
    b.synchronize()
    with pytest.raises(RuntimeError, match="same device") as ei:
        a.elapsed_time(b)
    assert not isinstance(ei.value, ValueError)


def test_record_on_other_device_raises(two_devices):
    e = evrt.Event()
    e.record(evrt.Stream(0))
    s1 = evrt.Stream(1)
    with pytest.raises(RuntimeError) as ei:
        e.record(s1)
    # torch.Event's wording (torch.cuda.Event's is in test_compat_cuda)
    assert str(ei.value) == ("Event device index 0 does not match recording "
                             "stream's device index 1.")
    assert e.device.index == 0
    # The failed call changed nothing: the event still records on device 0.
    e.record(evrt.Stream(0))


def test_first_record_fixes_device(two_devices):
    e = evrt.Event()
    e.record(evrt.Stream(1))
    assert e.device == evrt.device("evrt:1")
    with pytest.raises(RuntimeError,
                       match=re.escape("Event device index 1 does not match "
                                       "recording stream's device index 0.")):
        e.record(evrt.Stream(0))


def test_device_argument(two_devices):
    # As torch.Event: the device chooses the event's type; its index does
    # not fix the device (the first record does), but is where ipc_handle()
    # creates a never-recorded event (test_ipc).
    e = evrt.Event(1)
    assert e.device == evrt.device("evrt") and e.query() is True
    e.record(evrt.Stream(0))
    assert e.device == evrt.device("evrt:0")
    assert evrt.Event("evrt:1").device.type == "evrt"
    assert evrt.Event("cuda:1").device == evrt.device("cuda")
    assert evrt.Event(evrt.device("xpu", 0)).device.type == "xpu"
    with pytest.raises(ValueError, match="Expected an evrt device"):
        evrt.Event("cpu")
    with pytest.raises(RuntimeError, match="The device index is out of range"):
        evrt.Event(evrt.device_count())
    # a bool is never a device: Event(True) must not mean device 1
    for flag in (True, False):
        with pytest.raises(TypeError, match="bool is not a device"):
            evrt.Event(flag)


def test_wait_from_another_device(two_devices):
    a, b = evrt.Stream(0), evrt.Stream(1)
    order = []
    a.delay(80)
    a.launch(order.append, 0)
    e = a.record_event()
    b.wait_event(e)  # waiting across devices is allowed
    b.launch(order.append, 1)
    b.synchronize()
    assert order == [0, 1]


def test_interprocess_with_timing_fails_at_first_record():
    # Accepted at construction (as torch), rejected when created.
    e = evrt.Event(enable_timing=True, interprocess=True)
    assert e.query() is True
    with pytest.raises(evrt.EvrtError) as ei:
        e.record(evrt.Stream())
    assert ei.value.name == "EVRT_ERROR_INVALID_VALUE"
    assert ei.value.code == evrt._evrt.EVRT_ERROR_INVALID_VALUE
    assert isinstance(ei.value, RuntimeError)
    assert e.event_id == 0


def test_blocking_event_synchronizes():
    s, e = pending_event(60, blocking=True)
    e.synchronize()
    assert e.query() and s.query()


def test_record_type_checks():
    e = evrt.Event()
    with pytest.raises(TypeError):
        e.record(42)
    with pytest.raises(TypeError):
        e.wait("stream")


def test_no_equality_by_value():
    a, b = evrt.Event(), evrt.Event()
    assert a != b and a == a
    assert len({a, b}) == 2
