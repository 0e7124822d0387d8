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


# ------------------------------------------------ reports a person can act on

def line_of(code, marker):
    """The 1-based line of code that holds marker (what <string>:N names)."""
    return next(i for i, l in enumerate(code.splitlines(), 1) if marker in l)


def blocks(stderr):
    """The checker's report blocks, each a list of lines."""
    out = []
    for l in stderr.splitlines():
        if l.startswith("evrt-check: ") and not l.startswith(
                ("evrt-check: summary", "evrt-check: note")):
            out.append([l])
        elif out and l.startswith("  "):
            out[-1].append(l)
    return out


def sides(block):
    """The two operations of a report block: {label: [its lines]}."""
    got, cur = {}, None
    for l in block[1:]:
        m = re.match(r"^  (access|earlier access|use|after the free|free"
                     r"|while still in use by): ", l)
        if m:
            cur = got.setdefault(m.group(1), [l])
        elif l.startswith("    ") and cur is not None:
            cur.append(l)
        else:
            cur = None
    return got


def test_python_race_names_python_lines_and_python_fix():
    code = PRELUDE + """
s1, s2 = evrt.cuda.Stream(), evrt.cuda.Stream()
s1.launch(write, buf)  # launch of the write
s2.launch(read, buf)  # launch of the read
evrt.synchronize()
"""
    r = run_python(code, env=CHECK)
    assert r.returncode == 66, r.stderr
    (b,) = blocks(r.stderr)
    assert re.match(r"^evrt-check: data race on \[0x[0-9a-f]+, 0x[0-9a-f]+\) "
                    r"\(256 bytes\)$", b[0]), b
    ops = sides(b)
    assert set(ops) == {"access", "earlier access"}, b
    stream_of = {}
    for lines in ops.values():
        kind = "write" if lines[0].startswith("  access: write") or \
            lines[0].startswith("  earlier access: write") else "read"
        assert re.match(r"^  (earlier )?access: %s by host function of "
                        r"\[0x[0-9a-f]+, 0x[0-9a-f]+\) \(256 bytes\)$" % kind,
                        lines[0]), lines
        m = re.match(r"^    on stream (\d+) \(device 0\), work item #1$",
                     lines[1])
        assert m, lines
        stream_of[kind] = int(m.group(1))
        decl = 'evrt.check_access(b, "w")' if kind == "write" else \
            'evrt.check_access(memoryview(b), "r")'
        assert lines[2] == "    annotated at %s (<string>:%d)" % (
            kind, line_of(code, decl)), lines
        assert lines[3] == "    enqueued at <module> (<string>:%d)" % (
            line_of(code, "launch of the " + kind)), lines
        assert lines[4] == "    no stream wait passed before it on its stream"
    first = stream_of["write"] if ops["earlier access"][0].find("write") > 0 \
        else stream_of["read"]
    second = stream_of["read"] if first == stream_of["write"] \
        else stream_of["write"]
    assert b[-1] == (
        "  fix: make s2 wait for s1's work between the two: "
        "s2.wait_stream(s1), or e = s1.record_event() then s2.wait_event(e), "
        "or s1.synchronize() in between (s1: stream %d, s2: stream %d)"
        % (first, second)), b
    assert "evrt_stream_wait_event" not in r.stderr


def test_python_host_access_fix_is_a_python_synchronize():
    code = PRELUDE + """
a = evrt.Stream()
a.launch(hold)
a.launch(write, buf)  # the launch
evrt.check_access(buf, "r")  # the host read
gate.set()
a.synchronize()
"""
    r = run_python(code, env=CHECK)
    assert r.returncode == 66, r.stderr
    (b,) = blocks(r.stderr)
    assert b[0].startswith("evrt-check: unsynchronized host access on "), b
    ops = sides(b)
    host = [l for l in ops.values() if l[1].startswith("    on host thread")]
    work = [l for l in ops.values() if l[1].startswith("    on stream")]
    assert len(host) == 1 and len(work) == 1, b
    assert host[0][2] == "    at <module> (<string>:%d)" % line_of(
        code, "the host read"), b
    sid = int(re.match(r"^    on stream (\d+) ", work[0][1]).group(1))
    assert work[0][3] == "    enqueued at <module> (<string>:%d)" % line_of(
        code, "the launch"), b
    assert b[-1] == (
        "  fix: synchronize before the host touches this memory: "
        "s.synchronize(), e.synchronize() of an event recorded on it after "
        "its work, or evrt.synchronize() (s: stream %d); or launch the access "
        "as a function after a wait" % sid), b


def test_python_graph_replays_name_their_replay_lines_and_streams():
    # CUDAGraph.replay() is evrt's own Python (evrt/_graphs.py): the line
    # named is the user's innermost frame outside the package
    code = PRELUDE + """
g1, g2 = evrt.cuda.CUDAGraph(), evrt.cuda.CUDAGraph()
for g in (g1, g2):
    with evrt.cuda.graph(g):
        evrt.cuda.current_stream().launch(write, buf)  # captured
s1, s2 = evrt.cuda.Stream(), evrt.cuda.Stream()
with evrt.cuda.stream(s1):
    g1.replay()  # first replay
with evrt.cuda.stream(s2):
    g2.replay()  # second replay
evrt.synchronize()
"""
    r = run_python(code, env=CHECK)
    assert r.returncode == 66, r.stderr
    (b,) = blocks(r.stderr)
    assert b[0].startswith("evrt-check: data race on "), b
    ops = sides(b)
    launched = sorted(l for lines in ops.values() for l in lines
                      if l.startswith("    in the graph launched on "))
    ids = {}
    for l in launched:
        m = re.match(r"^    in the graph launched on stream (\d+) by "
                     r"evrt_graph_launch at <module> \(<string>:(\d+)\)$", l)
        assert m, l
        ids[int(m.group(2))] = int(m.group(1))
    assert sorted(ids) == [line_of(code, "first replay"),
                           line_of(code, "second replay")], b
    assert len(set(ids.values())) == 2, b
    for lines in ops.values():
        assert "    captured at <module> (<string>:%d)" % line_of(
            code, "# captured") in lines, lines
    assert "_graphs.py" not in r.stderr
    # the fix names the streams the graphs were replayed on, not the lanes
    m = re.match(r"^  fix: make s2 wait for s1's work between the two: "
                 r"s2\.wait_stream\(s1\), or e = s1\.record_event\(\) then "
                 r"s2\.wait_event\(e\), or s1\.synchronize\(\) in between "
                 r"\(s1: stream (\d+), s2: stream (\d+)\)$", b[-1])
    assert m and {int(m.group(1)), int(m.group(2))} == set(ids.values()), b
