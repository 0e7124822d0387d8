"""One runtime per process: the package, a C extension linked against
libevrt and a ctypes user all get the same libevrt.so.0, so handles,
streams and events pass freely between them."""
import ctypes
import os

import pytest

import evrt
import evrt.cuda

EVRT_NOT_READY = 1


def ext():
    return pytest.importorskip(
        "evrt_share_ext", reason="the tests' C extension is built by CMake")


def mapped_libevrt():
    with open("/proc/self/maps") as f:
        return {line.split()[-1] for line in f
                if os.path.basename(line.split()[-1]).startswith("libevrt.so")}


def test_one_libevrt_in_the_process():
    path = evrt.library_path()
    assert os.path.basename(path).startswith("libevrt.so")
    # the C extension linked against libevrt got the package's library
    assert ext().library_path() == path
    # ctypes, by soname or by the path the package reports, too
    by_name = ctypes.CDLL("libevrt.so.0")
    by_path = ctypes.CDLL(path)
    fn = ctypes.cast(by_name.evrt_version, ctypes.c_void_p).value
    assert fn == ctypes.cast(by_path.evrt_version, ctypes.c_void_p).value
    assert mapped_libevrt() == {os.path.realpath(path)} or \
        mapped_libevrt() == {path}


def test_c_extension_uses_python_streams_and_events():
    e_ = ext()
    s = evrt.Stream()
    s.delay(300)
    e = s.record_event()
    assert e_.stream_query(s.handle) == EVRT_NOT_READY
    assert e_.event_query(e.handle) == EVRT_NOT_READY
    s.synchronize()
    assert e_.stream_query(s.handle) == 0
    assert e_.event_query(e.handle) == 0
    # and records into them: Python sees the C call's work
    f = evrt.Event()
    f.record(s)  # creates the native event
    s.delay(300)
    assert e_.event_record(f.handle, s.handle) == 0
    assert not f.query()
    f.synchronize()
    assert f.query()


def test_ctypes_user_shares_handles():
    lib = ctypes.CDLL("libevrt.so.0")
    lib.evrt_event_query.argtypes = [ctypes.c_void_p]
    lib.evrt_stream_create.argtypes = [ctypes.POINTER(ctypes.c_void_p),
                                       ctypes.c_int, ctypes.c_int,
                                       ctypes.c_uint]
    lib.evrt_stream_delay.argtypes = [ctypes.c_void_p, ctypes.c_uint64]
    lib.evrt_stream_query.argtypes = [ctypes.c_void_p]
    lib.evrt_stream_destroy.argtypes = [ctypes.c_void_p]
    s = evrt.Stream()
    s.delay(300)
    e = s.record_event()
    assert lib.evrt_event_query(e.handle) == EVRT_NOT_READY
    e.synchronize()
    assert lib.evrt_event_query(e.handle) == 0
    # a stream made by the C side is a stream of this runtime
    h = ctypes.c_void_p()
    assert lib.evrt_stream_create(ctypes.byref(h), 0, 0, 0) == 0
    assert lib.evrt_stream_delay(h, 200 * 10**6) == 0
    assert lib.evrt_stream_query(h) == EVRT_NOT_READY
    evrt.synchronize()  # device 0: waits for the C-made stream as well
    assert lib.evrt_stream_query(h) == 0
    assert lib.evrt_stream_destroy(h) == 0


def test_python_uses_a_stream_made_by_the_c_extension():
    e_ = ext()
    h = e_.stream_create(0)
    try:
        x = evrt.ExternalStream(h)
        assert x.handle == x.stream_id == h and not x.is_default
        order = []
        assert e_.stream_delay(h, 200) == 0  # C enqueues ...
        x.launch(order.append, "python")  # ... Python enqueues behind it
        assert e_.stream_query(h) == EVRT_NOT_READY and order == []
        ev = x.record_event()
        ev.synchronize()
        assert order == ["python"] and e_.stream_query(h) == 0
        # evrt.cuda sees the same stream under its handle
        c = evrt.cuda.ExternalStream(h)
        assert c.cuda_stream == h and c.query()
        del x, c, ev
    finally:
        assert e_.stream_destroy(h) == 0
