"""evrt.acl: pyACL calling conventions over evrt's ACL layer."""
import multiprocessing as mp
import sys
import threading
import time

import pytest

import evrt

acl = pytest.importorskip(
    "evrt.acl", reason="evrt built without the ACL layer (src/acl)")
rt = acl.rt


from conftest import acl_ok as ok  # noqa: E402  (conftest's acl_device too)

pytestmark = pytest.mark.usefixtures("acl_device")


def test_constants_by_acl_names():
    assert acl.ACL_SUCCESS == 0
    assert acl.ACL_ERROR_INVALID_PARAM == 100000
    assert acl.ACL_ERROR_RT_INVALID_HANDLE == 107017
    assert acl.ACL_EVENT_RECORDED_STATUS_COMPLETE == 1
    assert acl.ACL_EVENT_RECORDED_STATUS_NOT_READY == 0
    assert acl.ACL_EVENT_STATUS_COMPLETE == 0
    assert acl.ACL_EVENT_WAIT_STATUS_COMPLETE == 0
    assert acl.ACL_EVENT_TIME_LINE == 0x8 and acl.ACL_EVENT_SYNC == 0x1
    assert acl.ACL_CALLBACK_BLOCK == 1


def test_event_lifecycle_conventions():
    event, ret = rt.create_event()
    assert ret == acl.ACL_SUCCESS
    assert isinstance(event, int) and event != 0
    stream, ret = rt.create_stream()
    assert ret == 0 and isinstance(stream, int) and stream != 0
    assert isinstance(rt.record_event(event, stream), int)
    assert rt.synchronize_event(event) == 0
    status, ret = rt.query_event_status(event)
    assert ret == 0 and status == acl.ACL_EVENT_RECORDED_STATUS_COMPLETE
    assert rt.destroy_event(event) == 0
    # A destroyed handle is an error code, not a crash or an exception.
    assert rt.destroy_event(event) == acl.ACL_ERROR_RT_INVALID_HANDLE
    msg = acl.get_recent_err_msg()
    assert isinstance(msg, str) and msg
    assert rt.synchronize_stream(stream) == 0
    assert rt.destroy_stream(stream) == 0


def test_query_pending_then_complete():
    stream = ok(rt.create_stream())
    event = ok(rt.create_event_ex_with_flag(acl.ACL_EVENT_SYNC))
    assert rt.launch_host_func(stream, time.sleep, 0.15) == 0
    assert rt.record_event(event, stream) == 0
    assert ok(rt.query_event_status(event)) == \
        acl.ACL_EVENT_RECORDED_STATUS_NOT_READY
    assert ok(rt.stream_query(stream)) == acl.ACL_STREAM_STATUS_NOT_READY
    assert rt.synchronize_event(event) == 0
    assert ok(rt.query_event_status(event)) == \
        acl.ACL_EVENT_RECORDED_STATUS_COMPLETE
    assert ok(rt.stream_query(stream)) == acl.ACL_STREAM_STATUS_COMPLETE
    rt.destroy_event(event)
    rt.destroy_stream(stream)


def test_stream_wait_event_orders_streams():
    s1, s2 = ok(rt.create_stream()), ok(rt.create_stream())
    event = ok(rt.create_event())
    order = []
    rt.launch_host_func(s1, lambda _: (time.sleep(0.08), order.append(1)), None)
    assert rt.record_event(event, s1) == 0
    assert rt.stream_wait_event(s2, event) == 0
    rt.launch_host_func(s2, order.append, 2)
    assert rt.synchronize_stream(s2) == 0
    assert order == [1, 2]
    status = ok(rt.query_event_wait_status(event))
    assert status == acl.ACL_EVENT_WAIT_STATUS_COMPLETE
    for h in (s1, s2):
        rt.destroy_stream(h)
    rt.destroy_event(event)


def test_reset_event():
    stream = ok(rt.create_stream())
    event = ok(rt.create_event())
    assert rt.record_event(event, stream) == 0
    assert rt.synchronize_stream(stream) == 0
    assert ok(rt.query_event_status(event)) == \
        acl.ACL_EVENT_RECORDED_STATUS_COMPLETE
    assert rt.reset_event(event, stream) == 0
    assert rt.synchronize_stream(stream) == 0
    # Legacy events are a flag: reset makes them "not recorded" again.
    assert ok(rt.query_event_status(event)) == \
        acl.ACL_EVENT_RECORDED_STATUS_NOT_READY
    rt.destroy_event(event)
    rt.destroy_stream(stream)


def test_elapsed_time_and_timestamp():
    stream = ok(rt.create_stream())
    a = ok(rt.create_event_with_flag(acl.ACL_EVENT_TIME_LINE))
    b = ok(rt.create_event_with_flag(acl.ACL_EVENT_TIME_LINE))
    rt.record_event(a, stream)
    rt.launch_host_func(stream, time.sleep, 0.05)
    rt.record_event(b, stream)
    assert rt.synchronize_stream(stream) == 0
    ms, ret = rt.event_elapsed_time(a, b)
    assert ret == 0 and isinstance(ms, float) and 45.0 <= ms < 2000.0
    ta, tb = ok(rt.event_get_timestamp(a)), ok(rt.event_get_timestamp(b))
    assert tb > ta
    for h in (a, b):
        rt.destroy_event(h)
    rt.destroy_stream(stream)


def test_bad_arguments_are_codes_or_type_errors():
    assert rt.record_event(0, 0) != acl.ACL_SUCCESS  # NULL event
    assert rt.synchronize_event(12345) != acl.ACL_SUCCESS  # forged handle
    _, ret = rt.query_event_status(0)
    assert ret != acl.ACL_SUCCESS
    with pytest.raises(TypeError):
        rt.record_event("event", 0)


def test_default_stream_is_zero():
    event = ok(rt.create_event())
    assert rt.record_event(event, 0) == 0
    assert rt.synchronize_stream(0) == 0
    assert rt.synchronize_event(event) == 0
    rt.destroy_event(event)


def test_devices_and_contexts():
    assert ok(rt.get_device()) == 0
    n = ok(rt.get_device_count())
    assert n == evrt.device_count()
    ctx = ok(rt.get_context())
    assert isinstance(ctx, int) and ctx != 0
    assert rt.synchronize_device() == 0
    assert rt.set_device(n) == acl.ACL_ERROR_RT_INVALID_DEVICEID


def test_synchronize_releases_gil():
    spans = {}
    barrier = threading.Barrier(2)

    def worker(i):
        assert rt.set_device(0) == 0  # ACL contexts are per thread
        s = ok(rt.create_stream())
        e = ok(rt.create_event_ex_with_flag(acl.ACL_EVENT_SYNC))
        barrier.wait()
        t0 = time.monotonic()
        # evrt's CPU-free delay via a torch-style stream would not be on this
        # ACL stream; a host function that sleeps releases the GIL itself,
        # so the test is about synchronize_event holding it or not.
        rt.launch_host_func(s, time.sleep, 0.1)
        rt.record_event(e, s)
        assert rt.synchronize_event(e) == 0
        spans[i] = (t0, time.monotonic())
        rt.destroy_event(e)
        rt.destroy_stream(s)
        rt.reset_device(0)

    ts = [threading.Thread(target=worker, args=(i,)) for i in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    (a0, a1), (b0, b1) = spans[0], spans[1]
    assert max(a0, b0) < min(a1, b1), spans


def test_launch_callback_with_report_thread():
    stream = ok(rt.create_stream())
    got = []
    stop = threading.Event()
    tid = []

    def reporter():
        assert rt.set_device(0) == 0
        tid.append(threading.get_ident())
        while not stop.is_set():
            rt.process_report(50)  # times out now and then: fine
        rt.reset_device(0)

    t = threading.Thread(target=reporter)
    t.start()
    while not tid:
        time.sleep(0.001)
    assert rt.subscribe_report(tid[0], stream) == 0
    assert rt.launch_callback(lambda d: got.append((d, threading.get_ident())),
                              "data", acl.ACL_CALLBACK_BLOCK, stream) == 0
    assert rt.synchronize_stream(stream) == 0
    assert got == [("data", tid[0])]  # ran on the reporting thread
    assert rt.unsubscribe_report(tid[0], stream) == 0
    stop.set()
    t.join()
    # Not subscribed any more: an error code.
    assert rt.launch_callback(print, None, acl.ACL_CALLBACK_NO_BLOCK,
                              stream) != 0
    rt.destroy_stream(stream)


def test_host_func_exception_is_reported(monkeypatch):
    seen = []
    monkeypatch.setattr(sys, "unraisablehook",
                        lambda u: seen.append(u.exc_value))
    stream = ok(rt.create_stream())

    def bad(_):
        raise KeyError("acl-boom")

    assert rt.launch_host_func(stream, bad, None) == 0
    assert rt.synchronize_stream(stream) == 0
    assert len(seen) == 1 and isinstance(seen[0], KeyError)
    rt.destroy_stream(stream)


def test_host_func_references_released():
    stream = ok(rt.create_stream())
    payload = object()
    base = sys.getrefcount(payload)
    for _ in range(100):
        rt.launch_host_func(stream, lambda p: None, payload)
    rt.synchronize_stream(stream)
    assert sys.getrefcount(payload) == base
    rt.destroy_stream(stream)


def test_memory_copy():
    src = b"hello, evrt"
    n = len(src)
    dev = ok(rt.malloc(n, acl.ACL_MEM_MALLOC_HUGE_FIRST))
    host = ok(rt.malloc_host(n))
    stream = ok(rt.create_stream())
    assert rt.memcpy(dev, n, acl.util.bytes_to_ptr(src), n,
                     acl.ACL_MEMCPY_HOST_TO_DEVICE) == 0
    assert rt.memcpy_async(host, n, dev, n, acl.ACL_MEMCPY_DEVICE_TO_HOST,
                           stream) == 0
    assert rt.synchronize_stream(stream) == 0
    assert acl.util.ptr_to_bytes(host, n) == src
    assert rt.memset(host, n, ord("x"), 3) == 0
    assert acl.util.ptr_to_bytes(host, n) == b"xxxlo, evrt"
    assert rt.memcpy(host, 2, dev, n, acl.ACL_MEMCPY_DEVICE_TO_HOST) != 0
    assert rt.free(dev) == 0 and rt.free_host(host) == 0
    rt.destroy_stream(stream)



def _libc_map(prot):
    """A private anonymous page with protection `prot`, as an int address
    (ctypes gives no address of a read-only mmap object)."""
    import ctypes
    import mmap
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                          ctypes.c_int, ctypes.c_int, ctypes.c_long]
    p = libc.mmap(None, mmap.PAGESIZE, prot,
                  mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
    assert p not in (None, ctypes.c_void_p(-1).value), ctypes.get_errno()
    return libc, p


def test_memset_memcpy_take_plain_host_memory():
    """CANN's aclrtMemset and the host sides of aclrtMemcpy take any host
    memory of the process (docs/acl.md, "Host memory the layer did not
    allocate"): from Python, a ctypes buffer's address."""
    import ctypes
    buf = ctypes.create_string_buffer(16)
    addr = ctypes.addressof(buf)
    assert rt.memset(addr, 16, 0x41, 10) == 0
    assert buf.raw == b"A" * 10 + b"\0" * 6
    src = b"hello"
    assert rt.memcpy(addr, 16, acl.util.bytes_to_ptr(src), 5,
                     acl.ACL_MEMCPY_HOST_TO_HOST) == 0
    assert buf.raw[:10] == b"helloAAAAA"
    dev = ok(rt.malloc(16, acl.ACL_MEM_MALLOC_HUGE_FIRST))
    assert rt.memcpy(dev, 16, addr, 16, acl.ACL_MEMCPY_HOST_TO_DEVICE) == 0
    back = ctypes.create_string_buffer(16)
    assert rt.memcpy(ctypes.addressof(back), 16, dev, 16,
                     acl.ACL_MEMCPY_DEVICE_TO_HOST) == 0
    assert back.raw == buf.raw
    # the async fill runs later: only the layer's memory (100000, unchanged)
    stream = ok(rt.create_stream())
    assert rt.memset_async(addr, 16, 0x42, 16, stream) == \
        acl.ACL_ERROR_INVALID_PARAM
    assert rt.synchronize_stream(stream) == 0
    assert buf.raw[:10] == b"helloAAAAA"
    assert rt.destroy_stream(stream) == 0
    assert rt.free(dev) == 0


def test_memset_memcpy_refuse_unwritable_host_memory():
    """A read-only or inaccessible host page is ACL's invalid parameter, with
    nothing written, instead of a crash."""
    import mmap
    libc, ro = _libc_map(mmap.PROT_READ)
    _, none = _libc_map(0)   # PROT_NONE (mmap has no name for it)
    try:
        assert rt.memset(ro, 8, 0x41, 8) == acl.ACL_ERROR_INVALID_PARAM
        assert acl.util.ptr_to_bytes(ro, 8) == b"\0" * 8
        src = acl.util.bytes_to_ptr(b"12345678")
        assert rt.memcpy(ro, 8, src, 8, acl.ACL_MEMCPY_HOST_TO_HOST) == \
            acl.ACL_ERROR_INVALID_PARAM
        assert acl.util.ptr_to_bytes(ro, 8) == b"\0" * 8
        assert rt.memset(none, 8, 0x41, 8) == acl.ACL_ERROR_INVALID_PARAM
        dev = ok(rt.malloc(8, acl.ACL_MEM_MALLOC_HUGE_FIRST))
        assert rt.memcpy(dev, 8, none, 8, acl.ACL_MEMCPY_HOST_TO_DEVICE) == \
            acl.ACL_ERROR_INVALID_PARAM
        assert rt.free(dev) == 0
    finally:
        libc.munmap(ro, mmap.PAGESIZE)
        libc.munmap(none, mmap.PAGESIZE)


def _acl_child(handle, q):
    from evrt import acl as a
    try:
        a.init()
        a.rt.set_device(0)
        ev, ret = a.rt.ipc_open_event_handle(handle)
        if ret:
            q.put(("open", ret, a.get_recent_err_msg()))
            return
        t0 = time.monotonic()
        ret = a.rt.synchronize_event(ev)
        q.put(("sync", ret, time.monotonic() - t0))
        a.rt.destroy_event(ev)
    except Exception as exc:
        q.put(("error", repr(exc), ""))


def test_ipc_event_two_processes():
    event = ok(rt.create_event_ex_with_flag(acl.ACL_EVENT_IPC))
    handle, ret = rt.ipc_get_event_handle(event)
    if ret in (acl.ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
               acl.ACL_ERROR_FEATURE_UNSUPPORTED, acl.ACL_ERROR_API_NOT_SUPPORT):
        pytest.skip("ACL IPC events not supported yet (%d)" % ret)
    assert ret == 0 and isinstance(handle, bytes) and len(handle) == 64
    # Opening in the exporting process is refused.
    _, ret = rt.ipc_open_event_handle(handle)
    assert ret != 0
    stream = ok(rt.create_stream())
    rt.launch_host_func(stream, time.sleep, 0.3)
    assert rt.record_event(event, stream) == 0
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_acl_child, args=(handle, q))
    p.start()
    try:
        what, ret, extra = q.get(timeout=60)
        assert (what, ret) == ("sync", 0), (what, ret, extra)
    finally:
        p.join(timeout=30)
        if p.is_alive():
            p.kill()
    assert p.exitcode == 0
    rt.synchronize_stream(stream)
    rt.destroy_event(event)
    rt.destroy_stream(stream)
