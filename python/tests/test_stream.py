"""evrt.Stream: torch.cuda.Stream behaviour plus launch() and delay()."""
import gc
import sys
import threading
import time

import pytest

import evrt


def test_construction_and_properties(two_devices):
    s = evrt.Stream()
    assert s.device == evrt.device("evrt:0")
    assert s.priority == 0 and not s.is_default
    s1 = evrt.Stream(device=1, priority=-1)
    assert s1.device.index == 1 and s1.priority == -1
    assert evrt.Stream(1).device_index == 1
    assert evrt.Stream("evrt:1").device_index == 1
    assert evrt.Stream.priority_range() == (0, -1)
    d = evrt.default_stream()
    assert d.is_default and d != s
    assert repr(s1) == ("torch.Stream device_type=evrt, device_index=1, "
                        "stream_id=%d" % s1.stream_id)
    # torch's priority clamping: outside the range, the nearest end
    assert evrt.Stream(priority=-5).priority == -1
    assert evrt.Stream(priority=7).priority == 0
    with pytest.raises(RuntimeError, match="The device index is out of range"):
        evrt.Stream(evrt.device_count())
    with pytest.raises(TypeError):
        evrt.Stream(1.5)


def test_equality_and_hash(two_devices):
    s = evrt.Stream()
    t = evrt.Stream()
    assert s == s and s != t and not (s == t)
    assert evrt.current_stream() == evrt.current_stream()
    assert hash(evrt.current_stream()) == hash(evrt.default_stream(0))
    assert evrt.default_stream(0) != evrt.default_stream(1)
    assert len({s, t, s, evrt.default_stream(0), evrt.default_stream(0)}) == 3
    # Comparing with a non-stream is False, never an error; ordering is not
    # defined.
    for other in (42, "hello", 3.14, None, object()):
        assert (s == other) is False
        assert (s != other) is True
    assert s in [1, "a", s]
    with pytest.raises(TypeError):
        s < t
    with pytest.raises(TypeError):
        s >= t


def test_query_synchronize_delay():
    s = evrt.Stream()
    assert s.query() is True
    t0 = time.monotonic()
    s.delay(120)
    assert s.query() is False
    s.synchronize()
    assert s.query() is True
    assert time.monotonic() - t0 >= 0.1
    with pytest.raises(ValueError):
        s.delay(-1)
    with pytest.raises(TypeError):
        s.delay("1")


def test_launch_runs_in_order_with_args():
    s = evrt.Stream()
    out = []
    s.delay(300)  # long enough that a stalled test still checks in time
    for i in range(20):
        s.launch(out.append, i)
    s.launch(lambda a, b: out.append(a + b), 100, 1)
    assert len(out) < 21  # the delay holds them back
    s.synchronize()
    assert out == list(range(20)) + [101]


def test_launch_runs_on_a_worker_thread_with_gil():
    s = evrt.Stream()
    seen = []
    s.launch(lambda: seen.append(threading.get_ident()))
    s.synchronize()
    assert seen and seen[0] != threading.get_ident()


def test_launch_type_check():
    s = evrt.Stream()
    with pytest.raises(TypeError):
        s.launch()
    with pytest.raises(TypeError):
        s.launch(42)


def test_launch_exception_raised_by_stream_synchronize():
    s = evrt.Stream()
    ran = []

    def bad():
        raise KeyError("boom")

    s.launch(bad)
    s.launch(ran.append, 1)  # later work still runs
    with pytest.raises(KeyError, match="boom") as ei:
        s.synchronize()
    assert ran == [1]
    # The traceback points into the callable.
    tb = ei.value.__traceback__
    names = []
    while tb:
        names.append(tb.tb_frame.f_code.co_name)
        tb = tb.tb_next
    assert "bad" in names
    s.synchronize()  # raised once, then gone


def test_launch_exception_not_for_other_streams_but_device_sync():
    s, other = evrt.Stream(), evrt.Stream()
    s.launch(lambda: 1 / 0)
    time.sleep(0.05)
    other.synchronize()  # not other's error
    with pytest.raises(ZeroDivisionError):
        evrt.synchronize()  # device 0's
    s.synchronize()  # already collected


def test_launch_several_exceptions(monkeypatch):
    # The first is raised; the others are reported, not lost.
    reported = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: reported.append(
        u.exc_value))
    s = evrt.Stream()
    s.launch(lambda: [][1])
    s.launch(lambda: {}["k"])
    with pytest.raises(IndexError):
        s.synchronize()
    assert len(reported) == 1 and isinstance(reported[0], KeyError)


def test_synchronize_inside_launch_is_an_error_not_a_deadlock():
    s = evrt.Stream()
    s.launch(s.synchronize)
    with pytest.raises(evrt.EvrtError) as ei:
        s.synchronize()
    assert ei.value.name == "EVRT_ERROR_WOULD_DEADLOCK"


def test_record_event_and_wait_event():
    a, b = evrt.Stream(), evrt.Stream()
    e = a.record_event()
    assert isinstance(e, evrt.Event) and e.device.index == 0
    mine = evrt.Event(enable_timing=True)
    assert a.record_event(mine) is mine
    order = []
    a.delay(60)
    a.launch(order.append, "a")
    b.wait_event(a.record_event())
    b.launch(order.append, "b")
    b.synchronize()
    assert order == ["a", "b"]


def test_wait_stream():
    a, b = evrt.Stream(), evrt.Stream()
    order = []
    a.delay(60)
    a.launch(order.append, "a")
    b.wait_stream(a)
    b.launch(order.append, "b")
    b.synchronize()
    assert order == ["a", "b"]


def test_dropping_a_busy_stream_keeps_its_work():
    done = []
    s = evrt.Stream()
    s.delay(50)
    s.launch(done.append, 1)
    e = s.record_event()
    del s
    gc.collect()
    e.synchronize()
    assert done == [1]


def test_launch_references_released():
    s = evrt.Stream()
    payload = object()

    def fn(x):
        pass

    base_fn, base_payload = sys.getrefcount(fn), sys.getrefcount(payload)
    s.delay(300)  # long enough that a stalled test still checks in time
    for _ in range(100):
        s.launch(fn, payload)
    # Kept alive while queued...
    assert sys.getrefcount(payload) >= base_payload + 100
    s.synchronize()
    # ...and released once run.
    assert sys.getrefcount(fn) == base_fn
    assert sys.getrefcount(payload) == base_payload
