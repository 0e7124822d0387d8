#!/usr/bin/env python3
"""Writes the seed corpora of tests/fuzz (run from anywhere; rerun after a
change of fuzz_api.c's or fuzz_acl_mem.c's encoding).  Each seed is a
readable program in the byte encoding of its target: an opcode byte then
its argument bytes."""
import os

HERE = os.path.dirname(os.path.abspath(__file__))
(STREAM_CREATE, STREAM_DESTROY, EVENT_CREATE, EVENT_DESTROY, RECORD, WAIT,
 WAIT_TIMEOUT, RESET, EVENT_QUERY, STREAM_QUERY, EVENT_SYNC, STREAM_SYNC, HOST,
 MEMCPY, MEMSET, DELAY, ELAPSED, INFO, DEVICE, LIMIT, MISC, IPC) = range(22)


def s(i):            # stream slot i
    return [i << 3]


def e(i):            # event slot i
    return [i << 3]


STALE = [5]
DEFAULT0, DEFAULT1 = [7], [7 | 8]


def forged(v):
    return [6] + list(v.to_bytes(8, "little"))


def mk_stream(i, dev):   # dev byte: value - 1 is the device (-1 = current)
    return [STREAM_CREATE, i, dev + 1, 0, 1]


def mk_event(i, flags):
    return [EVENT_CREATE, i, flags]


seeds = {
    "basic": mk_stream(0, 0) + mk_stream(1, 0) + mk_event(0, 1) + mk_event(1, 1)
    + [HOST] + s(0) + [2] + [DELAY] + s(0) + [20]
    + [RECORD] + e(0) + s(0) + [WAIT] + s(1) + e(0) + [HOST] + s(1) + [2]
    + [RECORD] + e(1) + s(1) + [EVENT_QUERY] + e(0) + [STREAM_QUERY] + s(1)
    + [EVENT_SYNC] + e(1) + [40] + [STREAM_SYNC] + s(0) + [40]
    + [ELAPSED] + e(0) + e(1) + [INFO] + e(0) + s(0),
    "stale": mk_stream(0, 0) + mk_event(0, 0) + [RECORD] + e(0) + s(0)
    + [STREAM_DESTROY, 0] + [EVENT_DESTROY, 0]
    + [RECORD] + STALE + DEFAULT0 + [WAIT] + STALE + STALE
    + [HOST] + STALE + [2] + [EVENT_QUERY] + STALE + [STREAM_QUERY] + STALE
    + [STREAM_DESTROY, 1] + STALE + [EVENT_DESTROY, 1] + STALE
    + [STREAM_DESTROY, 3] + s(1),
    "devices": mk_stream(0, 0) + mk_stream(1, 1) + mk_event(0, 0)
    + [HOST] + s(0) + [2] + [RECORD] + e(0) + s(0) + [RECORD] + e(0) + s(1)
    + [WAIT] + s(1) + e(0) + [DEVICE, 1] + [STREAM_CREATE, 2, 0, 0, 1]
    + [STREAM_CREATE, 3, 3, 0, 0, 7] + [DEVICE, 200] + [RECORD] + e(0) + DEFAULT1,
    "reset": mk_stream(0, 0) + mk_stream(1, 0) + mk_event(0, 2)
    + [RESET] + e(0) + s(0) + [HOST] + s(0) + [2] + [RECORD] + e(0) + s(0)
    + [RESET] + e(0) + s(1) + [WAIT] + s(1) + e(0) + [RECORD] + e(0) + s(0)
    + [RESET] + e(0) + s(0) + [EVENT_QUERY] + e(0) + [EVENT_SYNC] + e(0) + [0],
    "memory": mk_stream(0, 0) + [MEMSET] + s(0) + [7, 0, 0, 64]
    + [MEMCPY] + s(0) + [1, 10, 0, 40] + [MEMCPY] + s(0) + [5, 0, 0, 3]
    + [MEMSET] + DEFAULT0 + [9, 60, 0, 200] + [DELAY] + s(0) + [31]
    + [HOST] + s(0) + [1, 5] + list(b"label") + [HOST] + s(0) + [0],
    "limits": [LIMIT, 0, 1, 1] + mk_stream(0, 0) + mk_event(0, 0) + mk_event(1, 0)
    + mk_event(2, 0x10) + [HOST] + s(0) + [2]
    + [RECORD] + e(0) + s(0) + [RECORD] + e(1) + s(0) + [RECORD] + e(2) + s(0)
    + [LIMIT, 0, 0, 1] + [RESET] + e(0) + s(0) + [STREAM_SYNC] + s(0) + [60]
    + [RECORD] + e(1) + s(0) + [LIMIT, 2, 5, 0],
    "forged": [RECORD] + forged(0x0000000100000006) + forged(0x0000000100000005)
    + [EVENT_QUERY] + forged(0xffffffffffffffff) + [STREAM_QUERY]
    + forged(0x0000000300000009) + [HOST] + forged(1) + [2]
    + [WAIT] + forged(0x7fffffffffffffff) + forged(2) + [EVENT_DESTROY, 1] + forged(6),
    "timeouts": mk_stream(0, 0) + mk_stream(1, 0) + mk_event(0, 4) + mk_event(1, 0x20)
    + [DELAY] + s(0) + [31] + [RECORD] + e(0) + s(0)
    + [WAIT_TIMEOUT] + s(1) + e(0) + [1] + [WAIT_TIMEOUT] + s(1) + e(0) + [255]
    + [EVENT_SYNC] + e(0) + [1] + [STREAM_SYNC] + s(1) + [0] + [IPC] + e(0) + [3, 4]
    + [MISC] + s(0) + [4] + list(b"name") + [37],
}

d = os.path.join(HERE, "corpus", "fuzz_api")
os.makedirs(d, exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(d, name), "wb") as f:
        f.write(bytes(data))

d = os.path.join(HERE, "corpus", "fuzz_ipc_handle")
os.makedirs(d, exist_ok=True)
ipc = {
    "zeros": bytes(64),
    "ones": b"\xff" * 64,
    "magic-like": b"EVRTIPC1" + bytes(range(56)),
    "short": b"evrt",
    "with-mutation": bytes(range(64)) + bytes([0, 1, 8, 0x80, 63, 0xff]),
}
for name, data in ipc.items():
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)

# fuzz_acl_mem.c: opcodes, then pointer picks (a byte: kind % 10, slot or
# range in the high nibble, then offset bytes) and size picks (a byte:
# small / exact / a little past / huge / 16-bit, then its bytes).
(A_MALLOC, A_FREE, A_MEMCPY, A_MEMCPY_ASYNC, A_MEMSET, A_MEMSET_ASYNC, A_2D,
 A_2D_ASYNC, A_D32, A_BATCH, A_OFFSET, A_DESC, A_RESERVE, A_PHYS, A_MAP,
 A_UNMAP, A_ACCESS, A_RELEASE, A_QUERY, A_REGISTER, A_VALUE,
 A_SYNC) = range(22)


def blkp(i, off=0):      # block slot i (kinds 0-2), 16-bit offset
    return [(i << 4) | 0, off & 0xff, off >> 8]


def plainp(off=0):
    return [3, off & 0xff, off >> 8]


def resp(k, off=0):      # reserved range k, 24-bit offset
    return [(k << 4) | 4, off & 0xff, (off >> 8) & 0xff, off >> 16]


def stalep(i):
    return [(i << 4) | 5, 0]


GUARD, LOW, NONCANON = [6, 16, 0], [7, 0x10, 0], [8, 1, 2, 3, 4]
EXACT, PAST, HUGE = [1], [2, 7], [3] + [0xff] * 8


def small(n):
    return [0, n]


def malloc(i, host, size):  # size: 16-bit (host 0: device)
    kind = 0 if host else 1
    b = kind  # b % 3 picks the allocator, b & 0x80 = 0: 16-bit size
    return [A_MALLOC, i, b, (size - 1) & 0xff, (size - 1) >> 8]


def copy(op, d, s, size, maxsel, kind, extra=()):
    return [op] + d + s + size + [1 if maxsel == "n" else 0] + \
        ([] if maxsel == "n" else maxsel) + [kind] + list(extra)


acl = {
    "blocks": malloc(0, False, 256) + malloc(1, True, 256) + malloc(2, False, 4096)
    + copy(A_MEMCPY, blkp(0), blkp(1), EXACT, "n", 1)
    + copy(A_MEMCPY, blkp(0), blkp(1), PAST, "n", 3)
    + copy(A_MEMCPY_ASYNC, blkp(2), plainp(8), small(64), "n", 1, [0])
    + copy(A_MEMSET, blkp(1, 8), blkp(0), EXACT, "n", 0, [5])
    + [A_FREE, 1, 0] + copy(A_MEMCPY, stalep(0), plainp(), small(32), "n", 0)
    + copy(A_MEMCPY, plainp(), stalep(0), small(32), "n", 4),
    "twod": malloc(0, False, 64) + malloc(1, False, 65535)
    + copy(A_2D, blkp(0), blkp(1), small(16), "n", 3, [4, 16, 16, 0])
    + copy(A_2D, blkp(0), plainp(), small(200), "n", 1, [60, 0, 0, 0])
    + copy(A_2D_ASYNC, GUARD, blkp(1), small(64), "n", 2, [8, 0, 0, 0, 1])
    + copy(A_2D_ASYNC, blkp(1), NONCANON, small(64), "n", 1, [8, 0, 0, 0, 0]),
    "vmm": [A_RESERVE, 0, 0, 0, 1] + [A_PHYS, 0, 0, 0] + [A_PHYS, 0, 0, 1]
    + copy(A_MEMSET, resp(0, 4096), plainp(), small(64), "n", 0, [1])
    + [A_MAP, 0, 0, 0, 0] + copy(A_MEMSET_ASYNC, resp(0, 64), plainp(), small(64), "n", 0, [1, 0])
    + malloc(0, False, 4096)
    + copy(A_MEMCPY_ASYNC, blkp(0), resp(0, 100), small(100), "n", 3, [0])
    + [A_UNMAP, 0, 0, 0, 0]
    + copy(A_MEMCPY, blkp(0), resp(0, 100), small(100), "n", 3)
    + copy(A_MEMCPY_ASYNC, resp(0, 3 << 20), blkp(0), small(100), "n", 3, [1])
    + [A_MAP, 0, 1, 1, 0] + [A_ACCESS, 0, 1, 0, 1, 1]
    + [A_QUERY] + resp(0, 2 << 20) + resp(0) + [0x12, 1] + [0] * 10
    + [A_RELEASE, 0, 0, 0] + [A_UNMAP, 0, 1, 0, 0] + [A_RELEASE, 0, 0, 0]
    + [A_SYNC, 1],
    "batch": malloc(0, False, 512) + malloc(1, True, 512)
    + [A_BATCH] + blkp(0) + blkp(1) + EXACT + [1, 0] + plainp() + plainp(64)
    + [32, 2, 1, 2, 1, 0, 0, 0, 0]
    + [A_BATCH] + blkp(0) + stalep(3) + small(8) + [1, 0] + LOW + GUARD
    + [16, 2, 1, 2, 1, 1, 1, 1, 1],
    "through-addresses": malloc(0, False, 64) + malloc(1, False, 256)
    + [A_OFFSET] + blkp(1) + blkp(1, 128) + small(64) + [1, 0, 0, 0, 0]
    + [A_OFFSET] + NONCANON + blkp(1) + small(8) + [1, 0, 0, 0, 0]
    + [A_DESC] + blkp(1) + blkp(1, 64) + small(32) + [1, 0, 0, 1, 1] + [0] * 4
    + [A_DESC] + LOW + blkp(1) + small(32) + [1, 0, 0, 1, 1] + [0] * 4
    + [A_VALUE] + resp(1) + [0] * 9 + [A_VALUE] + blkp(0) + [7] * 9
    + [A_REGISTER, 3, 0] + [A_REGISTER, 1] + [A_D32] + blkp(0) + plainp() + small(64) + [1, 0, 1, 0],
}

d = os.path.join(HERE, "corpus", "fuzz_acl_mem")
os.makedirs(d, exist_ok=True)
for name, data in acl.items():
    with open(os.path.join(d, name), "wb") as f:
        f.write(bytes(data))

# fuzz_native_all.c: opcodes, then handle picks (a byte: kind % 8, slot in
# bits 3-4: 0-3 live slot, 4 stale, 5 another kind's live handle, 6 forged
# (8 bytes follow), 7 NULL) and the argument bytes each opcode reads.
(N_STREAM_CREATE, N_STREAM_DESTROY, N_EVENT_CREATE, N_EVENT_DESTROY, N_RECORD,
 N_WAIT, N_EVENT_Q, N_STREAM_Q, N_SYNC, N_DEVICE_SYNC, N_WORK, N_MEM, N_VALUE,
 N_CAPTURE_BEGIN, N_CAPTURE_END, N_CAPTURE_CTRL, N_INSTANTIATE, N_GRAPH,
 N_FAILURE, N_THREAD, N_DEVICE, N_IPC_EVENT, N_IPC_MEM, N_CHECK, N_TRACE,
 N_LIB) = range(26)
NSTALE, NOTHER, NNULL = [4], [5], [7]
RELAXED, GLOBAL = 2, 0


def n_stream(i, devsel=0):  # devsel: 0 -> device 0, 1 -> 1, 2 -> -1, 3 -> 2
    return [N_STREAM_CREATE, i, devsel, 0, 1]


def n_event(i, flags=0):
    return [N_EVENT_CREATE, i, flags]


def host(st):               # a no-op host function (56 % 7 == 0, bit 3)
    return [N_WORK] + st + [56]


def rec(ev, st):
    return [N_RECORD] + ev + st + [0]


def wait(st, ev):
    return [N_WAIT] + st + ev + [0]


def bsel(mod, r, must=0, mustnot=0):
    """The smallest selector byte b with b % mod == r, the bits of must
    set and those of mustnot clear (the ops pick their case and options
    from one byte)."""
    return next(b for b in range(256) if b % mod == r and
                b & must == must and not b & mustnot)


native = {
    "capture-graph": n_stream(0) + n_stream(1) + n_event(0) + n_event(1)
    + [N_CAPTURE_BEGIN] + s(0) + [RELAXED] + host(s(0))
    + [N_MEM] + s(0) + [2, 0, 8, 16] + rec(e(0), s(0)) + wait(s(1), e(0))
    + host(s(1)) + [N_VALUE] + s(1) + [0] + [0] * 8 + [0]
    + rec(e(1), s(1)) + wait(s(0), e(1))
    + [N_CAPTURE_CTRL] + s(0) + [0, 0, 1] + [N_CAPTURE_END] + s(0) + [0]
    + [N_INSTANTIATE] + [0] + [0]
    + [N_GRAPH, 0] + [0] + [0] + s(1) + [2]
    + [N_GRAPH, 1] + [0] + [0]                      # destroy graph 0
    + [N_GRAPH, 0] + NNULL + [0] + NNULL + [0]      # launch on the default
    + [N_GRAPH, 0] + NNULL + NOTHER + s(1) + [0]    # another kind as exec
    + [N_GRAPH, 11] + NNULL + [0]                   # destroy exec 0
    + [N_GRAPH, 0] + NNULL + NSTALE + s(0) + [0]
    + [N_SYNC, 1, 40] + s(1),
    "capture-misuse": n_stream(0) + n_stream(1) + n_event(0)
    + [N_CAPTURE_BEGIN] + s(0) + [GLOBAL] + [N_CAPTURE_BEGIN] + s(0) + [9]
    + [N_CAPTURE_BEGIN] + NNULL + [0] + [N_SYNC, 1, 0] + s(1)
    + [N_DEVICE_SYNC, 0, 1, 1, 1] + [N_STREAM_DESTROY, 0]
    + rec(e(0), s(0)) + [N_CAPTURE_END] + s(1)      # not capturing
    + [N_CAPTURE_BEGIN] + s(1) + [RELAXED] + wait(s(0), e(0))
    + [N_CAPTURE_END] + s(0)                        # invalidated
    + [N_CAPTURE_END] + s(1) + [2]
    + [N_THREAD, 0, 1] + [N_THREAD, 8, 77],
    "stale-and-other-kinds": n_stream(0) + n_stream(1) + n_event(0, 1)
    + n_event(1) + [N_STREAM_DESTROY, 2] + [N_EVENT_DESTROY, 2]
    + rec(NSTALE, s(0)) + rec(e(0), NSTALE) + rec(NOTHER, s(0))
    + rec(e(0), NOTHER) + wait(NOTHER, NOTHER)
    + [N_EVENT_Q] + NSTALE + NOTHER + [0] + [N_STREAM_Q] + NOTHER + [3, 65, 66, 67, 1]
    + [N_STREAM_DESTROY, 1] + NOTHER + [N_EVENT_DESTROY, 1] + NOTHER
    + [N_INSTANTIATE] + NOTHER + [N_GRAPH, 2] + NOTHER
    + [N_FAILURE] + NSTALE + [1] + [N_THREAD, 1] + NOTHER + [1, 3]
    + [N_CAPTURE_BEGIN] + NSTALE + [0] + [N_CAPTURE_END] + NOTHER
    + [N_IPC_EVENT] + NOTHER + [0] * 66,
    "failures": n_stream(0) + n_stream(1)
    + [N_FAILURE] + s(0) + [40] + [N_FAILURE] + s(0) + [24, 1]  # STOP, a callback
    + [N_WORK] + s(0) + [58] + host(s(0)) + [N_WORK] + s(0) + [3, 5]
    + [N_SYNC, 1, 40] + s(0) + [N_FAILURE] + s(0) + [1] + [N_FAILURE] + s(0) + [8]
    + [N_FAILURE] + s(0) + [12] + [N_FAILURE] + s(1) + [9, 1]
    + [N_WORK] + s(1) + [3, 20] + [N_WORK] + s(1) + [6]
    + [N_WORK] + s(1) + [5] + [N_WORK] + s(1) + [12]  # shutdown, own sync
    + [N_SYNC, 3, 0] + s(1)
    + [N_FAILURE] + s(0) + [24, 2]
    + [N_STREAM_DESTROY, 0] + [N_DEVICE_SYNC, 2, 0, 0, 1, 0],
    "ipc-mem": [N_IPC_MEM, 0, 0, 64]                 # alloc 4097 bytes
    + [N_IPC_MEM, bsel(6, 0, 8), 1, 1]                # alloc a garbage size
    + [N_IPC_MEM, bsel(6, 2, 8 | 128, 48), 0, 0]      # export, no pid check
    + [N_IPC_MEM, bsel(6, 2, 0, 8 | 48), 0, 5]        # export at offset 5
    + [N_IPC_MEM, bsel(6, 3, 8, 16), 0] + [7] + [0] * 7 + [2]  # set pids
    + [N_IPC_MEM, bsel(6, 4, 0, 56), 0]               # import its own key
    + [N_IPC_MEM, bsel(6, 4, 8, 48), 0, 3, 0x41]      # import a changed key
    + [N_IPC_MEM, bsel(6, 5, 0, 24), 0]               # close
    + [N_IPC_MEM, bsel(6, 1, 0, 24), 0]               # free block 0
    + [N_IPC_MEM, bsel(6, 1, 8, 16), 0]               # free it again (stale)
    + [N_IPC_MEM, bsel(6, 1, 16, 8), 1, 0]            # free inside block 1
    + [N_IPC_MEM, bsel(6, 1, 24), 0] + [0x10] * 8,    # free a forged pointer
    "values-checks-trace": n_stream(0) + [N_TRACE, bsel(3, 0, 8)]
    + [N_VALUE] + s(0) + [0 | 16] + [0] * 8 + [0]
    + [N_VALUE] + s(0) + [1] + [5] + [0] * 7 + [1, 1, 30]
    + [N_VALUE] + s(0) + [2] + [5] + [0] * 7 + [1, 1, 1]
    + [N_VALUE] + NNULL + [3] + [9] + [0] * 7 + [2, 1, 1, 8]
    # check ops: b, (8 pointer bytes unless b & 8), size byte, mode byte
    + [N_CHECK, bsel(5, 0, 8, 48), 16, 0]                  # access
    + [N_CHECK, bsel(5, 1, 8 | 64, 48), 16, 0]             # alloc, free
    + [N_CHECK, bsel(5, 2, 64 | 128, 56)] + [0] * 8 + [8, 0]  # sync objects
    + [N_CHECK, bsel(5, 3, 8 | 64, 48 | 128), 0, 0, 5]
    + [0x66, 0x75, 0x7a, 0x7a, 0xff]                       # a non-UTF-8 site
    + [N_CHECK, bsel(5, 4, 8 | 16, 32), 8, 0]              # free NULL
    + [N_TRACE, bsel(3, 2)] + [N_TRACE, bsel(3, 1)]
    + [N_TRACE, bsel(3, 0, 16, 8)] + [N_LIB, 3, 40] + [N_LIB, 0, 0xff],
}

d = os.path.join(HERE, "corpus", "fuzz_native_all")
os.makedirs(d, exist_ok=True)
for name, data in native.items():
    with open(os.path.join(d, name), "wb") as f:
        f.write(bytes(data))
