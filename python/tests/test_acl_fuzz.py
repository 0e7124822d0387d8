"""evrt.acl.rt with garbage arguments (issue 23, the fuzz suite's Python
part): every function, called with values of every kind where its pointers,
sizes, handles and structs go (ints of every size and sign, None, strings,
bytes, floats, lists, dicts, a live block, freed blocks, an unmapped host
address, a reserved range with nothing mapped), raises a Python exception
or returns its code; none crashes the interpreter.  The calls run in a
child process (a crash is its death, which the test reports with the last
call it made); the memory, copy and virtual-memory functions get the most
rounds.  Seeded: a failure names its seed (EVRT_ACL_FUZZ_SEED replays it).
"""
import os
import re
import textwrap

import pytest

pytest.importorskip("evrt.acl",
                    reason="evrt built without the ACL layer (src/acl)")

from conftest import run_python  # noqa: E402

CHILD = textwrap.dedent(r'''
    import ctypes, mmap, random, re, sys
    import evrt.acl as acl
    rt = acl.rt
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else SEED
    rng = random.Random(seed)
    assert acl.init() in (acl.ACL_SUCCESS, acl.ACL_ERROR_REPEAT_INITIALIZE)
    assert rt.set_device(0) == acl.ACL_SUCCESS

    def ok(res):
        *out, ret = res
        assert ret == acl.ACL_SUCCESS, ret
        return out[0]

    HUGE = acl.ACL_MEM_MALLOC_HUGE_FIRST
    live = ok(rt.malloc(4096, HUGE))
    freed = ok(rt.malloc(64, HUGE))
    assert rt.free(freed) == 0
    hfreed = ok(rt.malloc_host(64))
    assert rt.free_host(hfreed) == 0
    m = mmap.mmap(-1, 4096)
    stray = ctypes.addressof(ctypes.c_char.from_buffer(m))
    m.close()                               # nothing mapped there now
    va = ok(rt.reserve_mem_address(4 << 20, 0, 0, 0))   # nothing mapped
    POOL = [0, 1, -1, 7, 64, 4096, 2 ** 31 - 1, 2 ** 32 + 1, 2 ** 63 - 1,
            2 ** 64 - 1, 2 ** 64, -2 ** 63, 2 ** 100, None, "", "xyz",
            b"\0" * 8, 1.5, float("nan"), [], [0, 1], [live, 2 ** 64],
            {}, {"id": 0, "type": 1}, (0,), live, live + 4000, freed,
            hfreed, stray, va, va + 4096]

    # Calls that wait by design (for a report, a value, a notify) or take
    # the device away from the rest of the run.
    SKIP = {"process_report", "process_host_func", "value_wait",
            "wait_and_reset_notify", "reset_device", "reset_device_force",
            "set_device", "destroy_context", "set_context"}
    MEMORY = re.compile(r"malloc|free|^mem|memcpy|memset|^host_|reserve|"
                        r"release_mem|map_mem|pointer|check_mem|ipc_mem|"
                        r"value_write|random_num|reduce|desc")

    def arities(fn):
        """The argument counts fn takes, from its TypeError."""
        try:
            fn()
            return [0]
        except TypeError as e:
            msg = str(e)
        except Exception:
            return [0]
        m = re.search(r"takes (exactly|at least|at most|from) (\d+)"
                      r"(?: to (\d+))?", msg)
        if not m:
            return list(range(1, 9))
        lo = int(m.group(2))
        hi = int(m.group(3)) if m.group(3) else lo
        if m.group(1) == "at least":
            hi = lo + 2
        if m.group(1) == "at most":
            lo, hi = 0, lo
        return list(range(lo, hi + 1))

    names = sorted(n for n in dir(rt) if not n.startswith("_")
                   and callable(getattr(rt, n)) and n not in SKIP)
    calls = 0
    for name in names:
        fn = getattr(rt, name)
        counts = arities(fn)
        rounds = 120 if MEMORY.search(name) else 16
        for _ in range(rounds):
            args = [rng.choice(POOL) for _ in range(rng.choice(counts))]
            # flushed: a crash leaves the call that made it on record
            print("call", name, repr(args), flush=True)
            try:
                res = fn(*args)
            except SystemError as e:           # a C API misuse: a bug
                print("SystemError", name, e, flush=True)
                raise
            except Exception:
                continue
            calls += 1
            if isinstance(res, tuple) and res:
                res = res[-1]
            if isinstance(res, int) and res != 0 and \
                    not 100000 <= res < 600000 and name.startswith("mem"):
                print("odd code", name, res, flush=True)
                sys.exit(3)
    rt.synchronize_device()
    print("fuzzed", len(names), "functions,", calls, "calls returned",
          flush=True)
''')


def test_rt_functions_with_garbage_raise_or_return_codes():
    seed = int(os.environ.get("EVRT_ACL_FUZZ_SEED", "0") or 0) or \
        int.from_bytes(os.urandom(4), "little")
    r = run_python(CHILD.replace("SEED", str(seed)), timeout=110)
    calls = [ln for ln in r.stdout.splitlines() if ln.startswith("call ")]
    assert r.returncode == 0 and "fuzzed" in r.stdout, (
        "seed %d: exit %d after %s\n%s" % (
            seed, r.returncode, calls[-1] if calls else "no call",
            r.stderr[-3000:]))
    m = re.search(r"fuzzed (\d+) functions, (\d+) calls", r.stdout)
    assert int(m.group(1)) > 200 and int(m.group(2)) > 1000, m.group(0)
