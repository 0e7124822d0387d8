"""evrt.acl.rt: the calls built on evrt's failures, values, interprocess
memory and subscribed host functions, with pyACL's conventions (outputs
first, then ret; handles and pointers are ints; keys are str)."""
import threading

import pytest

acl = pytest.importorskip(
    "evrt.acl", reason="evrt built without the ACL layer (src/acl)")
rt = acl.rt


from conftest import acl_ok as ok  # noqa: E402  (conftest's acl_device too)

pytestmark = pytest.mark.usefixtures("acl_device")


def test_ptr_to_bytes_refuses_bogus_pointers():
    # issue 13 item 2: a ValueError, not a crash
    with pytest.raises(ValueError):
        acl.util.ptr_to_bytes(0x1000, 16)
    with pytest.raises(ValueError):
        acl.util.ptr_to_bytes(2**63 - 64, 128)
    src = b"evrt"
    assert acl.util.ptr_to_bytes(acl.util.bytes_to_ptr(src), 4) == src
    assert acl.util.ptr_to_bytes(0, 0) == b""


def test_value_wait_and_write_across_streams():
    dev = ok(rt.malloc(64, acl.ACL_MEM_MALLOC_HUGE_FIRST))
    assert rt.memset(dev, 64, 0, 64) == 0
    a, b = ok(rt.create_stream()), ok(rt.create_stream())
    assert rt.value_wait(dev, 100, acl.ACL_STREAM_WAIT_VALUE_EQ, a) == 0
    assert (rt.synchronize_stream_with_timeout(a, 100)
            == acl.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT)
    assert rt.value_write(dev, 100, 0, b) == 0
    assert rt.synchronize_stream(b) == 0
    assert rt.synchronize_stream_with_timeout(a, 10000) == 0
    assert acl.util.ptr_to_bytes(dev, 8) == (100).to_bytes(8, "little")
    assert rt.value_wait(dev, 1, 9, a) == acl.ACL_ERROR_INVALID_PARAM
    assert rt.value_write(dev + 4, 1, 0, a) == acl.ACL_ERROR_INVALID_PARAM
    for s in (a, b):
        assert rt.destroy_stream(s) == 0
    assert rt.free(dev) == 0


def test_notifies():
    n = ok(rt.create_notify(acl.ACL_NOTIFY_DEFAULT))
    assert isinstance(ok(rt.get_notify_id(n)), int)
    s, w = ok(rt.create_stream()), ok(rt.create_stream())
    assert rt.record_notify(n, s) == 0
    assert rt.synchronize_stream(s) == 0
    assert rt.notify_batch_reset([n]) == 0
    assert rt.wait_and_reset_notify(n, w, 0) == 0
    assert (rt.synchronize_stream_with_timeout(w, 100)
            == acl.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT)
    assert rt.record_notify(n, s) == 0
    assert rt.synchronize_stream_with_timeout(w, 10000) == 0
    key = ok(rt.notify_get_export_key(n, 0))
    assert isinstance(key, str) and len(key) == 64
    assert rt.notify_set_import_pid(n, [12345]) == 0
    _, ret = rt.notify_import_by_key(key, 0)  # own process: refused
    assert ret != 0
    assert rt.notify_batch_reset([]) == acl.ACL_ERROR_INVALID_PARAM
    assert rt.destroy_notify(n) == 0
    assert rt.destroy_notify(n) == acl.ACL_ERROR_RT_INVALID_HANDLE
    for x in (s, w):
        assert rt.destroy_stream(x) == 0


def test_abort_and_exception_callback_conventions():
    s = ok(rt.create_stream())
    dev = ok(rt.malloc(64, acl.ACL_MEM_MALLOC_HUGE_FIRST))
    assert rt.memset(dev, 64, 0, 64) == 0
    gate = threading.Event()
    assert rt.launch_host_func(s, lambda _: gate.wait(10), None) == 0
    # (copies and fills, not Python callables: a discarded callable never
    # runs, and the interpreter's exit would wait for it)
    for i in range(5):
        assert rt.memset_async(dev, 64, 0x55, 64, s) == 0
    assert rt.stream_abort(s) == 0
    gate.set()
    assert rt.synchronize_stream(s) == acl.ACL_ERROR_RT_STREAM_ABORT
    assert acl.util.ptr_to_bytes(dev, 64) == bytes(64)
    assert rt.synchronize_stream(s) == 0
    assert rt.free(dev) == 0
    assert rt.stream_abort(0) == acl.ACL_ERROR_INVALID_PARAM
    assert rt.stream_stop(s) == 0
    assert rt.set_exception_info_callback(lambda info: None) == 0
    assert rt.set_exception_info_callback(None) == 0
    assert rt.get_task_id_from_exception_info(0) == 0xFFFFFFFF
    assert isinstance(ok(rt.get_thread_last_task_id()), int)
    info = ok(rt.get_error_verbose(0))
    assert set(info) == {"tryRepair", "hasDetail", "errorType",
                         "aicoreErrType"}
    seen = []
    assert rt.reg_stream_state_callback(
        "py", lambda stm, st, a: seen.append((st, a)), "tag") == 0
    t = ok(rt.create_stream())
    assert rt.destroy_stream(t) == 0
    assert rt.reg_stream_state_callback("py", None) == 0
    assert seen == [(acl.ACL_RT_STREAM_STATE_CREATE_POST, "tag"),
                    (acl.ACL_RT_STREAM_STATE_DESTROY_PRE, "tag")]
    assert rt.destroy_stream(s) == 0


def test_host_funcs_run_on_the_subscribed_thread():
    s = ok(rt.create_stream())
    stop = threading.Event()

    def loop():
        while not stop.is_set():
            rt.process_host_func(20)

    th = threading.Thread(target=loop)
    th.start()
    assert rt.subscribe_host_func(th.ident, s) == 0
    where = []
    assert rt.launch_host_func(s, lambda _: where.append(
        threading.get_ident()), None) == 0
    assert rt.synchronize_stream_with_timeout(s, 20000) == 0
    assert where == [th.ident]
    assert rt.unsubscribe_host_func(th.ident, s) == 0
    stop.set()
    th.join()
    assert rt.process_host_func(10) == acl.ACL_ERROR_RT_THREAD_SUBSCRIBE
    assert rt.destroy_stream(s) == 0


def test_operator_timeouts_follow_cann_quantization():
    interval = ok(rt.get_op_timeout_interval())
    assert interval >= 100000
    assert ok(rt.set_op_execute_timeout_v2(interval + 1)) == 2 * interval
    assert rt.set_op_execute_timeout(1) == 0
    assert ok(rt.get_op_execute_timeout()) == interval // 1000
    # the millisecond form: 1 ms rounds up to one interval, as 1 s does
    assert rt.set_op_execute_timeout_with_ms(1) == 0
    assert ok(rt.get_op_execute_timeout()) == interval // 1000
    assert rt.set_op_execute_timeout_with_ms(interval // 1000 + 1) == 0
    assert ok(rt.get_op_execute_timeout()) == 2 * interval // 1000
    assert rt.set_op_wait_timeout(5) == 0
    with pytest.raises(TypeError):
        rt.set_op_wait_timeout("5")


def test_last_error_get_and_peek():
    level = acl.ACL_RT_THREAD_LEVEL
    assert rt.get_last_error(level) in (0,) + tuple(range(100000, 600000))
    assert rt.peek_at_last_error(level) == acl.ACL_SUCCESS
    assert rt.query_device_status(-1)[1] == acl.ACL_ERROR_RT_INVALID_DEVICEID
    assert rt.peek_at_last_error(level) == acl.ACL_ERROR_RT_INVALID_DEVICEID
    assert rt.peek_at_last_error(level) == acl.ACL_ERROR_RT_INVALID_DEVICEID
    assert rt.get_last_error(level) == acl.ACL_ERROR_RT_INVALID_DEVICEID
    assert rt.peek_at_last_error(level) == acl.ACL_SUCCESS
    assert rt.get_last_error(level + 1) == acl.ACL_ERROR_INVALID_PARAM
    assert rt.peek_at_last_error(level + 1) == acl.ACL_ERROR_INVALID_PARAM
    with pytest.raises(TypeError):
        rt.get_last_error(None)


def test_ipc_memory_conventions():
    dev = ok(rt.malloc(4096, acl.ACL_MEM_MALLOC_HUGE_FIRST))
    key = ok(rt.ipc_mem_get_export_key(
        dev, 4096, acl.ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION))
    assert isinstance(key, str) and len(key) == 64
    assert rt.ipc_mem_set_import_pid(key, [1, 2]) == 0
    _, ret = rt.ipc_mem_import_by_key(key, 0)  # own process: refused
    assert ret != 0
    pid = ok(rt.device_get_bare_tgid())
    assert pid > 0
    assert rt.ipc_mem_close(key) == 0
    assert rt.free(dev) == 0


def _failing_task(stream, code):
    """Enqueue a host task that fails with `code` (evrt's native
    evrt_launch_host_func_status through ctypes: an ACL stream is an evrt
    stream); returns the ctypes callback, to keep alive until it ran."""
    import ctypes
    with open("/proc/self/maps") as f:
        paths = {line.split()[-1] for line in f if "libevrt.so" in line}
    lib = ctypes.CDLL(sorted(paths)[0])
    proto = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p)
    cb = proto(lambda _: code)
    lib.evrt_launch_host_func_status.argtypes = [ctypes.c_void_p, proto,
                                                 ctypes.c_void_p]
    assert lib.evrt_launch_host_func_status(stream, cb, None) == 0
    return cb


def test_exception_info_callbacks_register_and_unregister():
    s = ok(rt.create_stream())
    seen_a, seen_b = [], []

    def a(info):
        seen_a.append((rt.get_error_code_from_exception_info(info),
                       rt.get_stream_id_from_exception_info(info)))

    def b(info):
        seen_b.append(rt.get_error_code_from_exception_info(info))

    assert rt.exception_info_callback_register(a) == 0
    assert rt.exception_info_callback_register(a) == 0  # once
    assert rt.exception_info_callback_register(b) == 0
    keep = _failing_task(s, acl.ACL_ERROR_RT_VECTOR_CORE_EXCEPTION)
    assert rt.synchronize_stream(s) == acl.ACL_ERROR_RT_VECTOR_CORE_EXCEPTION
    sid = ok(rt.stream_get_id(s))
    assert seen_a == [(acl.ACL_ERROR_RT_VECTOR_CORE_EXCEPTION, sid)]
    assert seen_b == [acl.ACL_ERROR_RT_VECTOR_CORE_EXCEPTION]
    # a unregistered: only b runs
    assert rt.exception_info_callback_unregister(a) == 0
    assert rt.exception_info_callback_unregister(a) == 0  # not registered: 0
    keep = _failing_task(s, 507000)
    assert rt.synchronize_stream(s) == 507000
    assert len(seen_a) == 1 and seen_b[-1] == 507000
    assert rt.exception_info_callback_unregister(b) == 0
    del keep
    # bad input: C's NULL is 100000; a non-callable is a TypeError
    assert rt.exception_info_callback_register(None) == \
        acl.ACL_ERROR_INVALID_PARAM
    assert rt.exception_info_callback_unregister(None) == \
        acl.ACL_ERROR_INVALID_PARAM
    with pytest.raises(TypeError):
        rt.exception_info_callback_register(3)
    # the C layer's limit: 16 registrations at once
    fns = [(lambda i: (lambda info: None))(i) for i in range(17)]
    rets = [rt.exception_info_callback_register(f) for f in fns]
    assert rets[:16] == [0] * 16
    assert rets[16] == acl.ACL_ERROR_RT_OVER_LIMIT
    for f in fns:
        assert rt.exception_info_callback_unregister(f) == 0
    assert rt.exception_info_callback_register(a) == 0  # room again
    assert rt.exception_info_callback_unregister(a) == 0
    assert rt.destroy_stream(s) == 0
