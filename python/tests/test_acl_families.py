"""evrt.acl: the pyACL calls of the acl_base.h, system / device, stream
query, memory, built-in task and switch families (issue 16), with pyACL's
names, argument orders and (outputs..., ret) tuples."""
import ctypes
import mmap
import struct
import threading
import time

import pytest

import evrt

acl = pytest.importorskip(
    "evrt.acl", reason="evrt built without the ACL layer (src/acl)")
rt = acl.rt
util = acl.util


from conftest import acl_ok as ok  # noqa: E402  (conftest's acl_device too)

pytestmark = pytest.mark.usefixtures("acl_device")


def device_count():
    return ok(rt.get_device_count())


def to_dev(data):
    """Device memory holding `data` (bytes)."""
    p = ok(rt.malloc(len(data), acl.ACL_MEM_MALLOC_HUGE_FIRST))
    assert rt.memcpy(p, len(data), util.bytes_to_ptr(data), len(data),
                     acl.ACL_MEMCPY_HOST_TO_DEVICE) == 0
    return p


def from_dev(p, n):
    h = ok(rt.malloc_host(n))
    assert rt.memcpy(h, n, p, n, acl.ACL_MEMCPY_DEVICE_TO_HOST) == 0
    out = util.ptr_to_bytes(h, n)
    rt.free_host(h)
    return out


# ------------------------------------------------------------ acl_base.h

def test_float16_conversions():
    assert acl.float_to_float16(1.0) == 0x3C00
    assert acl.float_to_float16(-2.0) == 0xC000
    assert acl.float_to_float16(65504.0) == 0x7BFF
    assert acl.float16_to_float(0x3C00) == 1.0
    assert acl.float16_to_float(0x3555) == pytest.approx(1 / 3, rel=1e-3)
    with pytest.raises(TypeError):
        acl.float_to_float16("1.0")


def test_data_type_size():
    assert acl.data_type_size(acl.ACL_FLOAT) == 4
    assert acl.data_type_size(acl.ACL_FLOAT16) == 2
    assert acl.data_type_size(acl.ACL_BF16) == 2
    assert acl.data_type_size(acl.ACL_INT64) == 8
    assert acl.data_type_size(acl.ACL_BOOL) == 1
    assert acl.data_type_size(1000) == 8  # CANN's default


def test_data_buffer_lifecycle():
    p = ok(rt.malloc(64, acl.ACL_MEM_MALLOC_HUGE_FIRST))
    buf = acl.create_data_buffer(p, 64)
    assert buf != 0
    assert acl.get_data_buffer_addr(buf) == p
    assert acl.get_data_buffer_size_v2(buf) == 64
    assert acl.get_data_buffer_size(buf) == 64
    assert acl.update_data_buffer(buf, p, 32) == 0
    assert acl.get_data_buffer_size_v2(buf) == 32
    assert acl.destroy_data_buffer(buf) == 0
    # a destroyed descriptor is refused, not read
    assert acl.destroy_data_buffer(buf) == acl.ACL_ERROR_INVALID_PARAM
    assert acl.get_data_buffer_addr(buf) == 0
    assert acl.get_data_buffer_size_v2(buf) == 0
    assert acl.update_data_buffer(0, p, 8) == acl.ACL_ERROR_INVALID_PARAM
    assert acl.destroy_data_buffer(0) == acl.ACL_ERROR_INVALID_PARAM
    assert rt.free(p) == 0
    with pytest.raises(OverflowError):
        acl.create_data_buffer(0, -1)


def test_app_log_returns_none():
    assert acl.app_log(acl.ACL_DEBUG, "evrt pyACL test") is None


# -------------------------------------------------- system and versions

def test_versions():
    assert acl.get_version() == (1, 17, 0, 0)
    assert acl.get_version_str("runtime") == ("9.1.0", 0)
    assert acl.get_version_num("runtime") == (90100000, 0)
    s, ret = acl.get_version_str("toolkit")
    assert ret == acl.ACL_ERROR_INVALID_FILE and s == ""
    v = ok(acl.get_cann_version(acl.ACL_PKG_NAME_CANN))
    assert v["version"] == "9.1.0"
    assert (v["major_version"], v["minor_version"], v["release_version"],
            v["patch_version"]) == ("9", "1", "0", "0")
    _, ret = acl.get_cann_version(acl.ACL_PKG_NAME_DRIVER)
    assert ret == acl.ACL_ERROR_INVALID_FILE
    _, ret = acl.get_cann_version(99)
    assert ret == acl.ACL_ERROR_INVALID_PARAM


def test_soc_and_cann_attributes():
    assert acl.get_soc_name() == "Ascend910B3"
    attrs, num, ret = acl.get_cann_attribute_list()
    assert ret == 0 and num == len(attrs) == 3
    assert acl.ACL_CANN_ATTR_BF16 in attrs
    assert ok(acl.get_cann_attribute(acl.ACL_CANN_ATTR_INF_NAN)) == 1
    _, ret = acl.get_cann_attribute(77)
    assert ret == acl.ACL_ERROR_INVALID_PARAM
    assert ok(acl.get_device_capability(
        0, acl.ACL_DEVICE_INFO_AI_CORE_NUM)) == 20
    assert ok(acl.get_device_capability(
        0, acl.ACL_DEVICE_INFO_L2_SIZE)) == 192 * 1024 * 1024
    _, ret = acl.get_device_capability(99, acl.ACL_DEVICE_INFO_AI_CORE_NUM)
    assert ret != 0


# ---------------------------------------------------------------- device

def test_device_queries():
    u = ok(rt.get_device_utilization_rate(0))
    assert set(u) == {"cube_utilization", "vector_utilization",
                      "aicpu_utilization", "memory_utilization",
                      "utilization_extend"}
    assert u["memory_utilization"] == -1  # CANN: reserved
    assert ok(rt.query_device_status(0)) == acl.ACL_RT_DEVICE_STATUS_NORMAL
    _, ret = rt.query_device_status(-1)
    assert ret == acl.ACL_ERROR_RT_INVALID_DEVICEID
    assert ok(rt.device_get_stream_priority_range()) == (7, 0)
    assert rt.get_device_info(0, 9999)[1] == acl.ACL_ERROR_RT_PARAM_INVALID
    uuid = ok(rt.device_get_uuid(0))
    assert len(uuid["bytes"]) == 16 and all(0 <= b < 256
                                            for b in uuid["bytes"])
    assert ok(rt.get_logic_dev_id_by_user_dev_id(0)) == 0
    assert ok(rt.get_phy_dev_id_by_logic_dev_id(0)) == 0
    _, ret = rt.get_user_dev_id_by_logic_dev_id(64)
    assert ret == acl.ACL_ERROR_RT_INVALID_DEVICEID
    assert ok(rt.get_devices_topo(0, 0)) == acl.ACL_RT_DEVS_TOPOLOGY_HCCS
    free, total = ok(rt.get_mem_info(acl.ACL_HBM_MEM))
    assert 0 < free <= total
    assert rt.get_mem_info(99)[-1] == acl.ACL_ERROR_RT_PARAM_INVALID
    assert ok(rt.get_device_capability(
        0, acl.ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV)) in (
        acl.ACL_DEV_FEATURE_SUPPORT, acl.ACL_DEV_FEATURE_NOT_SUPPORT)
    _, ret = rt.get_device_capability(0, 0)
    assert ret == acl.ACL_ERROR_RT_PARAM_INVALID



def test_primary_ctx_state():
    assert ok(rt.get_primary_ctx_state(0)) == 1     # set by the fixture
    last = device_count() - 1
    if last > 0:
        assert ok(rt.get_primary_ctx_state(last)) == 0
        assert rt.set_device(last) == 0
        assert ok(rt.get_primary_ctx_state(last)) == 1
        assert rt.set_device(0) == 0
        assert rt.reset_device(last) == 0
        assert ok(rt.get_primary_ctx_state(last)) == 0
    assert rt.get_primary_ctx_state(-1) == (
        0, acl.ACL_ERROR_RT_INVALID_DEVICEID)
    assert rt.get_primary_ctx_state(device_count()) == (
        0, acl.ACL_ERROR_RT_INVALID_DEVICEID)
    with pytest.raises(TypeError):
        rt.get_primary_ctx_state("0")



def test_current_default_stream():
    s = ok(rt.ctx_get_current_default_stream())
    assert s != 0
    assert rt.synchronize_stream(s) == 0
    ev = ok(rt.create_event())
    assert rt.record_event(ev, s) == 0 and rt.synchronize_event(ev) == 0
    assert rt.destroy_event(ev) == 0
    other = []
    t = threading.Thread(
        target=lambda: other.append(rt.ctx_get_current_default_stream()))
    t.start()
    t.join()
    assert other == [(0, acl.ACL_ERROR_RT_CONTEXT_NULL)]  # no device set


def test_pci_bus_ids_and_arch_compatibility():
    for dev in range(device_count()):
        bus = ok(rt.device_get_pci_bus_id(dev))
        assert len(bus) == 12 and bus.startswith("0000:") \
            and bus.endswith(":00.0"), bus
        assert ok(rt.device_get_by_pci_bus_id(bus)) == dev
        assert ok(rt.get_user_dev_id_by_phy_dev_id(dev)) == dev
        assert ok(rt.get_phy_dev_id_by_user_dev_id(dev)) == dev
    assert rt.device_get_pci_bus_id(device_count()) == (
        "", acl.ACL_ERROR_RT_INVALID_DEVICEID)
    assert rt.get_phy_dev_id_by_user_dev_id(64)[1] == \
        acl.ACL_ERROR_RT_INVALID_DEVICEID
    assert rt.device_get_by_pci_bus_id("zz")[1] == \
        acl.ACL_ERROR_RT_PARAM_INVALID
    with pytest.raises(TypeError):
        rt.device_get_by_pci_bus_id(1)
    assert ok(rt.check_arch_compatibility(acl.get_soc_name())) == 1
    assert rt.check_arch_compatibility("NoSuchSoc")[1] == \
        acl.ACL_ERROR_RT_PARAM_INVALID


def test_device_limits():
    simd = acl.ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE
    before = ok(rt.device_get_limit(simd))
    try:
        assert rt.device_set_limit(simd, before + 1) == 0
        after = ok(rt.device_get_limit(simd))
        assert after > before                      # rounded up, not lost
    finally:
        assert rt.device_set_limit(simd, before) == 0
    assert ok(rt.device_get_limit(simd)) == before
    assert rt.device_set_limit(acl.ACL_RT_DEV_LIMIT_SIMT_STACK_SIZE, 1024) \
        == acl.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    assert ok(rt.device_get_limit(simd)) == before
    assert rt.device_get_limit(99)[1] == acl.ACL_ERROR_INVALID_PARAM
    with pytest.raises(OverflowError):
        rt.device_set_limit(simd, -1)


def test_host_atomic_capabilities():
    ops = [acl.ACL_RT_ATOMIC_OPERATION_INTEGER_ADD,
           acl.ACL_RT_ATOMIC_OPERATION_CAS,
           acl.ACL_RT_ATOMIC_OPERATION_FLOAT_MAX,
           acl.ACL_RT_ATOMIC_OPERATION_SIMD_SCALAR_EXCH]
    # the Ascend910B3 the device poses as has no host atomics (docs/acl.md)
    assert ok(rt.device_get_host_atomic_capabilities(ops, 0)) == [0] * 4
    assert ok(rt.device_get_host_atomic_capabilities(tuple(ops[:1]), 0)) \
        == [0]
    assert acl.ACL_RT_ATOMIC_CAPABILITY_REDUCTION == 1 << 2
    assert acl.ACL_RT_ATOMIC_OPERATION_SIMD_SCALAR_EXCH == 44
    param = acl.ACL_ERROR_RT_PARAM_INVALID
    assert rt.device_get_host_atomic_capabilities([], 0) == ([], param)
    assert rt.device_get_host_atomic_capabilities(
        [acl.ACL_RT_ATOMIC_OPERATION_SIMD_SCALAR_EXCH + 1], 0) == ([0], param)
    assert rt.device_get_host_atomic_capabilities(ops, -1) == (
        [0] * 4, acl.ACL_ERROR_RT_INVALID_DEVICEID)
    with pytest.raises(TypeError):
        rt.device_get_host_atomic_capabilities(0, 0)
    with pytest.raises(TypeError):
        rt.device_get_host_atomic_capabilities(["add"], 0)
    with pytest.raises(OverflowError):
        rt.device_get_host_atomic_capabilities([-1], 0)
    with pytest.raises(OverflowError):
        rt.device_get_host_atomic_capabilities([1 << 32], 0)


def test_device_res_limits():
    cube = acl.ACL_RT_DEV_RES_CUBE_CORE
    assert ok(rt.get_device_res_limit(0, cube)) == 20
    assert rt.set_device_res_limit(0, cube, 4) == 0
    assert ok(rt.get_device_res_limit(0, cube)) == 4
    assert ok(rt.get_res_in_current_thread(cube)) == 4
    s = ok(rt.create_stream())
    assert rt.set_stream_res_limit(s, cube, 2) == 0
    assert ok(rt.get_stream_res_limit(s, cube)) == 2
    assert rt.use_stream_res_in_current_thread(s) == 0
    assert ok(rt.get_res_in_current_thread(cube)) == 2
    assert rt.unuse_stream_res_in_current_thread(s) == 0
    assert rt.reset_stream_res_limit(s) == 0
    assert rt.destroy_stream(s) == 0
    assert rt.reset_device_res_limit(0) == 0
    assert ok(rt.get_device_res_limit(0, cube)) == 20
    assert rt.reset_device_res_limit(-1) == acl.ACL_ERROR_RT_INVALID_DEVICEID
    _, ret = rt.get_device_res_limit(9, cube)
    assert ret == acl.ACL_ERROR_RT_INVALID_DEVICEID


def test_peer_access():
    if device_count() < 2:
        # only one virtual device: the peer id is out of range
        _, ret = rt.device_can_access_peer(0, 1)
        assert ret != 0
        assert rt.device_enable_peer_access(1, 0) != 0
        return
    assert ok(rt.device_can_access_peer(0, 1)) == 1
    assert ok(rt.device_peer_access_status(0, 1)) == 0
    assert rt.device_enable_peer_access(1, 0) == 0
    assert ok(rt.device_peer_access_status(0, 1)) == 1
    assert rt.device_disable_peer_access(1) == 0
    assert rt.device_enable_peer_access(1, 5) != 0  # flags must be 0


# ----------------------------------------- switches and runtime parameters

def test_sat_mode_and_overflow_switch():
    assert ok(rt.get_device_sat_mode()) == acl.ACL_RT_OVERFLOW_MODE_INFNAN
    assert rt.set_device_sat_mode(acl.ACL_RT_OVERFLOW_MODE_SATURATION) == 0
    assert ok(rt.get_device_sat_mode()) == \
        acl.ACL_RT_OVERFLOW_MODE_SATURATION
    assert rt.set_device_sat_mode(7) == acl.ACL_ERROR_RT_PARAM_INVALID
    assert rt.set_device_sat_mode(acl.ACL_RT_OVERFLOW_MODE_INFNAN) == 0
    s = ok(rt.create_stream())
    assert ok(rt.get_stream_overflow_switch(s)) == 0
    assert rt.set_stream_overflow_switch(s, 1) == 0
    assert ok(rt.get_stream_overflow_switch(s)) == 1
    out = ok(rt.malloc(64, acl.ACL_MEM_MALLOC_HUGE_FIRST))
    assert rt.get_overflow_status(out, 64, s) == 0
    assert rt.reset_overflow_status(s) == 0
    assert rt.synchronize_stream(s) == 0
    assert rt.get_overflow_status(out, 8, s) != 0  # 64 bytes, as CANN says
    rt.free(out)
    assert rt.destroy_stream(s) == 0


def test_system_parameters():
    opt = acl.ACL_OPT_DETERMINISTIC
    assert rt.set_sys_param_opt(opt, 1) == 0
    assert ok(rt.get_sys_param_opt(opt)) == 1
    assert rt.set_sys_param_opt(opt, 0) == 0
    v, ret = rt.ctx_get_sys_param_opt(opt)
    assert ret == acl.ACL_ERROR_RT_SYSPARAMOPT_NOT_SET
    assert rt.ctx_set_sys_param_opt(opt, 3) == 0
    assert ok(rt.ctx_get_sys_param_opt(opt)) == 3
    assert rt.set_sys_param_opt(4, 1) == acl.ACL_ERROR_INVALID_PARAM


# ---------------------------------------------------------------- memory

def test_malloc_variants_and_attributes():
    p = ok(rt.malloc_cached(100, acl.ACL_MEM_MALLOC_HUGE_FIRST))
    assert rt.mem_flush(p, 100) == 0 and rt.mem_invalidate(p, 100) == 0
    a = ok(rt.pointer_get_attributes(p))
    assert a["location"]["type"] == acl.ACL_MEM_LOCATION_TYPE_DEVICE
    assert a["location"]["id"] == 0 and len(a["rsv"]) == 4
    assert rt.free(p) == 0
    p = ok(rt.malloc_align32(33, acl.ACL_MEM_MALLOC_HUGE_FIRST))
    assert p % 32 == 0 and rt.free(p) == 0
    _, ret = rt.malloc_cached(0, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    assert ret == acl.ACL_ERROR_INVALID_PARAM
    p = ok(rt.malloc_with_cfg(64, acl.ACL_MEM_MALLOC_HUGE_FIRST, {}))
    assert rt.free(p) == 0
    cfg = {"numAttrs": 1, "attrs": [
        {"attr": acl.ACL_RT_MEM_ATTR_DEVICE_ID, "value": {"deviceId": 0}}]}
    p = ok(rt.malloc_with_cfg(64, acl.ACL_MEM_MALLOC_HUGE_FIRST, cfg))
    assert rt.free(p) == 0
    p = ok(rt.malloc_for_task_scheduler(64, acl.ACL_MEM_MALLOC_HUGE_FIRST,
                                        {}))
    assert rt.free(p) == 0
    h = ok(rt.malloc_host_with_cfg(64, {}))
    a = ok(rt.pointer_get_attributes(h))
    assert a["location"]["type"] == acl.ACL_MEM_LOCATION_TYPE_HOST
    assert rt.free_host(h) == 0
    with pytest.raises(KeyError):
        rt.malloc_with_cfg(64, 0, {"numAttrs": 2, "attrs": []})
    with pytest.raises(TypeError):
        rt.malloc_with_cfg(64, 0, [])


def test_memcpy2d_sync_and_async():
    rows = bytes(range(24))           # 3 rows of 8, 5 used
    dev = ok(rt.malloc(24, acl.ACL_MEM_MALLOC_HUGE_FIRST))
    assert rt.memset(dev, 24, 0xEE, 24) == 0
    assert rt.memcpy2d(dev, 8, util.bytes_to_ptr(rows), 8, 5, 3,
                       acl.ACL_MEMCPY_HOST_TO_DEVICE) == 0
    got = from_dev(dev, 24)
    for r in range(3):
        assert got[8 * r:8 * r + 5] == rows[8 * r:8 * r + 5]
        assert got[8 * r + 5:8 * r + 8] == b"\xee" * 3
    # async back to pinned host memory with a tighter pitch
    h = ok(rt.malloc_host(15))
    s = ok(rt.create_stream())
    assert rt.memcpy2d_async(h, 5, dev, 8, 5, 3,
                             acl.ACL_MEMCPY_DEVICE_TO_HOST, s) == 0
    assert rt.synchronize_stream(s) == 0
    assert util.ptr_to_bytes(h, 15) == b"".join(
        rows[8 * r:8 * r + 5] for r in range(3))
    # bad input: width over the pitch, host-to-host
    assert rt.memcpy2d(dev, 4, h, 8, 5, 2,
                       acl.ACL_MEMCPY_HOST_TO_DEVICE) == \
        acl.ACL_ERROR_INVALID_PARAM
    assert rt.memcpy2d(dev, 8, h, 8, 4, 2, acl.ACL_MEMCPY_HOST_TO_HOST) == \
        acl.ACL_ERROR_INVALID_PARAM
    with pytest.raises(OverflowError):
        rt.memcpy2d(dev, -8, h, 8, 4, 2, acl.ACL_MEMCPY_HOST_TO_DEVICE)
    assert rt.destroy_stream(s) == 0
    rt.free_host(h)
    rt.free(dev)



def test_memset_d32():
    dev = ok(rt.malloc(16, acl.ACL_MEM_MALLOC_HUGE_FIRST))
    assert rt.memset_d32(dev, 16, 0x01020304, 4) == 0
    assert from_dev(dev, 16) == struct.pack("<I", 0x01020304) * 4
    s = ok(rt.create_stream())
    assert rt.memset_d32_async(dev, 16, 0xAABBCCDD, 2, s) == 0
    assert rt.synchronize_stream(s) == 0
    assert from_dev(dev, 16) == struct.pack("<4I", 0xAABBCCDD, 0xAABBCCDD,
                                            0x01020304, 0x01020304)
    before = from_dev(dev, 16)
    param = acl.ACL_ERROR_INVALID_PARAM
    assert rt.memset_d32(dev + 1, 15, 1, 2) == param     # not 4-aligned
    assert rt.memset_d32(dev, 16, 1, 5) == param         # past mem_size
    buf = ctypes.create_string_buffer(16)                # not ACL memory
    assert rt.memset_d32(ctypes.addressof(buf), 16, 1, 4) == param
    assert buf.raw == b"\0" * 16
    assert rt.memset_d32_async(dev, 16, 1, 5, s) == param
    assert rt.synchronize_stream(s) == 0
    assert from_dev(dev, 16) == before
    with pytest.raises(OverflowError):
        rt.memset_d32(dev, -1, 1, 1)
    assert rt.destroy_stream(s) == 0 and rt.free(dev) == 0


def test_memcpy_descriptor():
    kind = acl.ACL_MEMCPY_INNER_DEVICE_TO_DEVICE
    n = ok(rt.get_memcpy_desc_size(kind))
    assert n > 0
    desc = ok(rt.malloc(n, acl.ACL_MEM_MALLOC_HUGE_FIRST))
    src = to_dev(b"descriptor copy!")
    dst = ok(rt.malloc(16, acl.ACL_MEM_MALLOC_HUGE_FIRST))
    assert ok(rt.set_memcpy_desc(desc, kind, src, dst, 16, 0)) == desc
    s = ok(rt.create_stream())
    assert rt.memcpy_async_with_desc(desc, kind, s) == 0
    assert rt.synchronize_stream(s) == 0
    assert from_dev(dst, 16) == b"descriptor copy!"
    _, ret = rt.set_memcpy_desc(0, kind, src, dst, 16, 0)
    assert ret == acl.ACL_ERROR_INVALID_PARAM
    assert rt.destroy_stream(s) == 0
    for p in (desc, src, dst):
        rt.free(p)


def test_host_register():
    mm = mmap.mmap(-1, 2 * mmap.PAGESIZE)
    addr = ctypes.addressof(ctypes.c_char.from_buffer(mm))
    dev = ok(rt.host_register(addr, 2 * mmap.PAGESIZE,
                              acl.ACL_HOST_REGISTER_MAPPED))
    assert dev != 0
    assert ok(rt.host_get_device_pointer(addr, 0)) == dev
    _, ret = rt.host_register(addr, 64, acl.ACL_HOST_REGISTER_MAPPED)
    assert ret == acl.ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED
    assert rt.host_unregister(addr) == 0
    assert rt.host_unregister(addr) == \
        acl.ACL_ERROR_HOST_MEMORY_NOT_REGISTERED
    assert rt.host_register_v2(addr, mmap.PAGESIZE,
                               acl.ACL_HOST_REG_MAPPED) == 0
    assert rt.host_unregister(addr) == 0
    assert rt.host_register_v2(addr, mmap.PAGESIZE, 0) == \
        acl.ACL_ERROR_RT_PARAM_INVALID
    del addr
    mm.close()


def test_virtual_memory():
    prop = {"handleType": acl.ACL_MEM_HANDLE_TYPE_NONE,
            "allocationType": acl.ACL_MEM_ALLOCATION_TYPE_PINNED,
            "memAttr": acl.ACL_HBM_MEM_HUGE,
            "location": {"id": 0, "type": acl.ACL_MEM_LOCATION_TYPE_DEVICE},
            "reserve": 0}
    g = ok(rt.mem_get_allocation_granularity(
        prop, acl.ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM))
    assert g == 2 * 1024 * 1024
    va = ok(rt.reserve_mem_address(2 * g, 0, 0, 0))
    h = ok(rt.malloc_physical(g, prop, 0))
    assert rt.map_mem(va, g, 0, h, 0) == 0
    assert rt.map_mem(va + g, g, 0, h, 0) == 0   # one allocation, twice
    assert rt.memcpy(va, 5, util.bytes_to_ptr(b"hello"), 5,
                     acl.ACL_MEMCPY_HOST_TO_DEVICE) == 0
    assert from_dev(va + g, 5) == b"hello"
    sh = ok(rt.mem_export_to_shareable_handle(
        h, acl.ACL_MEM_HANDLE_TYPE_NONE, 0))
    assert sh != 0
    pid = ok(rt.device_get_bare_tgid())
    assert rt.mem_set_pid_to_shareable_handle(sh, [pid]) == 0
    # importing in the exporting process is refused, as CANN documents
    _, ret = rt.mem_import_from_shareable_handle(sh, 0)
    assert ret != 0
    assert rt.unmap_mem(va) == 0 and rt.unmap_mem(va + g) == 0
    assert rt.free_physical(h) == 0
    assert rt.release_mem_address(va) == 0
    assert rt.release_mem_address(va) != 0
    with pytest.raises(KeyError):
        rt.malloc_physical(g, {"handleType": 0}, 0)
    # the no-UC reservation, and the handle of what is mapped at an address
    va = ok(rt.reserve_mem_address_no_uc_memory(g, 0, 0, 0))
    h = ok(rt.malloc_physical(g, prop, 0))
    assert rt.map_mem(va, g, 0, h, 0) == 0
    assert ok(rt.mem_retain_allocation_handle(va)) == h
    assert rt.mem_retain_allocation_handle(va + 64) == (
        0, acl.ACL_ERROR_RT_PARAM_INVALID)
    assert rt.unmap_mem(va) == 0
    assert rt.mem_retain_allocation_handle(va)[1] != 0  # nothing mapped
    assert rt.free_physical(h) == 0      # the retain's reference
    assert rt.free_physical(h) == 0      # malloc_physical's
    assert rt.free_physical(h) != 0
    assert rt.release_mem_address(va) == 0
    assert rt.reserve_mem_address_no_uc_memory(0, 0, 0, 0)[1] != 0
    with pytest.raises(TypeError):
        rt.mem_set_pid_to_shareable_handle(sh, (pid,))



def test_check_mem_type():
    dev = ok(rt.malloc(64, acl.ACL_MEM_MALLOC_HUGE_FIRST))
    dev2 = ok(rt.malloc(64, acl.ACL_MEM_MALLOC_HUGE_FIRST))
    host = ok(rt.malloc_host(64))
    va = ok(rt.reserve_mem_address(2 * 1024 * 1024, 0, 0, 0))
    DEV, RSVD = acl.ACL_RT_MEM_TYPE_DEV, acl.ACL_RT_MEM_TYPE_RSVD
    assert ok(rt.check_mem_type([dev, dev2 + 8], DEV)) == 1
    assert ok(rt.check_mem_type((dev,), DEV, 0)) == 1
    assert ok(rt.check_mem_type([dev, host], DEV)) == 0
    assert ok(rt.check_mem_type([va], DEV)) == 0
    assert ok(rt.check_mem_type([va], RSVD)) == 1
    assert ok(rt.check_mem_type([dev, va], DEV | RSVD)) == 1
    assert ok(rt.check_mem_type([dev], acl.ACL_RT_MEM_TYPE_DVPP)) == 0
    param = acl.ACL_ERROR_RT_PARAM_INVALID
    assert rt.check_mem_type([], DEV) == (0, param)
    assert rt.check_mem_type([dev], 0x1) == (0, param)
    assert rt.check_mem_type([dev], DEV, 1) == (0, param)
    with pytest.raises(TypeError):
        rt.check_mem_type(dev, DEV)
    with pytest.raises(TypeError):
        rt.check_mem_type(["x"], DEV)
    assert rt.release_mem_address(va) == 0
    assert rt.free_host(host) == 0
    assert rt.free(dev) == 0 and rt.free(dev2) == 0
    assert ok(rt.check_mem_type([dev], DEV)) == 0   # freed



def test_stream_priority_flags_and_wait_with_flag():
    s = ok(rt.create_stream_with_config(3, acl.ACL_STREAM_FAST_LAUNCH))
    assert ok(rt.stream_get_priority(s)) == 3
    assert ok(rt.stream_get_flags(s)) == acl.ACL_STREAM_FAST_LAUNCH
    assert rt.stream_get_priority(0) == (0, 0)
    assert rt.stream_get_flags(0) == (0, 0)
    s2 = ok(rt.create_stream())
    ev = ok(rt.create_event())
    order = []
    rt.launch_host_func(s, lambda _: (time.sleep(0.05), order.append(1)),
                        None)
    assert rt.record_event(ev, s) == 0
    assert rt.stream_wait_event_with_flag(
        s2, ev, 0, acl.ACL_EVENT_WAIT_DEFAULT) == 0
    rt.launch_host_func(s2, order.append, 2)
    assert rt.synchronize_stream(s2) == 0
    assert order == [1, 2]
    assert rt.stream_wait_event_with_flag(s2, ev, 0, 0x8) == \
        acl.ACL_ERROR_INVALID_PARAM
    assert rt.destroy_event(ev) == 0
    for h in (s, s2):
        assert rt.destroy_stream(h) == 0
    assert rt.stream_get_priority(s)[1] == acl.ACL_ERROR_RT_INVALID_HANDLE
    assert rt.stream_get_flags(s)[1] == acl.ACL_ERROR_RT_INVALID_HANDLE


def test_free_with_dev_sync_waits_for_the_device():
    s = ok(rt.create_stream())
    dev = ok(rt.malloc(64, acl.ACL_MEM_MALLOC_HUGE_FIRST))
    host = ok(rt.malloc_host(64))
    done = []
    # a Python host function still queued: the free must wait for it (and
    # so release the GIL it needs)
    rt.launch_host_func(s, lambda _: (time.sleep(0.05), done.append(1)), None)
    assert rt.free_with_dev_sync(dev) == 0
    assert done == [1]
    rt.launch_host_func(s, lambda _: (time.sleep(0.05), done.append(2)), None)
    assert rt.free_host_with_dev_sync(host) == 0
    assert done == [1, 2]
    # freed already: refused, as aclrtFree refuses it
    assert rt.free_with_dev_sync(dev) == acl.ACL_ERROR_RT_PARAM_INVALID
    assert rt.free_host_with_dev_sync(host) == acl.ACL_ERROR_RT_PARAM_INVALID
    with pytest.raises(TypeError):
        rt.free_with_dev_sync("p")
    assert rt.destroy_stream(s) == 0


def test_mem_get_address_range():
    size = 2 * 1024 * 1024
    va = ok(rt.reserve_mem_address(2 * size, 0, 0, 0))
    assert ok(rt.mem_get_address_range(va + 5)) == (va, 2 * size)
    assert ok(rt.mem_get_address_range(va + size)) == (va, 2 * size)
    assert rt.release_mem_address(va) == 0
    base, n, ret = rt.mem_get_address_range(va + 5)
    assert ret != 0 and (base, n) == (0, 0)


# -------------------------------------------------------- built-in tasks

def test_reduce_async():
    a = to_dev(struct.pack("4f", 1.0, 2.0, 3.0, 4.0))
    b = to_dev(struct.pack("4f", 10.0, 20.0, 30.0, 40.0))
    s = ok(rt.create_stream())
    assert rt.reduce_async(b, a, 16, acl.ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM,
                           acl.ACL_FLOAT, s, 0) == 0
    assert rt.synchronize_stream(s) == 0
    assert struct.unpack("4f", from_dev(b, 16)) == (11.0, 22.0, 33.0, 44.0)
    assert rt.reduce_async(b, a, 16, acl.ACL_RT_MEMCPY_SDMA_AUTOMATIC_MAX,
                           acl.ACL_FLOAT, s, 0) == 0
    assert rt.synchronize_stream(s) == 0
    assert struct.unpack("4f", from_dev(b, 16)) == (11.0, 22.0, 33.0, 44.0)
    assert rt.reduce_async(b, a, 16, acl.ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL,
                           acl.ACL_FLOAT, s, 0) == \
        acl.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    assert rt.reduce_async(b, a, 6, acl.ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM,
                           acl.ACL_FLOAT, s, 0) == \
        acl.ACL_ERROR_RT_PARAM_INVALID
    assert rt.destroy_stream(s) == 0
    rt.free(a)
    rt.free(b)


# ------------------------------------------------------------- allocator

def test_allocator_registration():
    d = rt.allocator_create_desc()
    assert d != 0
    calls = []
    assert rt.allocator_set_obj_to_desc(d, 0x1234) == 0
    assert rt.allocator_set_alloc_func_to_desc(
        d, lambda obj, size: calls.append(size)) == 0
    assert rt.allocator_set_free_func_to_desc(d, lambda o, b: None) == 0
    assert rt.allocator_set_alloc_advise_func_to_desc(
        d, lambda o, size, addr: None) == 0
    assert rt.allocator_set_get_addr_from_block_func_to_desc(
        d, lambda b: b) == 0
    s = ok(rt.create_stream())
    assert rt.allocator_register(s, d) == 0
    assert rt.allocator_unregister(s) == 0
    assert rt.allocator_unregister(s) == 0  # unknown stream: success (CANN)
    assert rt.allocator_register(s, 0) == acl.ACL_ERROR_INVALID_PARAM
    with pytest.raises(TypeError):
        rt.allocator_set_free_func_to_desc(d, 42)
    assert rt.allocator_destroy_desc(d) == 0
    assert rt.destroy_stream(s) == 0
    assert calls == []  # evrt itself never allocates through it
