"""evrt.cuda: torch.cuda's stream and event API (names, signatures,
defaults, messages, reprs), and handles that C code and evrt.acl.rt take."""
import ctypes
import gc
import inspect
import pickle
import pydoc
import re

import pytest

import evrt
import evrt.cuda as cuda

NOT_READY = 1


def libevrt():
    lib = ctypes.CDLL(evrt.library_path())
    for fn in ("evrt_stream_query", "evrt_event_query"):
        getattr(lib, fn).argtypes = [ctypes.c_void_p]
    lib.evrt_stream_delay.argtypes = [ctypes.c_void_p, ctypes.c_uint64]
    lib.evrt_event_record.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    return lib


def test_signatures_are_torchs():
    sig = inspect.signature(cuda.Event)
    assert str(sig) == ("(enable_timing=False, blocking=False, "
                        "interprocess=False, external=False)")
    assert str(inspect.signature(cuda.Stream)) == \
        "(device=None, priority=0, **kwargs)"
    assert str(inspect.signature(cuda.ExternalStream)) == \
        "(stream_ptr, device=None, **kwargs)"
    for fn in (cuda.current_stream, cuda.default_stream, cuda.synchronize):
        assert str(inspect.signature(fn)) == "(device=None, /)"
    assert str(inspect.signature(cuda.Event.record)) == "(self, /, stream=None)"
    assert str(inspect.signature(cuda.Stream.record_event)) == \
        "(self, /, event=None)"


def test_positional_event_flags_keep_their_meaning():
    # Event(True) is enable_timing, as in torch (not a device).
    e = cuda.Event(True)
    assert e.enable_timing and not e.blocking
    e = cuda.Event(False, True)
    assert not e.enable_timing and e.blocking
    assert cuda.Event(False, False, True).interprocess
    assert cuda.Event(external=True).external


def test_hierarchy():
    assert isinstance(cuda.Event(), evrt.Event)
    assert evrt.Event in type(cuda.Event()).mro()
    assert evrt.Stream in type(cuda.current_stream()).mro()
    assert isinstance(cuda.Stream(), cuda.Stream)
    # C-made objects are of the module's classes
    assert type(cuda.current_stream()) is cuda.Stream
    assert type(cuda.Stream().record_event()) is cuda.Event


def test_reprs_are_torchs():
    s = cuda.current_stream()
    assert repr(s) == "<torch.cuda.Stream device=cuda:0 cuda_stream=0x0>"
    t = cuda.Stream()
    assert repr(t) == ("<torch.cuda.Stream device=cuda:0 cuda_stream=%#x>"
                       % t.cuda_stream)
    e = cuda.Event()
    assert repr(e) == "<torch.cuda.Event uninitialized>"
    s.record_event(e)
    assert repr(e) == "<torch.cuda.Event %#x>" % e.cuda_event


def test_default_stream_handle_is_zero_and_c_accepts_it():
    lib = libevrt()
    d = cuda.default_stream()
    assert d.cuda_stream == 0 and d.stream_id == 0
    assert d.__cuda_stream__() == (0, 0)
    assert d.handle != 0  # the real handle stays available
    # The C API reads 0 as the current device's default stream: work
    # enqueued through handle 0 is on d.
    assert lib.evrt_stream_delay(0, 300 * 10**6) == 0
    assert d.query() is False
    assert lib.evrt_stream_query(0) == NOT_READY
    d.synchronize()
    assert lib.evrt_stream_query(0) == 0


def test_native_handles_are_the_c_handles():
    lib = libevrt()
    s = cuda.Stream()
    assert s.cuda_stream == s.stream_id == s.handle != 0
    assert s._as_parameter_.value == s.cuda_stream
    e = cuda.Event()
    assert e.cuda_event == e.event_id == 0
    s.delay(300)
    e.record(s)
    assert e.cuda_event == e.event_id == e.handle != 0
    assert lib.evrt_event_query(e.cuda_event) == NOT_READY
    assert lib.evrt_stream_query(s) == NOT_READY  # _as_parameter_
    e.synchronize()
    assert lib.evrt_event_query(e) == 0


def test_acl_takes_the_handles_and_gives_streams():
    acl = pytest.importorskip("evrt.acl", reason="no ACL layer")
    rt = acl.rt
    assert acl.init() in (0, acl.ACL_ERROR_REPEAT_INITIALIZE)
    assert rt.set_device(0) == 0
    s = cuda.Stream()
    ev, ret = rt.create_event()
    assert ret == 0
    s.delay(300)
    # an evrt.cuda stream handle is an aclrtStream
    assert rt.record_event(ev, s.cuda_stream) == 0
    status, ret = rt.query_event_status(ev)
    assert ret == 0 and status == acl.ACL_EVENT_RECORDED_STATUS_NOT_READY
    assert rt.synchronize_stream(s.cuda_stream) == 0
    status, ret = rt.query_event_status(ev)
    assert status == acl.ACL_EVENT_RECORDED_STATUS_COMPLETE
    assert rt.destroy_event(ev) == 0
    # and an ACL stream is a stream for evrt.cuda
    h, ret = rt.create_stream()
    assert ret == 0
    x = cuda.ExternalStream(h)
    assert x.cuda_stream == h and x.device.index == 0
    x.delay(200)
    assert rt.stream_query(h) == (acl.ACL_STREAM_STATUS_NOT_READY, 0)
    e = x.record_event()
    e.synchronize()
    assert rt.stream_query(h) == (acl.ACL_STREAM_STATUS_COMPLETE, 0)
    del x, e
    assert rt.destroy_stream(h) == 0


def test_external_stream_and_protocol():
    s = cuda.Stream()
    x = cuda.ExternalStream(s.cuda_stream)
    assert x == s and hash(x) == hash(s)
    assert x.__cuda_stream__() == (0, s.cuda_stream)
    y = cuda.get_stream_from_external(s.cuda_stream, 0)
    assert type(y) is cuda.Stream and y == s
    # the view keeps the owning object alive
    sid = s.cuda_stream
    del s
    gc.collect()
    x.delay(10)
    x.synchronize()
    assert x.cuda_stream == sid
    with pytest.raises(evrt.EvrtError) as ei:
        cuda.ExternalStream(sid + (1 << 40))
    assert ei.value.name == "EVRT_ERROR_INVALID_HANDLE"
    with pytest.raises(RuntimeError, match="Priority was explicitly set"):
        cuda.ExternalStream(sid, priority=-1)


def test_rebuild_from_parts_keeps_owner_alive():
    g = evrt.Stream("cuda:0")
    r = cuda.Stream(stream_id=g.stream_id, device_index=g.device_index,
                    device_type=g.device_type)
    assert r.stream_id == g.stream_id and r.device_type == 1
    assert r == g
    del g
    gc.collect()
    r.delay(5)
    r.synchronize()  # still a live stream
    # stream_id 0 is the device's default stream
    z = cuda.Stream(stream_id=0, device_index=0, device_type=1)
    assert z == cuda.default_stream(0)
    with pytest.raises(RuntimeError, match="unsupported device type"):
        cuda.Stream(stream_id=0, device_index=0, device_type=0)


def test_priority_range_and_clamping():
    least, greatest = cuda.Stream.priority_range()
    assert (least, greatest) == (0, -1)
    assert cuda.Stream(priority=-5).priority == greatest
    assert cuda.Stream(priority=3).priority == least
    assert cuda.Stream(priority=greatest).priority == greatest


def test_module_functions():
    assert cuda.is_available() is True
    assert cuda.device_count() == evrt.device_count()
    assert cuda.ipc_collect() is None
    s = cuda.Stream()
    cuda.set_stream(s)
    assert cuda.current_stream() == s
    # the current stream is shared with the other kinds: one per device
    assert evrt.current_stream().stream_id == s.stream_id
    cuda.set_stream(None)  # no-op
    assert cuda.current_stream() == s
    cuda.set_stream(cuda.default_stream())
    assert cuda.current_stream().cuda_stream == 0


def test_device_errors_are_torchs(two_devices):
    for bad in ("cpu", evrt.device("cpu"), "xpu:0", "evrt:0"):
        for fn in (cuda.current_stream, cuda.default_stream,
                   cuda.synchronize):
            with pytest.raises(ValueError, match="Expected a cuda device, but"):
                fn(bad)
    with pytest.raises(RuntimeError,
                       match=re.escape("Device index value 2 is out of index "
                                       "range [0, 2).")):
        cuda.current_stream(2)
    with pytest.raises(RuntimeError, match="Invalid device string: 'cuda0'"):
        cuda.set_device("cuda0")
    assert cuda._get_device_index("cuda:1") == 1
    assert cuda._get_device_index(None, optional=True) == 0
    with pytest.raises(ValueError, match="Expected a cuda device"):
        cuda._get_device_index(evrt.device("cpu"), optional=True)
    assert cuda._get_device_index("cpu", allow_cpu=True) == -1


def test_event_errors_are_torchs(two_devices):
    e = cuda.Event()
    e.record(cuda.Stream(0))
    with pytest.raises(RuntimeError) as ei:
        e.record(cuda.Stream(1))
    assert str(ei.value) == ("Event device 0 does not match recording "
                             "stream's device 1.")
    with pytest.raises(RuntimeError,
                       match="cudaIpcEventHandle_t expects byte-like object "
                             "of size 64, but got 3"):
        cuda.Event.from_ipc_handle(0, b"abc")
    with pytest.raises(RuntimeError,
                       match="Event can only be created on CUDA devices, but "
                             "got device type cpu"):
        cuda.Event.from_ipc_handle("cpu", bytes(64))
    with pytest.raises(ValueError, match="enable_timing=True"):
        cuda.Event().elapsed_time(cuda.Event())


def test_device_context_managers(two_devices):
    assert cuda.current_device() == 0
    with cuda.device(1):
        assert cuda.current_device() == 1
        with cuda.device("cuda:0"):
            assert cuda.current_device() == 0
        assert cuda.current_device() == 1
    assert cuda.current_device() == 0
    with cuda.device(-1):  # no-op
        assert cuda.current_device() == 0
    with cuda._DeviceGuard(1):
        assert cuda.current_device() == 1
    assert cuda.current_device() == 0
    s1 = cuda.Stream(1)
    with cuda.stream(s1):
        assert cuda.current_device() == 1 and cuda.current_stream() == s1
        with cuda.stream(None):
            assert cuda.current_stream() == s1
    assert cuda.current_device() == 0
    assert cuda.current_stream(1).cuda_stream == 0


def test_event_ordering_and_wait_stream():
    a, b = cuda.Stream(), cuda.Stream()
    order = []
    a.delay(100)
    a.launch(order.append, "a")
    b.wait_stream(a)
    b.launch(order.append, "b")
    b.synchronize()
    assert order == ["a", "b"]
    e = cuda.Event(enable_timing=True)
    f = cuda.Event(enable_timing=True)
    with cuda.stream(a):
        e.record()
        a.delay(30)
        f.record()
    f.synchronize()
    assert f.elapsed_time(e) < 0 < e.elapsed_time(f)


def test_pickles_as_ipc_handle():
    e = cuda.Event(interprocess=True)
    fn, args = e.__reduce__()
    assert fn == cuda.Event.from_ipc_handle
    assert args[0] == evrt.device("cuda:0") and len(args[1]) == 64
    with pytest.raises(evrt.EvrtError):
        pickle.dumps(cuda.Event())  # not interprocess


def test_help_shows_docstrings():
    text = pydoc.render_doc(cuda.Event)
    assert "enable_timing" in text and "record(" in text
    assert "lazily" in cuda.Event.__doc__
    for fn in (cuda.current_stream, cuda.set_stream, cuda.synchronize,
               cuda.Stream.wait_stream, cuda.Event.elapsed_time):
        assert fn.__doc__ and len(fn.__doc__) > 20, fn
