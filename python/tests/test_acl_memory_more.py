"""evrt.acl.rt: the memory calls pyACL lacks (issue 16): stream-ordered
pools, managed memory, batch copies, the copy through device addresses,
random numbers and the newer virtual-memory calls (access descriptors,
properties of a handle, V2 shareable handles), named by pyACL's rule, with
(outputs..., ret) results, C structs as dicts and C arrays as lists."""
import ctypes
import struct
import textwrap

import pytest

acl = pytest.importorskip(
    "evrt.acl", reason="evrt built without the ACL layer (src/acl)")
rt = acl.rt
util = acl.util

from conftest import acl_ok as ok, run_python  # noqa: E402

pytestmark = pytest.mark.usefixtures("acl_device")

HUGE = acl.ACL_MEM_MALLOC_HUGE_FIRST
H2D, D2H = acl.ACL_MEMCPY_HOST_TO_DEVICE, acl.ACL_MEMCPY_DEVICE_TO_HOST
INVALID = acl.ACL_ERROR_INVALID_PARAM          # 100000
RT_INVALID = acl.ACL_ERROR_RT_PARAM_INVALID    # 107000
GRANULE = 2 * 1024 * 1024
NO_FAIL = 2 ** 64 - 1                          # failIndex: SIZE_MAX
DEV0 = {"id": 0, "type": acl.ACL_MEM_LOCATION_TYPE_DEVICE}
HOST = {"id": 0, "type": acl.ACL_MEM_LOCATION_TYPE_HOST}


def to_dev(data):
    """Device memory holding `data` (bytes)."""
    p = ok(rt.malloc(len(data), HUGE))
    assert rt.memcpy(p, len(data), util.bytes_to_ptr(data), len(data),
                     H2D) == 0
    return p


def from_dev(p, n):
    h = ok(rt.malloc_host(n))
    assert rt.memcpy(h, n, p, n, D2H) == 0
    out = util.ptr_to_bytes(h, n)
    assert rt.free_host(h) == 0
    return out


@pytest.fixture
def stream():
    s = ok(rt.create_stream())
    yield s
    assert rt.destroy_stream(s) == 0


# ------------------------------------------------------------------ pools

def pool_props(**kw):
    p = {"allocType": acl.ACL_MEM_ALLOCATION_TYPE_PINNED,
         "handleType": acl.ACL_MEM_HANDLE_TYPE_NONE,
         "location": dict(DEV0), "maxSize": 0}
    p.update(kw)
    return p


def attr(pool, a):
    return ok(rt.mem_pool_get_attr(pool, a))


def test_pool_alloc_free_from_streams_with_data(stream):
    pool = ok(rt.mem_pool_create(pool_props()))
    # keep free blocks (the default threshold, 0, releases them at a free)
    big = 5 * 2 ** 40
    assert rt.mem_pool_set_attr(
        pool, acl.ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, big) == 0
    assert attr(pool, acl.ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD) == big
    p = ok(rt.mem_pool_malloc_async(1000, pool, stream))
    assert p != 0
    assert attr(pool, acl.ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT) == 1024
    data = bytes(range(200)) * 5
    host = ok(rt.malloc_host(1000))
    back = ok(rt.malloc_host(1000))
    ctypes.memmove(host, data, 1000)
    assert rt.memcpy_async(p, 1000, host, 1000, H2D, stream) == 0
    assert rt.memcpy_async(back, 1000, p, 1000, D2H, stream) == 0
    assert rt.mem_pool_free_async(p, stream) == 0
    assert rt.synchronize_stream(stream) == 0
    assert util.ptr_to_bytes(back, 1000) == data
    # the free ran: the block is free for any stream, and reused
    assert attr(pool, acl.ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT) == 0
    assert attr(pool, acl.ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH) == 1024
    assert attr(pool, acl.ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT) == 1024
    other = ok(rt.create_stream())
    assert ok(rt.mem_pool_malloc_async(600, pool, other)) == p
    assert rt.mem_pool_free_async(p, other) == 0
    assert rt.synchronize_stream(other) == 0
    assert rt.destroy_stream(other) == 0
    # attributes: a switch (uint32), a reset (uint64)
    assert attr(pool, acl.ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC) == 1
    assert rt.mem_pool_set_attr(
        pool, acl.ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC, 0) == 0
    assert attr(pool, acl.ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC) == 0
    assert rt.mem_pool_set_attr(
        pool, acl.ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH, 0) == 0
    assert attr(pool, acl.ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH) == 0
    # trimming releases the free block
    assert rt.mem_pool_trim_to(pool, 0) == 0
    assert attr(pool, acl.ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT) == 0
    assert rt.mem_pool_destroy(pool) == 0
    assert rt.mem_pool_destroy(pool) == RT_INVALID
    assert rt.free_host(host) == 0 and rt.free_host(back) == 0


def test_pool_bad_input(stream):
    # a pool is device memory, with zero reserved bytes
    assert rt.mem_pool_create(pool_props(location=dict(HOST))) == \
        (0, INVALID)
    assert rt.mem_pool_create(pool_props(reserved=[0, 1])) == (0, INVALID)
    pool = ok(rt.mem_pool_create(pool_props(maxSize=1024)))
    assert rt.mem_pool_malloc_async(0, pool, stream) == (0, INVALID)
    assert rt.mem_pool_malloc_async(2048, pool, stream) == \
        (0, acl.ACL_ERROR_RT_MEMORY_ALLOCATION)
    assert attr(pool, acl.ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT) == 0
    dev = ok(rt.malloc(64, HUGE))
    assert rt.mem_pool_free_async(dev, stream) == RT_INVALID
    # a switch is 0 or 1, the current sizes are read-only: nothing changes
    assert rt.mem_pool_set_attr(
        pool, acl.ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC, 2) == RT_INVALID
    assert attr(pool, acl.ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC) == 1
    assert rt.mem_pool_set_attr(
        pool, acl.ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT, 5) == RT_INVALID
    assert attr(pool, acl.ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT) == 0
    assert rt.mem_pool_get_attr(pool, 99) == (0, RT_INVALID)
    with pytest.raises(OverflowError):   # a switch is a uint32_t
        rt.mem_pool_set_attr(
            pool, acl.ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC, 2 ** 32)
    with pytest.raises(KeyError):
        rt.mem_pool_create({"allocType": 0})
    with pytest.raises(TypeError):
        rt.mem_pool_create([])
    with pytest.raises(TypeError):
        rt.mem_pool_malloc_async(64, "pool", stream)
    assert rt.mem_pool_destroy(pool) == 0
    assert rt.mem_pool_malloc_async(64, pool, stream) == (0, RT_INVALID)
    assert rt.free(dev) == 0


# --------------------------------------------------------- managed memory

def mloc(t, i=0):
    return {"type": t, "id": i}


MDEV = acl.ACL_MEM_LOCATIONTYPE_DEVICE
MHOST = acl.ACL_MEM_LOCATIONTYPE_HOST


def test_managed_memory_from_host_and_stream(stream):
    m = ok(rt.mem_alloc_managed(100, acl.ACL_RT_MEM_ATTACH_GLOBAL))
    a = ok(rt.pointer_get_attributes(m))
    assert a["location"]["type"] == acl.ACL_MEM_LOCATION_TYPE_MANAGED
    assert a["page_size"] == GRANULE
    ctypes.memmove(m, b"host wrote", 10)             # the host writes it
    assert rt.memset_async(m + 16, 16, 0x5A, 16, stream) == 0   # a stream
    dev = ok(rt.malloc(10, HUGE))
    assert rt.memcpy_async(dev, 10, m, 10, acl.ACL_MEMCPY_DEVICE_TO_DEVICE,
                           stream) == 0
    assert rt.synchronize_stream(stream) == 0
    assert util.ptr_to_bytes(m + 16, 16) == b"\x5a" * 16
    assert from_dev(dev, 10) == b"host wrote"
    assert rt.free(dev) == 0
    assert rt.free(m) == 0


def test_managed_advice_and_attributes(stream):
    R = acl
    m = ok(rt.mem_alloc_managed(2 * GRANULE, R.ACL_RT_MEM_ATTACH_GLOBAL))
    assert ok(rt.mem_managed_get_attr(
        R.ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, m, 2 * GRANULE)) == [0]
    assert rt.mem_managed_advise(m, GRANULE, R.ACL_MEM_ADVISE_SET_READ_MOSTLY,
                                 mloc(MDEV)) == 0
    assert ok(rt.mem_managed_get_attr(
        R.ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, m, GRANULE)) == [1]
    # not the same over the whole range
    assert ok(rt.mem_managed_get_attr(
        R.ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, m, 2 * GRANULE)) == [0]
    assert rt.mem_managed_advise(
        m, 2 * GRANULE, R.ACL_MEM_ADVISE_SET_PREFERRED_LOCATION,
        mloc(MDEV, 0)) == 0
    assert rt.mem_managed_advise(m, 2 * GRANULE,
                                 R.ACL_MEM_ADVISE_SET_ACCESSED_BY,
                                 mloc(MHOST)) == 0
    data, ret = rt.mem_managed_get_attrs(
        [R.ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION,
         R.ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE,
         R.ACL_MEM_RANGE_ATTRIBUTE_ACCESSED_BY], m, 2 * GRANULE, [4, 4, 12])
    assert ret == 0
    assert data == [[0], [MDEV], [-1, -2, -2]]       # the host, then none
    # prefetches are stream tasks that record where the data went
    assert rt.mem_managed_prefetch_async(m, GRANULE, mloc(MDEV, 0), 0,
                                         stream) == 0
    assert ok(rt.mem_managed_get_attr(
        R.ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, m, GRANULE)) == [0]
    assert rt.mem_managed_prefetch_batch_async(
        [m, m + GRANULE], [GRANULE, GRANULE], [mloc(MHOST), mloc(MDEV, 0)],
        [0, 1], 0, stream) == 0
    assert rt.synchronize_stream(stream) == 0
    last = R.ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION
    assert ok(rt.mem_managed_get_attr(last, m, GRANULE)) == [-1]
    assert ok(rt.mem_managed_get_attr(last, m + GRANULE, GRANULE)) == [0]
    assert rt.free(m) == 0


def test_managed_bad_input(stream):
    R = acl
    assert rt.mem_alloc_managed(100, 0) == (0, INVALID)
    assert rt.mem_alloc_managed(0, R.ACL_RT_MEM_ATTACH_GLOBAL) == (0, INVALID)
    m = ok(rt.mem_alloc_managed(2 * GRANULE, R.ACL_RT_MEM_ATTACH_GLOBAL))
    rm = R.ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY
    # advice needs whole granules; unknown advice: nothing changes
    assert rt.mem_managed_advise(m, 100, R.ACL_MEM_ADVISE_SET_READ_MOSTLY,
                                 mloc(MDEV)) == RT_INVALID
    assert rt.mem_managed_advise(m, GRANULE, 99, mloc(MDEV)) == RT_INVALID
    assert rt.mem_managed_advise(m, GRANULE,
                                 R.ACL_MEM_ADVISE_SET_PREFERRED_LOCATION,
                                 mloc(R.ACL_MEM_LOCATIONTYPE_HOST_NUMA, -1)) \
        == RT_INVALID
    assert ok(rt.mem_managed_get_attr(rm, m, 2 * GRANULE)) == [0]
    assert ok(rt.mem_managed_get_attr(
        R.ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, m, GRANULE)) == [-2]
    # the data size must fit the attribute
    assert rt.mem_managed_get_attr(rm, m, GRANULE, 8)[1] == RT_INVALID
    assert rt.mem_managed_get_attrs([rm], m, GRANULE, [2])[1] == RT_INVALID
    assert rt.mem_managed_get_attrs([], m, GRANULE, []) == ([], INVALID)
    dev = ok(rt.malloc(64, HUGE))
    assert rt.mem_managed_get_attr(rm, dev, 64)[1] == RT_INVALID
    # prefetch: reserved flags, a bad index list; nothing recorded
    last = R.ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION
    assert rt.mem_managed_prefetch_async(m, GRANULE, mloc(MDEV), 1,
                                         stream) == INVALID
    assert rt.mem_managed_prefetch_batch_async(
        [m], [GRANULE], [mloc(MDEV)], [1], 0, stream) == RT_INVALID
    assert rt.mem_managed_prefetch_batch_async(
        [m, dev], [GRANULE, 64], [mloc(MDEV)], [0], 0, stream) == RT_INVALID
    assert rt.synchronize_stream(stream) == 0
    assert ok(rt.mem_managed_get_attr(last, m, GRANULE)) == [-2]
    with pytest.raises(ValueError):
        rt.mem_managed_prefetch_batch_async(
            [m, m + GRANULE], [GRANULE], [mloc(MDEV)], [0], 0, stream)
    with pytest.raises(ValueError):
        rt.mem_managed_get_attrs([rm, rm], m, GRANULE, [4])
    with pytest.raises(TypeError):
        rt.mem_managed_advise(m, GRANULE, 0, (MDEV, 0))
    with pytest.raises(KeyError):
        rt.mem_managed_advise(m, GRANULE, 0, {"type": MDEV})
    with pytest.raises(OverflowError):
        rt.mem_managed_advise(m, GRANULE, 0, mloc(MDEV, 2 ** 31))
    with pytest.raises(TypeError):
        rt.mem_managed_get_attrs(rm, m, GRANULE, [4])
    assert rt.free(dev) == 0 and rt.free(m) == 0


# ------------------------------------------------------------ batch copies

A_H2D = {"dstLoc": DEV0, "srcLoc": HOST}
A_D2H = {"dstLoc": HOST, "srcLoc": DEV0}


def test_batch_copies_move_every_pair(stream):
    datas = [b"first", b"the second", b"3rd!"]
    srcs = [util.bytes_to_ptr(d) for d in datas]
    devs = [ok(rt.malloc(16, HUGE)) for _ in datas]
    sizes = [len(d) for d in datas]
    fail, ret = rt.memcpy_batch(devs, [16] * 3, srcs, sizes, [A_H2D], [0])
    assert (fail, ret) == (NO_FAIL, 0)
    assert [from_dev(p, n) for p, n in zip(devs, sizes)] == datas
    hosts = [ok(rt.malloc_host(16)) for _ in datas]
    assert rt.memcpy_batch_v2(hosts, [16] * 3, devs, sizes, [A_D2H], [0]) == 0
    assert [util.ptr_to_bytes(h, n) for h, n in zip(hosts, sizes)] == datas
    # the asynchronous forms, as tasks of a stream
    new = [b"ASYNC", b"copies too", b"all"]
    for h, d in zip(hosts, new):
        ctypes.memmove(h, d, len(d))
    sizes = [len(d) for d in new]
    assert rt.memcpy_batch_async(devs, [16] * 3, hosts, sizes, [A_H2D], [0],
                                 stream) == (NO_FAIL, 0)
    back = [ok(rt.malloc_host(16)) for _ in datas]
    assert rt.memcpy_batch_async_v2(back, [16] * 3, devs, sizes, [A_D2H], [0],
                                    stream) == 0
    assert rt.synchronize_stream(stream) == 0
    assert [util.ptr_to_bytes(h, n) for h, n in zip(back, sizes)] == new
    for p in devs:
        assert rt.free(p) == 0
    for h in hosts + back:
        assert rt.free_host(h) == 0


def test_batch_copies_bad_input(stream):
    src = [util.bytes_to_ptr(b"abcd"), util.bytes_to_ptr(b"efgh")]
    devs = [to_dev(b"\0" * 8), to_dev(b"\0" * 8)]
    # two directions in one batch: refused, failIndex at the second, nothing
    # copied
    assert rt.memcpy_batch(devs, [8, 8], src, [4, 4], [A_H2D, A_D2H],
                           [0, 1]) == (1, RT_INVALID)
    assert rt.memcpy_batch_async(devs, [8, 8], src, [4, 4], [A_H2D, A_D2H],
                                 [0, 1], stream) == (1, RT_INVALID)
    assert rt.synchronize_stream(stream) == 0
    assert from_dev(devs[0], 8) == b"\0" * 8
    # a size above its destMax, non-zero reserved bytes: 100000
    assert rt.memcpy_batch(devs, [8, 2], src, [4, 4], [A_H2D], [0])[1] == \
        INVALID
    assert rt.memcpy_batch_v2(devs, [8, 8], src, [4, 4],
                              [dict(A_H2D, rsv=[1])], [0]) == INVALID
    # the device side is not device memory: failIndex names the copy
    assert rt.memcpy_batch(src, [8, 8], src, [4, 4], [A_H2D], [0]) == \
        (0, RT_INVALID)
    assert rt.memcpy_batch([], [], [], [], [A_H2D], [0]) == (NO_FAIL, INVALID)
    assert from_dev(devs[0], 8) == b"\0" * 8 and \
        from_dev(devs[1], 8) == b"\0" * 8
    with pytest.raises(ValueError):
        rt.memcpy_batch(devs, [8], src, [4, 4], [A_H2D], [0])
    with pytest.raises(ValueError):
        rt.memcpy_batch_v2(devs, [8, 8], src, [4, 4], [A_H2D], [0, 1])
    with pytest.raises(TypeError):
        rt.memcpy_batch(devs, [8, 8], src, [4, 4], [(0, 1)], [0])
    with pytest.raises(KeyError):
        rt.memcpy_batch(devs, [8, 8], src, [4, 4], [{"dstLoc": DEV0}], [0])
    with pytest.raises(TypeError):
        rt.memcpy_batch(devs, [8, 8], ["x", src[1]], [4, 4], [A_H2D], [0])
    with pytest.raises(TypeError):
        rt.memcpy_batch_async(devs, [8, 8], src, [4, 4], [A_H2D], [0], "s")
    for p in devs:
        assert rt.free(p) == 0


# --------------------------------------------- copy through device addresses

def test_memcpy_async_with_offset(stream):
    src = to_dev(b"0123456789")
    dst = to_dev(b"." * 16)
    # device memory holding the base addresses (read when the task runs)
    dslot = to_dev(struct.pack("P", dst))
    sslot = to_dev(struct.pack("P", src))
    inner = acl.ACL_MEMCPY_INNER_DEVICE_TO_DEVICE
    assert rt.memcpy_async_with_offset(dslot, 16, 2, sslot, 4, 3, inner,
                                       stream) == 0
    assert rt.synchronize_stream(stream) == 0
    assert from_dev(dst, 16) == b"..3456.........."
    # bad input: the kind, count above dest_max, slots in plain host memory
    assert rt.memcpy_async_with_offset(dslot, 16, 0, sslot, 4, 0, H2D,
                                       stream) == RT_INVALID
    assert rt.memcpy_async_with_offset(dslot, 2, 0, sslot, 4, 0, inner,
                                       stream) == RT_INVALID
    plain = util.bytes_to_ptr(struct.pack("P", dst))
    assert rt.memcpy_async_with_offset(plain, 16, 0, sslot, 4, 0, inner,
                                       stream) == RT_INVALID
    assert rt.memcpy_async_with_offset(0, 16, 0, sslot, 4, 0, inner,
                                       stream) == RT_INVALID
    assert rt.synchronize_stream(stream) == 0
    assert from_dev(dst, 16) == b"..3456.........."
    with pytest.raises(TypeError):
        rt.memcpy_async_with_offset("d", 16, 0, sslot, 4, 0, inner, stream)
    with pytest.raises(OverflowError):
        rt.memcpy_async_with_offset(dslot, -1, 0, sslot, 4, 0, inner, stream)
    for p in (src, dst, dslot, sslot):
        assert rt.free(p) == 0


# ---------------------------------------------------------- random numbers

def para(value, size, is_addr=0):
    return {"isAddr": is_addr, "valueOrAddr": value, "size": size}


def uniform_task(result, counter, n, lo, hi, seed, dtype=None,
                 pack="f"):
    return {"dataType": acl.ACL_FLOAT if dtype is None else dtype,
            "randomNumFuncParaInfo": {
                "funcType": acl.ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS,
                "paramInfo": {"uniformDisInfo": {
                    "min": lo if isinstance(lo, dict)
                    else para(struct.pack(pack, lo), 4),
                    "max": hi if isinstance(hi, dict)
                    else para(struct.pack(pack, hi), 4)}}},
            "randomResultAddr": result, "randomCounterAddr": counter,
            "randomSeed": para(seed, 8), "randomNum": para(n, 8)}


def run_random(task, stream):
    assert rt.random_num_async(task, stream, 0) == 0
    assert rt.synchronize_stream(stream) == 0


def test_random_numbers_filled_and_reproducible(stream):
    n = 256
    counter = to_dev(b"\0" * 16)
    out1, out2, out3 = (to_dev(b"\0" * 4 * n) for _ in range(3))
    run_random(uniform_task(out1, counter, n, 2.0, 3.0, 1234), stream)
    a = struct.unpack("%df" % n, from_dev(out1, 4 * n))
    assert all(2.0 <= x < 3.0 for x in a) and len(set(a)) > n // 2
    # the task advanced the counter: the next one continues the sequence
    assert from_dev(counter, 16) != b"\0" * 16
    run_random(uniform_task(out2, counter, n, 2.0, 3.0, 1234), stream)
    assert from_dev(out2, 4 * n) != from_dev(out1, 4 * n)
    # the same seed from the same counter: the same numbers
    assert rt.memcpy(counter, 16, util.bytes_to_ptr(b"\0" * 16), 16,
                     H2D) == 0
    run_random(uniform_task(out3, counter, n, 2.0, 3.0, 1234), stream)
    assert from_dev(out3, 4 * n) == from_dev(out1, 4 * n)
    # a parameter by address (read when the task runs); int32 values
    hi = to_dev(struct.pack("i", 10))
    run_random(uniform_task(out3, counter, n, 5,
                            para(hi, 4, is_addr=1), 99,
                            dtype=acl.ACL_INT32, pack="i"), stream)
    v = struct.unpack("%di" % n, from_dev(out3, 4 * n))
    assert set(v) <= set(range(5, 10)) and len(set(v)) > 1
    # the normal distribution around its mean
    normal = {"dataType": acl.ACL_FLOAT, "randomNumFuncParaInfo": {
        "funcType": acl.ACL_RT_RANDOM_NUM_FUNC_TYPE_NORMAL_DIS,
        "paramInfo": {"normalDisInfo": {
            "mean": para(struct.pack("f", 50.0), 4),
            "stddev": para(struct.pack("f", 1.0), 4)}}},
        "randomResultAddr": out3, "randomCounterAddr": counter,
        "randomSeed": para(7, 8), "randomNum": para(n, 8)}
    run_random(normal, stream)
    v = struct.unpack("%df" % n, from_dev(out3, 4 * n))
    assert 49.0 < sum(v) / n < 51.0 and all(40.0 < x < 60.0 for x in v)
    for p in (counter, out1, out2, out3, hi):
        assert rt.free(p) == 0


def test_random_numbers_bad_input(stream):
    n = 16
    counter = to_dev(b"\0" * 16)
    out = to_dev(b"\0" * 4 * n)
    task = uniform_task(out, counter, n, 0.0, 1.0, 5)
    assert rt.random_num_async(dict(task, dataType=acl.ACL_DOUBLE), stream,
                               0) == INVALID
    assert rt.random_num_async(task, stream, 8) == RT_INVALID   # reserve
    plain = util.bytes_to_ptr(b"\0" * 16)
    assert rt.random_num_async(dict(task, randomCounterAddr=plain), stream,
                               0) == RT_INVALID
    assert rt.random_num_async(dict(task, randomResultAddr=0), stream, 0) == \
        RT_INVALID
    normal_int = dict(task, dataType=acl.ACL_INT32, randomNumFuncParaInfo={
        "funcType": acl.ACL_RT_RANDOM_NUM_FUNC_TYPE_NORMAL_DIS,
        "paramInfo": {"normalDisInfo": {"mean": para(0, 4),
                                        "stddev": para(1, 4)}}})
    assert rt.random_num_async(normal_int, stream, 0) == RT_INVALID
    assert rt.synchronize_stream(stream) == 0
    assert from_dev(out, 4 * n) == b"\0" * 4 * n          # nothing written
    assert from_dev(counter, 16) == b"\0" * 16
    with pytest.raises(TypeError):
        rt.random_num_async([task], stream, 0)
    with pytest.raises(KeyError):
        rt.random_num_async({k: v for k, v in task.items()
                             if k != "randomSeed"}, stream, 0)
    with pytest.raises(KeyError):
        rt.random_num_async(dict(task, randomNumFuncParaInfo={
            "funcType": 1, "paramInfo": {}}), stream, 0)
    with pytest.raises(ValueError):
        rt.random_num_async(dict(task, randomSeed=para(b"123456789", 8)),
                            stream, 0)
    for p in (counter, out):
        assert rt.free(p) == 0


# ------------------------------------------------------ virtual memory (new)

PROP = {"handleType": acl.ACL_MEM_HANDLE_TYPE_NONE,
        "allocationType": acl.ACL_MEM_ALLOCATION_TYPE_PINNED,
        "memAttr": acl.ACL_HBM_MEM_HUGE, "location": DEV0, "reserve": 0}
RW, RD, NONE = (acl.ACL_RT_MEM_ACCESS_FLAGS_READWRITE,
                acl.ACL_RT_MEM_ACCESS_FLAGS_READ,
                acl.ACL_RT_MEM_ACCESS_FLAGS_NONE)


def access(flags, loc=DEV0):
    return {"flags": flags, "location": loc}


def test_access_round_trip_and_properties():
    g = ok(rt.mem_get_allocation_granularity(
        PROP, acl.ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM))
    h = ok(rt.malloc_physical(g, PROP, 0))
    assert ok(rt.mem_get_allocation_properties_from_handle(h)) == PROP
    va = ok(rt.reserve_mem_address(2 * g, 0, 0, 0))
    assert rt.map_mem(va, g, 0, h, 0) == 0
    assert ok(rt.mem_get_access(va, DEV0)) == RW
    assert rt.mem_set_access(va, g, [access(RD)]) == 0
    assert ok(rt.mem_get_access(va, DEV0)) == RD
    assert ok(rt.mem_get_access(va, HOST)) == RD      # one address space
    # mapped without access, then opened: the data of the allocation
    assert rt.mem_map_no_access(va + g, g, 0, h, 0) == 0
    assert ok(rt.mem_get_access(va + g, DEV0)) == NONE
    assert rt.mem_set_access(va + g, g, [access(RD), access(RW, HOST)]) == 0
    assert ok(rt.mem_get_access(va + g, DEV0)) == RW    # the last entry's
    assert rt.memcpy(va + g, 5, util.bytes_to_ptr(b"hello"), 5, H2D) == 0
    assert from_dev(va, 5) == b"hello"
    # bad input: nothing changes
    assert rt.mem_set_access(va, g, [access(7)]) == RT_INVALID
    assert rt.mem_set_access(va, g, []) == RT_INVALID
    managed = {"id": 0, "type": acl.ACL_MEM_LOCATION_TYPE_MANAGED}
    assert rt.mem_set_access(va, g, [access(RW, managed)]) == RT_INVALID
    assert rt.mem_set_access(va, g // 2, [access(RW)]) == RT_INVALID
    assert ok(rt.mem_get_access(va, DEV0)) == RD
    assert rt.mem_get_access(va, managed) == (0, RT_INVALID)
    assert rt.mem_get_access(va + 64, DEV0) == (0, RT_INVALID)
    assert rt.mem_map_no_access(va, g, 0, h, 0) == RT_INVALID   # mapped
    assert rt.mem_get_allocation_properties_from_handle(va)[1] == RT_INVALID
    with pytest.raises(TypeError):
        rt.mem_set_access(va, g, [RW])
    with pytest.raises(KeyError):
        rt.mem_set_access(va, g, [{"flags": RW}])
    with pytest.raises(TypeError):
        rt.mem_get_access(va, 0)
    with pytest.raises(ValueError):
        rt.mem_set_access(va, g, [dict(access(RW), rsv=[0] * 13)])
    assert rt.unmap_mem(va) == 0 and rt.unmap_mem(va + g) == 0
    assert rt.free_physical(h) == 0
    assert rt.release_mem_address(va) == 0


def test_shareable_handles_v2_in_process():
    g = GRANULE
    DEFAULT = acl.ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT
    FABRIC = acl.ACL_MEM_SHARE_HANDLE_TYPE_FABRIC
    pid = ok(rt.device_get_bare_tgid())
    h1 = ok(rt.malloc_physical(g, PROP, 0))
    sh = ok(rt.mem_export_to_shareable_handle_v2(h1, 0, DEFAULT))
    assert isinstance(sh, int) and sh != 0
    assert rt.mem_set_pid_to_shareable_handle_v2(sh, DEFAULT, [pid]) == 0
    # the V2 default handle is the V1 handle: the V1 call takes it
    assert rt.mem_set_pid_to_shareable_handle(sh, [pid]) == 0
    # one shareable handle per allocation; import by the exporter: 107000
    assert rt.mem_export_to_shareable_handle_v2(h1, 0, FABRIC) == \
        (0, RT_INVALID)
    assert rt.mem_import_from_shareable_handle_v2(sh, DEFAULT, 0) == \
        (0, RT_INVALID)
    h2 = ok(rt.malloc_physical(g, PROP, 0))
    fab = ok(rt.mem_export_to_shareable_handle_v2(h2, 0, FABRIC))
    assert isinstance(fab, bytes) and len(fab) == 128 and any(fab)
    assert rt.mem_set_pid_to_shareable_handle_v2(fab, FABRIC, [pid]) == 0
    assert rt.mem_import_from_shareable_handle_v2(fab, FABRIC, 0) == \
        (0, RT_INVALID)
    # bad input
    h3 = ok(rt.malloc_physical(g, PROP, 0))
    assert rt.mem_export_to_shareable_handle_v2(h3, 0, 5) == (0, RT_INVALID)
    assert rt.mem_export_to_shareable_handle_v2(h3, 2, DEFAULT) == \
        (0, RT_INVALID)
    assert rt.mem_export_to_shareable_handle_v2(0, 0, DEFAULT) == \
        (0, INVALID)
    assert rt.mem_import_from_shareable_handle_v2(fab, FABRIC, 1) == \
        (0, RT_INVALID)
    assert rt.mem_import_from_shareable_handle_v2(b"\0" * 128, FABRIC, 0) \
        == (0, RT_INVALID)
    assert rt.mem_set_pid_to_shareable_handle_v2(sh, DEFAULT, []) == INVALID
    assert rt.mem_set_pid_to_shareable_handle_v2(sh, 5, [pid]) == RT_INVALID
    assert rt.mem_set_pid_to_shareable_handle_v2(sh + 1, DEFAULT, [pid]) == \
        RT_INVALID
    # h3 was not exported by the refused calls: it exports now
    assert ok(rt.mem_export_to_shareable_handle_v2(h3, 0, DEFAULT)) != 0
    with pytest.raises(TypeError):
        rt.mem_import_from_shareable_handle_v2("sh", DEFAULT, 0)
    with pytest.raises(ValueError):
        rt.mem_import_from_shareable_handle_v2(b"\0" * 129, FABRIC, 0)
    with pytest.raises(TypeError):
        rt.mem_set_pid_to_shareable_handle_v2(sh, DEFAULT, (pid,))
    with pytest.raises(OverflowError):
        rt.mem_set_pid_to_shareable_handle_v2(sh, DEFAULT, [2 ** 31])
    for h in (h1, h2, h3):
        assert rt.free_physical(h) == 0


def test_shareable_handles_v2_between_processes():
    """Another process imports both kinds of V2 handle and reads the data;
    a handle exported with pid validation, whitelist empty, is refused
    there (207006)."""
    g = GRANULE
    DEFAULT = acl.ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT
    FABRIC = acl.ACL_MEM_SHARE_HANDLE_TYPE_FABRIC
    no_check = acl.ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION
    hs, vas = [], []
    for text in (b"via the default handle", b"via the fabric handle"):
        h = ok(rt.malloc_physical(g, PROP, 0))
        va = ok(rt.reserve_mem_address(g, 0, 0, 0))
        assert rt.map_mem(va, g, 0, h, 0) == 0
        assert rt.memcpy(va, len(text), util.bytes_to_ptr(text), len(text),
                         H2D) == 0
        hs.append(h)
        vas.append(va)
    sh = ok(rt.mem_export_to_shareable_handle_v2(hs[0], no_check, DEFAULT))
    fab = ok(rt.mem_export_to_shareable_handle_v2(hs[1], no_check, FABRIC))
    locked = ok(rt.malloc_physical(g, PROP, 0))
    shl = ok(rt.mem_export_to_shareable_handle_v2(locked, 0, DEFAULT))
    code = textwrap.dedent("""
        from evrt import acl
        rt, util = acl.rt, acl.util
        assert acl.init() == 0 and rt.set_device(0) == 0
        def read(sh, kind, n):
            h, ret = rt.mem_import_from_shareable_handle_v2(sh, kind, 0)
            assert ret == 0, ret
            va, ret = rt.reserve_mem_address(%(g)d, 0, 0, 0)
            assert ret == 0 and rt.map_mem(va, %(g)d, 0, h, 0) == 0
            host, ret = rt.malloc_host(n)
            assert rt.memcpy(host, n, va, n,
                             acl.ACL_MEMCPY_DEVICE_TO_HOST) == 0
            return util.ptr_to_bytes(host, n).decode()
        print(read(%(sh)d, %(DEFAULT)d, 22))
        print(read(%(fab)r, %(FABRIC)d, 21))
        print(rt.mem_import_from_shareable_handle_v2(%(shl)d, %(DEFAULT)d,
                                                     0)[1])
        """) % dict(g=g, sh=sh, fab=fab, shl=shl, DEFAULT=DEFAULT,
                    FABRIC=FABRIC)
    r = run_python(code)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[:3] == [
        "via the default handle", "via the fabric handle",
        str(acl.ACL_ERROR_RT_NO_PERMISSION)]
    for va in vas:
        assert rt.unmap_mem(va) == 0 and rt.release_mem_address(va) == 0
    for h in hs + [locked]:
        assert rt.free_physical(h) == 0


def test_host_mem_map_capabilities():
    for hac in (acl.ACL_RT_HAC_TYPE_STARS, acl.ACL_RT_HAC_TYPE_AIC,
                acl.ACL_RT_HAC_TYPE_CCU):
        assert rt.host_mem_map_capabilities(0, hac) == \
            (acl.ACL_RT_HOST_MEM_MAP_SUPPORTED, 0)
    assert rt.host_mem_map_capabilities(0, 99) == \
        (acl.ACL_RT_HOST_MEM_MAP_NOT_SUPPORTED, RT_INVALID)
    assert rt.host_mem_map_capabilities(99, acl.ACL_RT_HAC_TYPE_AIC) == \
        (acl.ACL_RT_HOST_MEM_MAP_NOT_SUPPORTED,
         acl.ACL_ERROR_RT_INVALID_DEVICEID)
    with pytest.raises(TypeError):
        rt.host_mem_map_capabilities("0", 0)
