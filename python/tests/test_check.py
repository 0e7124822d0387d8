"""EVRT_CHECK from Python (docs/check.md): racy and correct programs, each in
a fresh interpreter with the checker on; a racy one must be reported with the
right kind and exit with status 66, a correct one must run clean."""

import array
import re

import pytest

import evrt
from conftest import run_python

CHECK = {"EVRT_CHECK": "1", "EVRT_CHECK_EXITCODE": None}

PRELUDE = """
import array, threading, time, evrt
buf = bytearray(256)
def write(b):
    evrt.check_access(b, "w")
    b[:] = b"x" * len(b)
def read(b):
    evrt.check_access(memoryview(b), "r")
gate = threading.Event()
def hold():
    gate.wait(30)
"""


def findings(stderr):
    """The kinds of the checker's findings in a process's stderr."""
    return [m.group(1) for m in re.finditer(
        r"^evrt-check: (data race|use after free|unsynchronized host access"
        r"|deadlock)", stderr, re.M)]


def racy(code, kind):
    r = run_python(PRELUDE + code, env=CHECK)
    got = findings(r.stderr)
    assert r.returncode == 66, r.stderr
    assert got and all(k == kind for k in got), r.stderr
    return r.stderr


def clean(code):
    r = run_python(PRELUDE + code, env=CHECK)
    assert r.returncode == 0, r.stderr
    assert "evrt-check:" not in r.stderr, r.stderr


def test_missing_wait_between_two_launches_is_a_data_race():
    err = racy("""
a, b = evrt.Stream(), evrt.Stream()
a.launch(write, buf)
b.launch(read, buf)
evrt.synchronize()
""", "data race")
    # the Python lines of each declared access and of each launch are named
    assert "annotated at read (<string>:" in err, err
    assert "annotated at write (<string>:" in err, err
    assert "enqueued at <module> (<string>:" in err, err


def test_host_read_before_synchronize_is_an_unsynchronized_host_access():
    racy("""
a = evrt.Stream()
a.launch(hold)
a.launch(write, buf)
gate.set()
time.sleep(0.05)
evrt.check_access(buf, "r")
a.synchronize()
""", "unsynchronized host access")


def test_event_query_not_ready_orders_nothing():
    racy("""
a = evrt.Stream()
e = evrt.Event()
a.launch(hold)
a.launch(write, buf)
e.record(a)
assert not e.query()
evrt.check_access(buf, "r")
gate.set()
e.synchronize()
""", "unsynchronized host access")


def test_event_wait_orders_the_launches():
    clean("""
a, b = evrt.Stream(), evrt.Stream()
e = evrt.Event()
a.launch(hold)
a.launch(write, buf)
e.record(a)
b.wait_event(e)
b.launch(read, buf)
gate.set()
b.synchronize()
evrt.check_access(buf, "rw")
""")


def test_synchronize_and_query_loop_order_the_host():
    clean("""
a = evrt.Stream()
a.launch(write, buf)
a.synchronize()
evrt.check_access(buf, "rw")
a.launch(write, buf)
e = evrt.Event()
e.record(a)
while not e.query():
    time.sleep(0.001)
evrt.check_access(buf, "r")
""")


@pytest.mark.parametrize("done", [
    "e.query()", "a.query()", "e.synchronize() or True",
    "a.synchronize() or True"])
def test_each_way_of_learning_completion_orders_the_host(done):
    # every "complete" answer orders the host after the work it covers
    clean("""
a = evrt.Stream()
a.launch(hold)
a.launch(write, buf)
e = evrt.Event()
e.record(a)
gate.set()
while not (%s):
    time.sleep(0.001)
evrt.check_access(buf, "rw")
""" % done)


def test_buffer_protocol_objects_and_disjoint_slices():
    clean("""
a, b = evrt.Stream(), evrt.Stream()
arr = array.array("d", [0.0] * 64)
mv = memoryview(arr)
a.launch(write, mv[:32].cast("B"))
b.launch(write, mv[32:].cast("B"))     # adjacent, no overlap
a.launch(read, bytes(16))
b.launch(read, bytes(16))
evrt.synchronize()
evrt.check_access(arr, "rw")
""")


def test_host_level_sync_needs_release_and_acquire():
    clean("""
a = evrt.Stream()
done = threading.Event()
def work():
    write(buf)
    evrt.check_release(done)
    done.set()
a.launch(work)
done.wait(30)
evrt.check_acquire(done)
evrt.check_access(buf, "r")
a.synchronize()
""")


def test_exit_code_zero_keeps_the_status():
    r = run_python(PRELUDE + """
a, b = evrt.Stream(), evrt.Stream()
a.launch(write, buf)
b.launch(write, buf)
evrt.synchronize()
assert evrt.check_findings() >= 1
""", env={"EVRT_CHECK": "1", "EVRT_CHECK_EXITCODE": "0"})
    assert r.returncode == 0, r.stderr
    assert findings(r.stderr) == ["data race"], r.stderr


def test_off_by_default_and_arguments_checked():
    r = run_python("""
import evrt
assert evrt.check_enabled() is False
evrt.check_access(bytearray(4), "w")       # a no-op when off
assert evrt.check_findings() == 0
""", env={"EVRT_CHECK": None})
    assert r.returncode == 0, r.stderr
    with pytest.raises(ValueError):
        evrt.check_access(bytearray(4), "x")
    with pytest.raises(TypeError):
        evrt.check_access(object(), "r")
    evrt.check_access(array.array("i", [1, 2]), "r")
