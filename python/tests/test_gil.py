"""Blocking calls release the GIL; launched callables take it only to run."""
import threading
import time

import evrt


def _sync_releases_gil(kind):
    """A thread blocks in synchronize on work that cannot finish until this
    thread runs Python: a queued callable waits on a gate that only this
    thread opens, after the other thread is (most likely) blocked.  If the
    GIL were held while blocked, this thread could never open the gate and
    the test would hang (ctest's timeout fails it).  Order, not timing: a
    slow machine where the opener comes first still passes, never fails."""
    gate = threading.Event()
    entering = threading.Event()
    done = []
    s = evrt.Stream()

    def blocker():
        e = evrt.Event()
        s.launch(gate.wait)   # the worker waits in Python, GIL released
        e.record(s)
        entering.set()
        if kind == "event":
            e.synchronize()
        elif kind == "stream":
            s.synchronize()
        else:
            evrt.synchronize()
        done.append(gate.is_set())

    t = threading.Thread(target=blocker)
    t.start()
    assert entering.wait(30)
    time.sleep(0.1)           # let it block; a GIL held there stops us here
    gate.set()
    t.join(60)
    assert not t.is_alive()
    # The synchronize returned only after the gate opened: it waited.
    assert done == [True]


def test_event_synchronize_releases_gil():
    _sync_releases_gil("event")


def test_stream_synchronize_releases_gil():
    _sync_releases_gil("stream")


def test_device_synchronize_releases_gil():
    _sync_releases_gil("device")


def test_python_runs_while_main_thread_blocks():
    # A pure-Python thread makes progress while this thread is blocked: the
    # stream's work waits for that thread to count to 20 (a GIL held by the
    # blocked synchronize would stop the count, and the test would hang).
    s = evrt.Stream()
    e = evrt.Event()
    gate = threading.Event()
    s.launch(gate.wait)
    e.record(s)
    count = [0]

    def spin():
        time.sleep(0.05)
        while count[0] < 20:
            count[0] += 1
            time.sleep(0.001)
        gate.set()

    t = threading.Thread(target=spin)
    t.start()
    e.synchronize()
    assert count[0] == 20 and gate.is_set()
    t.join()


def test_launch_takes_gil_only_while_running():
    # While a launched callable is queued behind a delay, the launching
    # thread keeps running Python (the worker does not hold the GIL).
    s = evrt.Stream()
    hits = []
    s.delay(1000)  # far longer than the 50 ms loop, so a stall cannot end it
    s.launch(hits.append, time.monotonic())
    t0 = time.monotonic()
    n = 0
    while time.monotonic() - t0 < 0.05:
        n += 1
    assert n > 1000 and not hits
    s.synchronize()
    assert len(hits) == 1


def test_query_does_not_block():
    s = evrt.Stream()
    e = evrt.Event()
    s.delay(1000)
    e.record(s)
    t0 = time.monotonic()
    for _ in range(1000):
        assert e.query() is False
    # 1000 queries take about a millisecond; the bound only says that no
    # query waited for the 1 s delay.
    assert time.monotonic() - t0 < 0.5
    s.synchronize()
