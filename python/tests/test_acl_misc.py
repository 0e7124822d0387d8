"""evrt.acl: stream configuration handles (create_stream_config_handle,
set_stream_config_opt, create_stream_v2), init / finalize callbacks with
Python callables, finalize_reference, and allocator_get_by_stream.

The init / finalize tests run in a fresh interpreter each: aclInit's count
and the registered callbacks are process-wide, and the other tests of this
process call acl.init() again and again."""
import ctypes
import struct
import textwrap

import pytest

from conftest import acl_ok, run_python

acl = pytest.importorskip(
    "evrt.acl", reason="evrt built without the ACL layer (src/acl)")
rt = acl.rt

PARAM = acl.ACL_ERROR_INVALID_PARAM
# aclrtStreamConfigHandle: {void *workptr; size_t workSize; size_t flag;
# uint32_t priority;} (the public CANN struct, include/acl/acl_rt.h)
HANDLE_FMT = "PNNI"


def read_handle(h):
    raw = ctypes.string_at(h, struct.calcsize(HANDLE_FMT))
    return struct.unpack(HANDLE_FMT, raw)


# ------------------------------------------------ stream configuration

def test_create_stream_v2_takes_priority_and_flags(acl_device):
    h = rt.create_stream_config_handle()
    assert h != 0
    assert rt.set_stream_config_opt(h, acl.ACL_RT_STREAM_PRIORITY, 3) == 0
    assert rt.set_stream_config_opt(h, acl.ACL_RT_STREAM_FLAG,
                                    acl.ACL_STREAM_FAST_LAUNCH) == 0
    assert rt.set_stream_config_opt(h, acl.ACL_RT_STREAM_WORK_SIZE,
                                    1 << 40) == 0
    assert rt.set_stream_config_opt(h, acl.ACL_RT_STREAM_WORK_ADDR_PTR,
                                    0x5000) == 0
    # each value went in as its attribute's C type
    assert read_handle(h) == (0x5000, 1 << 40, acl.ACL_STREAM_FAST_LAUNCH, 3)
    s = acl_ok(rt.create_stream_v2(h))
    assert s != 0
    assert acl_ok(rt.stream_get_priority(s)) == 3
    assert acl_ok(rt.stream_get_flags(s)) == acl.ACL_STREAM_FAST_LAUNCH
    assert rt.destroy_stream(s) == 0
    assert rt.destroy_stream_config_handle(h) == 0


def test_create_stream_v2_without_handle_is_default(acl_device):
    s = acl_ok(rt.create_stream_v2(None))
    assert acl_ok(rt.stream_get_priority(s)) == 0
    assert acl_ok(rt.stream_get_flags(s)) == 0
    assert rt.destroy_stream(s) == 0


def test_stream_config_bad_input(acl_device):
    h = rt.create_stream_config_handle()
    assert rt.set_stream_config_opt(h, acl.ACL_RT_STREAM_PRIORITY, 5) == 0
    assert rt.set_stream_config_opt(h, acl.ACL_RT_STREAM_FLAG, 0) == 0
    before = read_handle(h)
    # values ACL refuses: priority out of [0, 7], an unknown attribute
    assert rt.set_stream_config_opt(h, acl.ACL_RT_STREAM_PRIORITY, 8) == PARAM
    assert rt.set_stream_config_opt(h, 99, 1) == PARAM
    assert read_handle(h) == before                       # nothing changed
    assert rt.set_stream_config_opt(None, acl.ACL_RT_STREAM_PRIORITY,
                                    1) == PARAM
    assert rt.set_stream_config_opt(0, acl.ACL_RT_STREAM_FLAG, 1) == PARAM
    assert rt.destroy_stream_config_handle(0) == PARAM
    # wrong Python types, values that do not fit the attribute's C type
    with pytest.raises(TypeError):
        rt.set_stream_config_opt(h, acl.ACL_RT_STREAM_PRIORITY, "3")
    with pytest.raises(TypeError):
        rt.set_stream_config_opt(h, acl.ACL_RT_STREAM_WORK_ADDR_PTR, 1.5)
    with pytest.raises(TypeError):
        rt.set_stream_config_opt("h", acl.ACL_RT_STREAM_PRIORITY, 3)
    with pytest.raises(OverflowError):
        rt.set_stream_config_opt(h, acl.ACL_RT_STREAM_PRIORITY, 1 << 32)
    with pytest.raises(OverflowError):
        rt.set_stream_config_opt(h, acl.ACL_RT_STREAM_FLAG, -1)
    with pytest.raises(TypeError):
        rt.create_stream_v2("h")
    with pytest.raises(TypeError):
        rt.destroy_stream_config_handle(1.0)
    assert read_handle(h) == before
    s = acl_ok(rt.create_stream_v2(h))
    assert acl_ok(rt.stream_get_priority(s)) == 5
    assert rt.destroy_stream(s) == 0
    # a flag that is a valid size_t but no stream flag: refused at creation
    assert rt.set_stream_config_opt(h, acl.ACL_RT_STREAM_FLAG, 1 << 32) == 0
    assert rt.create_stream_v2(h) == (0, PARAM)
    assert rt.destroy_stream_config_handle(h) == 0


# ------------------------------------------------ allocator_get_by_stream

def _ascendcl():
    """The process's libascendcl (loaded by evrt.acl), through ctypes."""
    with open("/proc/self/maps") as f:
        paths = {line.split()[-1] for line in f if "libascendcl" in line}
    assert paths, "libascendcl is not mapped"
    return ctypes.CDLL(sorted(paths)[0])


def test_allocator_get_by_stream_returns_registration(acl_device):
    def f_alloc(obj, size):
        return None

    def f_free(obj, block):
        return None

    def f_advise(obj, size, addr):
        return None

    def f_addr(block):
        return block

    d = rt.allocator_create_desc()
    assert rt.allocator_set_obj_to_desc(d, 0x1234) == 0
    assert rt.allocator_set_alloc_func_to_desc(d, f_alloc) == 0
    assert rt.allocator_set_free_func_to_desc(d, f_free) == 0
    assert rt.allocator_set_alloc_advise_func_to_desc(d, f_advise) == 0
    assert rt.allocator_set_get_addr_from_block_func_to_desc(d, f_addr) == 0
    s = acl_ok(rt.create_stream())
    assert rt.allocator_register(s, d) == 0
    got = rt.allocator_get_by_stream(s)
    assert got[:2] == (d, 0x1234) and got[-1] == 0
    assert got[2] is f_alloc and got[3] is f_free
    assert got[4] is f_advise and got[5] is f_addr

    # a descriptor with an alloc function set by C code (its address), no
    # advise function (None), and Python functions for the others
    lib = _ascendcl()
    ALLOC = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)
    c_alloc = ALLOC(lambda a, n: None)
    lib.aclrtAllocatorSetAllocFuncToDesc.argtypes = [ctypes.c_void_p, ALLOC]
    d2 = rt.allocator_create_desc()
    assert rt.allocator_set_obj_to_desc(d2, 0x99) == 0
    assert lib.aclrtAllocatorSetAllocFuncToDesc(d2, c_alloc) == 0

    def f_free2(obj, block):
        return None

    assert rt.allocator_set_free_func_to_desc(d2, f_free2) == 0
    assert rt.allocator_set_get_addr_from_block_func_to_desc(d2, f_addr) == 0
    s2 = acl_ok(rt.create_stream())
    assert rt.allocator_register(s2, d2) == 0
    assert rt.allocator_get_by_stream(s2) == (
        d2, 0x99, ctypes.cast(c_alloc, ctypes.c_void_p).value, f_free2, None,
        f_addr, 0)
    # as in pyACL, one Python function per kind, the last one set: what a C
    # caller of s's free function now runs
    assert rt.allocator_get_by_stream(s)[3] is f_free2

    # unregistered: ACL's code, nothing else
    assert rt.allocator_unregister(s) == 0
    assert rt.allocator_get_by_stream(s) == (0, 0, None, None, None, None,
                                             PARAM)
    assert rt.allocator_get_by_stream(None) == (0, 0, None, None, None, None,
                                                PARAM)
    assert rt.allocator_get_by_stream(s2)[0] == d2    # the other one stays
    with pytest.raises(TypeError):
        rt.allocator_get_by_stream("s")
    assert rt.allocator_unregister(s2) == 0
    for x in (s, s2):
        assert rt.destroy_stream(x) == 0
    assert rt.allocator_destroy_desc(d) == 0
    assert rt.allocator_destroy_desc(d2) == 0


# ------------------------------------------------ init / finalize callbacks

def run(code, timeout=60):
    """Runs code in a fresh interpreter after `import evrt.acl as acl` (and
    pytest); asserts it ran to its end and returns what it printed before."""
    r = run_python("import pytest\nimport evrt.acl as acl\n" +
                   textwrap.dedent(code) + "\nprint('ok')\n",
                   timeout=timeout)
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout.splitlines()
    assert out[-1:] == ["ok"], r.stdout
    return out[:-1]


def test_init_callbacks_order_user_data_and_config(tmp_path):
    cfg = tmp_path / "acl.json"
    cfg.write_text('{"dump": 1}')
    run("""
        log = []
        OTHER, MODEL = acl.ACL_REG_TYPE_OTHER, acl.ACL_REG_TYPE_ACL_MODEL
        def a(cfg, u): log.append(("a", cfg, u))
        def b(cfg, u): log.append(("b", u)); return 0
        def c(cfg, u): log.append(("c", u))
        assert acl.init_callback_register(OTHER, b, "ub") == 0
        assert acl.init_callback_register(MODEL, a, ["ua"]) == 0
        assert acl.init_callback_register(OTHER, c, 3) == 0
        assert log == []                            # not before init
        assert acl.init(%r) == 0
        # type order (MODEL before OTHER), then registration order
        assert log == [("a", '{"dump": 1}', ["ua"]), ("b", "ub"),
                       ("c", 3)], log
        # registered after init: runs at once
        def late(cfg, u): log.append(("late", cfg, u))
        assert acl.init_callback_register(acl.ACL_REG_TYPE_ACL_DVPP, late,
                                          None) == 0
        assert log[-1] == ("late", '{"dump": 1}', None), log
        """ % str(cfg))


def test_unregister_removes_exactly_that_callable():
    run("""
        log = []
        OTHER = acl.ACL_REG_TYPE_OTHER
        class K:
            def __init__(self, n): self.n = n
            def fini(self, u): log.append((self.n, u))
        k1, k2, k3 = K(1), K(2), K(3)
        for k in (k1, k2, k3):
            assert acl.finalize_callback_register(OTHER, k.fini, k.n * 10) == 0
        # the middle one, by an equal bound method (not the same object)
        assert acl.finalize_callback_unregister(OTHER, k2.fini) == 0
        # gone: a second unregister is ACL's 500000
        assert acl.finalize_callback_unregister(OTHER, k2.fini) == \\
            acl.ACL_ERROR_INTERNAL_ERROR
        assert acl.init() == 0
        assert acl.finalize() == 0
        assert log == [(1, 10), (3, 30)], log
        # still registered: they run at the next finalize
        assert acl.init() == 0
        assert acl.finalize() == 0
        assert log == [(1, 10), (3, 30)] * 2, log
        for k in (k1, k3):
            assert acl.finalize_callback_unregister(OTHER, k.fini) == 0
        assert acl.init() == 0
        assert acl.finalize() == 0
        assert len(log) == 4, log
        """)


def test_callback_unregistering_itself_while_finalize_runs():
    run("""
        log = []
        OTHER = acl.ACL_REG_TYPE_OTHER
        def first(u):
            log.append("first")
            assert acl.finalize_callback_unregister(OTHER, first) == 0
            assert acl.finalize_callback_unregister(OTHER, third) == 0
        def second(u): log.append("second")
        def third(u): log.append("third")
        for f in (first, second, third):
            assert acl.finalize_callback_register(OTHER, f, None) == 0
        assert acl.init() == 0
        assert acl.finalize() == 0
        assert log == ["first", "second"], log     # third went before its turn
        assert acl.init() == 0
        assert acl.finalize() == 0
        assert log == ["first", "second", "second"], log
        """)


def test_init_callback_unregister_and_references():
    run("""
        import gc, weakref
        log = []
        def cb(cfg, u): log.append(u)
        class U: pass
        u = U()
        w = weakref.ref(u)
        T = acl.ACL_REG_TYPE_ACL_MODEL
        assert acl.init_callback_register(T, cb, u) == 0
        del u
        gc.collect()
        assert w() is not None                # kept while registered
        assert acl.init_callback_unregister(T, cb) == 0
        gc.collect()
        assert w() is None                    # dropped once unregistered
        assert acl.init() == 0
        assert log == [], log
        """)


def test_callback_results_and_exceptions():
    run("""
        import sys
        seen = []
        sys.unraisablehook = lambda h: seen.append(type(h.exc_value))
        T = acl.ACL_REG_TYPE_OTHER
        def boom(cfg, u): raise ValueError("boom")
        def bad(cfg, u): return "no"
        def code(u): return 507000
        assert acl.init_callback_register(T, boom, None) == 0
        # the exception is reported, aclInit fails and counts as not called
        assert acl.init() == acl.ACL_ERROR_FAILURE
        assert seen == [ValueError], seen
        assert acl.init_callback_unregister(T, boom) == 0
        assert acl.init_callback_register(T, bad, None) == 0
        assert acl.init() == acl.ACL_ERROR_FAILURE
        assert seen == [ValueError, TypeError], seen
        assert acl.init_callback_unregister(T, bad) == 0
        assert acl.init() == 0
        # a finalize callback's code is acl.finalize's
        assert acl.finalize_callback_register(T, code, None) == 0
        assert acl.finalize() == 507000
        """)


def test_callback_registration_bad_input():
    run("""
        log = []
        T = acl.ACL_REG_TYPE_ACL_OP_CBLAS
        def one(cfg, u): log.append(1)
        def two(cfg, u): log.append(2)
        def never(cfg, u): log.append("never")
        assert acl.init_callback_register(T, one, None) == 0
        # one callback per type except OTHER: 500000, the first stays
        assert acl.init_callback_register(T, two, None) == \\
            acl.ACL_ERROR_INTERNAL_ERROR
        # not registered (for that type, or at all): 500000, nothing changed
        assert acl.init_callback_unregister(T, never) == \\
            acl.ACL_ERROR_INTERNAL_ERROR
        assert acl.init_callback_unregister(acl.ACL_REG_TYPE_OTHER, one) == \\
            acl.ACL_ERROR_INTERNAL_ERROR
        for bad in ((T, 42, None), ("x", one, None), (T, None, None)):
            with pytest.raises(TypeError):
                acl.init_callback_register(*bad)
        for f in (acl.init_callback_unregister,
                  acl.finalize_callback_unregister):
            with pytest.raises(TypeError):
                f(T, "one")
        with pytest.raises(TypeError):                 # user data missing
            acl.finalize_callback_register(T, one)
        assert acl.init() == 0
        assert log == [1], log
        """)


def test_registrations_of_one_kind_are_bounded():
    out = run("""
        OTHER = acl.ACL_REG_TYPE_OTHER
        fns = [(lambda u: None) for _ in range(40)]
        rets = [acl.finalize_callback_register(OTHER, f, None) for f in fns]
        n = rets.count(0)
        assert n >= 16 and rets[n:] == [acl.ACL_ERROR_BAD_ALLOC] * (40 - n), \\
            rets
        # a freed one can be used again
        assert acl.finalize_callback_unregister(OTHER, fns[0]) == 0
        assert acl.finalize_callback_register(OTHER, fns[n], None) == 0
        print(n)
        """)
    assert out == ["32"]


def test_finalize_reference():
    run("""
        log = []
        def fini(u): log.append(u)
        assert acl.finalize_callback_register(acl.ACL_REG_TYPE_OTHER, fini,
                                              "u") == 0
        assert acl.finalize_reference() == (0, acl.ACL_ERROR_REPEAT_FINALIZE)
        assert acl.init() == 0
        assert acl.init() == acl.ACL_ERROR_REPEAT_INITIALIZE  # counted
        assert acl.rt.set_device(0) == 0
        assert acl.finalize_reference() == (1, 0)
        assert log == []                      # not the last reference
        s, ret = acl.rt.create_stream()
        assert ret == 0
        assert acl.finalize_reference() == (0, 0)
        assert log == ["u"], log              # the last one finalizes
        # the device was reset with the layer: the stream is gone
        assert acl.rt.destroy_stream(s) != 0
        assert acl.finalize_reference() == (0, acl.ACL_ERROR_REPEAT_FINALIZE)
        assert log == ["u"], log
        """)


def test_init_while_another_thread_finalizes_does_not_deadlock():
    """A finalize callback holds the C layer's callback lock and wants the
    GIL; acl.init and the registrations must not wait for that lock with
    the GIL held."""
    run("""
        import threading, time
        entered = threading.Event()
        def fini(u):
            entered.set()
            time.sleep(0.5)   # lets the main thread block in the C layer
        def noop(cfg, u): pass
        assert acl.init() == 0
        assert acl.finalize_callback_register(acl.ACL_REG_TYPE_OTHER, fini,
                                              None) == 0
        t = threading.Thread(target=acl.finalize)
        t.start()
        assert entered.wait(30)
        assert acl.init() == 0
        t.join()
        entered.clear()
        t = threading.Thread(target=acl.finalize)
        t.start()
        assert entered.wait(30)
        assert acl.init_callback_register(acl.ACL_REG_TYPE_OTHER, noop,
                                          None) == 0
        t.join()
        """, timeout=60)
