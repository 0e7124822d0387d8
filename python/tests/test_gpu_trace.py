"""GPU trace callbacks (torch.cuda._gpu_trace / torch.xpu._gpu_trace):
evrt._activate_gpu_trace() turns them on for the process, so this file
turns them on once (at import) and records every callback of every type
into one list, cleared before each test."""
import logging

import pytest

import evrt
import evrt.cuda
import evrt.xpu
import evrt.cuda._gpu_trace as cuda_trace
import evrt.xpu._gpu_trace as xpu_trace
from evrt import _gpu_trace as evrt_trace

from conftest import run_python

KINDS = ("event_creation", "event_deletion", "event_record", "event_wait",
         "event_synchronization", "stream_creation",
         "stream_synchronization", "device_synchronization")

calls = []


def _register_all():
    for tname, mod in (("evrt", evrt_trace), ("cuda", cuda_trace),
                       ("xpu", xpu_trace)):
        for kind in KINDS:
            getattr(mod, "register_callback_for_" + kind)(
                lambda *a, t=tname, k=kind: calls.append((t, k) + a))


_register_all()
evrt._activate_gpu_trace()


@pytest.fixture(autouse=True)
def _clear():
    calls.clear()
    yield
    calls.clear()


def test_off_until_activated():
    r = run_python(
        "import evrt, evrt.cuda as c\n"
        "import evrt.cuda._gpu_trace as t\n"
        "seen = []\n"
        "t.register_callback_for_event_record(lambda *a: seen.append(a))\n"
        "t.register_callback_for_stream_creation(lambda *a: seen.append(a))\n"
        "e = c.Event(); e.record(); c.Stream(); print(len(seen))\n"
        "evrt._activate_gpu_trace()\n"
        "e.record(); print(len(seen))\n")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["0", "1"]


def test_cuda_event_life_in_order_with_its_handles():
    e = evrt.cuda.Event()
    assert calls == []              # lazy: nothing native yet
    e.record()
    h = e.cuda_event
    assert h != 0 and h == e._as_parameter_.value
    e.wait()
    e.synchronize()
    del e
    # the default stream shows as torch's cuda_stream of it: 0
    assert calls == [("cuda", "event_creation", h),
                     ("cuda", "event_record", h, 0),
                     ("cuda", "event_wait", h, 0),
                     ("cuda", "event_synchronization", h),
                     ("cuda", "event_deletion", h)]


def test_second_record_reports_no_creation():
    e = evrt.cuda.Event()
    e.record()
    e.record()
    kinds = [c[1] for c in calls]
    assert kinds == ["event_creation", "event_record", "event_record"]


def test_xpu_shows_its_queue_and_only_xpu_callbacks_fire():
    s = evrt.xpu.Stream()
    e = evrt.xpu.Event()
    with evrt.xpu.stream(s):
        e.record()
        e.wait()
    assert s.sycl_queue != 0
    assert calls == [("xpu", "stream_creation", s.sycl_queue),
                     ("xpu", "event_creation", e.sycl_event),
                     ("xpu", "event_record", e.sycl_event, s.sycl_queue),
                     ("xpu", "event_wait", e.sycl_event, s.sycl_queue)]
    calls.clear()
    e.record(evrt.xpu.current_stream())   # the default stream: its queue
    assert calls == [("xpu", "event_record", e.sycl_event,
                      evrt.xpu.default_stream().sycl_queue)]
    assert evrt.xpu.default_stream().sycl_queue != 0


def test_stream_and_device_synchronization():
    s = evrt.cuda.Stream()
    s.synchronize()
    evrt.cuda.synchronize()
    evrt.synchronize()
    assert calls == [("cuda", "stream_creation", s.cuda_stream),
                     ("cuda", "stream_synchronization", s.cuda_stream),
                     ("cuda", "device_synchronization"),
                     ("evrt", "device_synchronization")]
    calls.clear()
    evrt.cuda.default_stream().synchronize()
    assert calls == [("cuda", "stream_synchronization", 0)]


def test_views_of_existing_streams_are_no_creation():
    s = evrt.cuda.Stream()
    calls.clear()
    evrt.cuda.Stream(stream_id=s.stream_id, device_index=0, device_type=1)
    evrt.cuda.ExternalStream(s.cuda_stream)
    evrt.cuda.default_stream()
    assert calls == []


def test_wait_stream_reports_the_event_it_uses(two_devices):
    a = evrt.cuda.Stream(device=0)
    b = evrt.cuda.Stream(device=1)
    calls.clear()
    b.wait_stream(a)
    kinds = [c[1] for c in calls]
    assert kinds == ["event_creation", "event_record", "event_wait",
                     "event_deletion"]
    ev = calls[0][2]
    assert calls[1] == ("cuda", "event_record", ev, a.cuda_stream)
    assert calls[2] == ("cuda", "event_wait", ev, b.cuda_stream)
    assert calls[3] == ("cuda", "event_deletion", ev)


def test_failed_record_reports_nothing(two_devices):
    e = evrt.cuda.Event()
    e.record(evrt.cuda.Stream(device=0))
    calls.clear()
    with pytest.raises(RuntimeError, match="does not match"):
        e.record(evrt.cuda.Stream(device=1))
    assert [c[1] for c in calls] == ["stream_creation"]


def test_ipc_handle_creates_once():
    e = evrt.cuda.Event(interprocess=True)
    e.ipc_handle()
    e.record()
    assert [c[1] for c in calls] == ["event_creation", "event_record"]
    assert calls[0][2] == e.cuda_event


def test_generic_event_uses_its_device_type():
    e = evrt.Event()
    e.record()
    g = evrt.Event("cuda")
    g.record()
    assert calls == [("evrt", "event_creation", e.event_id),
                     ("evrt", "event_record", e.event_id,
                      evrt.current_stream().stream_id),
                     ("cuda", "event_creation", g.event_id),
                     ("cuda", "event_record", g.event_id, 0)]


def test_raising_callback_is_logged_and_the_call_succeeds(caplog):
    seen = []

    def bad(*a):
        raise ValueError("callback failure")

    evrt.cuda._gpu_trace.register_callback_for_event_synchronization(bad)
    evrt.cuda._gpu_trace.register_callback_for_event_synchronization(
        lambda *a: seen.append(a))
    e = evrt.cuda.Event()
    e.record()
    with caplog.at_level(logging.ERROR, logger="evrt.gpu_trace"):
        assert e.synchronize() is None
    assert seen == [(e.cuda_event,)]
    assert "event synchronization" in caplog.text
    assert "callback failure" in caplog.text


def test_deletion_reported_when_a_raising_frame_goes():
    def f():
        e = evrt.cuda.Event()
        e.record()
        raise KeyError("original")

    with pytest.raises(KeyError, match="original"):
        f()
    assert [c[1] for c in calls][-1] == "event_deletion"


def test_registry_rejects_non_callables_and_names_match_torch():
    with pytest.raises(TypeError):
        cuda_trace.register_callback_for_event_record(42)
    for mod in (cuda_trace, xpu_trace, evrt_trace):
        assert isinstance(mod.EventCreationCallbacks,
                          evrt_trace.CallbackRegistry)
        assert mod.register_callback_for_event_wait.__doc__
    assert evrt.cuda._gpu_trace is cuda_trace
    assert evrt.xpu._gpu_trace is xpu_trace
