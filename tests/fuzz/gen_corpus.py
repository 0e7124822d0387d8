#!/usr/bin/env python3
"""Writes the seed corpora of tests/fuzz (run from anywhere; rerun after a
change of fuzz_api.c's encoding).  Each seed is a readable program in the
byte encoding of fuzz_api.c: an opcode byte then its argument bytes."""
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
