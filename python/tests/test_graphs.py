"""Stream capture and graph replay from Python: the native evrt API
(begin_capture / end_capture / Graph / GraphExec) and torch.cuda.graphs'
(evrt.cuda.CUDAGraph, evrt.cuda.graph).  docs/capture.md, docs/python.md."""
import gc
import os
import threading
import time
import weakref

import pytest

import evrt
import evrt.cuda
import evrt.xpu


def wait_until(cond, seconds=30.0):
    end = time.monotonic() + seconds
    while not cond():
        if time.monotonic() > end:
            return False
        time.sleep(0.005)
    return True


# ------------------------------------------------------------ native API

def test_captured_callables_run_at_each_replay_not_at_capture():
    s = evrt.Stream()
    calls = []
    evrt.begin_capture(s, "relaxed")
    assert evrt.capture_status(s)[0] == "active"
    assert evrt.capture_status(s)[1] > 0
    s.launch(calls.append, "a")
    s.launch(calls.append, "b")
    g = evrt.end_capture(s)
    assert evrt.capture_status(s) == ("none", 0)
    s.synchronize()
    assert calls == []
    assert g.node_count == 2
    x = g.instantiate()
    for _ in range(3):
        x.launch(s)
    s.synchronize()
    assert calls == ["a", "b"] * 3
    x.destroy()
    g.destroy()
    with pytest.raises(evrt.EvrtError):
        x.launch(s)
    with pytest.raises(evrt.EvrtError):
        g.instantiate()


def test_kept_callables_outlive_the_objects_until_replays_finish():
    s = evrt.Stream()
    gate = threading.Event()
    ran = []

    class Work:
        def __call__(self):
            ran.append(1)

    w = Work()
    ref = weakref.ref(w)
    evrt.begin_capture(s, "relaxed")
    s.launch(w)
    g = evrt.end_capture(s)
    x = g.instantiate()
    del w
    t = evrt.Stream()
    t.launch(gate.wait, 30)  # holds the replay back
    done = evrt.Event()
    done.record(t)
    t2 = evrt.Stream()
    t2.wait_event(done)
    x.launch(t2)
    del g, x  # while the replay waits behind the gate
    gc.collect()
    assert ref() is not None  # still needed by the replay in flight
    gate.set()
    t2.synchronize()
    assert ran == [1]
    assert wait_until(lambda: (gc.collect(), ref() is None)[1])


def test_exchange_capture_mode_and_status_names():
    assert evrt.exchange_capture_mode("relaxed") == "global"
    assert evrt.exchange_capture_mode("thread_local") == "relaxed"
    assert evrt.exchange_capture_mode("global") == "thread_local"
    with pytest.raises(ValueError):
        evrt.exchange_capture_mode("loose")
    with pytest.raises(ValueError):
        evrt.begin_capture(evrt.Stream(), "loose")
    with pytest.raises(TypeError):
        evrt.begin_capture("stream")


def test_capture_rules_raise_evrt_errors():
    s = evrt.Stream()
    evrt.begin_capture(s)
    with pytest.raises(evrt.EvrtError) as e:
        s.synchronize()
    assert e.value.name == "EVRT_ERROR_CAPTURE_UNSUPPORTED"
    assert evrt.capture_status(s)[0] == "invalidated"
    with pytest.raises(evrt.EvrtError) as e:
        evrt.end_capture(s)
    assert e.value.name == "EVRT_ERROR_CAPTURE_INVALIDATED"
    assert evrt.capture_status(s)[0] == "none"
    # a default stream takes no part in a capture
    with pytest.raises(evrt.EvrtError) as e:
        evrt.begin_capture(evrt.default_stream())
    assert e.value.name == "EVRT_ERROR_CAPTURE_IMPLICIT"


def test_fork_and_join_through_events(tmp_path):
    a, b = evrt.Stream(), evrt.Stream()
    log = []
    evrt.begin_capture(a, "relaxed")
    a.launch(log.append, "a1")
    b.wait_stream(a)  # fork: b joins the capture
    b.launch(log.append, "b1")
    a.wait_stream(b)  # join
    a.launch(log.append, "a2")
    g = evrt.end_capture(a)
    assert g.node_count == 3
    path = str(tmp_path / "g.dot")
    g.debug_dot_print(path)
    with open(path) as f:
        text = f.read()
    assert text.startswith("digraph") and text.count("->") >= 2
    x = g.instantiate()
    x.launch(a)
    x.launch(a)
    a.synchronize()
    assert log == ["a1", "b1", "a2"] * 2


def test_errors_of_replayed_callables_are_raised_by_synchronize():
    s = evrt.Stream()

    def boom():
        raise KeyError("replayed")

    evrt.begin_capture(s, "relaxed")
    s.launch(boom)
    x = evrt.end_capture(s).instantiate()
    x.launch(s)
    with pytest.raises(KeyError):
        evrt.synchronize()


def test_external_event_records_at_each_replay():
    s = evrt.cuda.Stream()
    start = evrt.cuda.Event(enable_timing=True, external=True)
    end = evrt.cuda.Event(enable_timing=True, external=True)
    g = evrt.cuda.CUDAGraph()
    with evrt.cuda.graph(g, stream=s):
        start.record()
        evrt.cuda.current_stream().launch(time.sleep, 0.02)
        end.record()
    for _ in range(2):
        g.replay()
        evrt.cuda.synchronize()
        assert end.query()
        assert start.elapsed_time(end) >= 15.0


# ------------------------------------------------- torch.cuda.graphs' API

def test_cuda_graph_context_manager_captures_and_replays():
    calls = []
    g = evrt.cuda.CUDAGraph()
    assert not evrt.cuda.is_current_stream_capturing()
    with evrt.cuda.graph(g):
        assert evrt.cuda.is_current_stream_capturing()
        s = evrt.cuda.current_stream()
        assert s == evrt.cuda.graph.default_capture_stream
        s.launch(calls.append, 1)
    assert not evrt.cuda.is_current_stream_capturing()
    assert calls == []
    g.replay()
    g.replay()
    evrt.cuda.synchronize()
    assert calls == [1, 1]
    assert isinstance(g.pool(), tuple)
    g.reset()
    with pytest.raises(RuntimeError):
        g.replay()
    # captured again into the same object
    with evrt.cuda.graph(g, pool=evrt.cuda.graph_pool_handle()):
        evrt.cuda.current_stream().launch(calls.append, 2)
    g.replay()
    evrt.cuda.synchronize()
    assert calls == [1, 1, 2]


def test_cuda_graph_rules():
    g = evrt.cuda.CUDAGraph()
    with pytest.raises(RuntimeError):
        g.replay()  # nothing captured
    with pytest.raises(RuntimeError):
        g.capture_begin()  # the current stream is the default stream
    with pytest.raises(RuntimeError):
        g.capture_begin(capture_error_mode="loose")
    with pytest.raises(RuntimeError):
        g.capture_end()
    s = evrt.cuda.Stream()
    with evrt.cuda.stream(s):
        g.capture_begin(capture_error_mode="relaxed")
        with pytest.raises(RuntimeError):
            g.capture_begin()  # a second capture of the same stream
        with pytest.warns(UserWarning, match="The CUDA Graph is empty"):
            g.capture_end()
    with pytest.raises(RuntimeError, match="already owns a captured graph"):
        g.capture_begin()  # holds a capture: reset() first


def test_cuda_graph_messages_are_torchs():
    g = evrt.cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="without a preceding successful"):
        g.replay()
    with pytest.raises(RuntimeError, match="must have been called before"):
        g.instantiate()
    with pytest.raises(RuntimeError,
                       match="must be captured on a non-default stream"):
        g.capture_begin()
    s = evrt.cuda.Stream()
    assert not s.is_capturing()
    with evrt.cuda.stream(s):
        g.capture_begin()
        assert s.is_capturing()
        assert not evrt.cuda.default_stream().is_capturing()
        s.launch(int, 1)
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # not empty: no warning
            g.capture_end()
    assert not s.is_capturing()
    with pytest.raises(RuntimeError, match="only when keep_graph=true"):
        g.instantiate()
    with pytest.raises(RuntimeError, match="unless CUDAGraph was initialized "
                       "with keep_graph=true"):
        g.raw_cuda_graph()
    assert g.raw_cuda_graph_exec() != 0
    k = evrt.cuda.CUDAGraph(keep_graph=True)
    with pytest.raises(RuntimeError, match="until capture_end"):
        k.raw_cuda_graph()
    with pytest.raises(RuntimeError, match="until instantiate"):
        k.raw_cuda_graph_exec()
    with evrt.cuda.stream(s):
        k.capture_begin()
        s.launch(int, 2)
        k.capture_end()
    k.instantiate()
    k.instantiate()  # again: allowed with keep_graph=True
    k.replay()
    s.synchronize()
    # an invalidated capture still counts as capturing until it ends
    e = evrt.cuda.Event()
    with evrt.cuda.stream(s):
        evrt.begin_capture(s, "relaxed")
        other = evrt.cuda.Stream()
        other.record_event(e)
        with pytest.raises(evrt.EvrtError):
            s.wait_event(e)  # recorded outside the capture: invalidates it
        assert evrt.capture_status(s)[0] == "invalidated"
        assert s.is_capturing()
        with pytest.raises(evrt.EvrtError):
            evrt.end_capture(s)
    assert not s.is_capturing()


def test_empty_cache_is_a_documented_no_op():
    assert evrt.cuda.empty_cache() is None
    assert evrt.xpu.empty_cache() is None


def test_an_exception_in_the_block_discards_the_capture():
    g = evrt.cuda.CUDAGraph()
    s = evrt.cuda.Stream()
    with pytest.raises(ZeroDivisionError):
        with evrt.cuda.graph(g, stream=s):
            s.launch(print, "never")
            1 / 0
    assert evrt.capture_status(s)[0] == "none"
    assert evrt.cuda.current_stream() != s
    with pytest.raises(RuntimeError):
        g.replay()


def test_keep_graph_debug_dump_and_raw_handles(tmp_path):
    g = evrt.cuda.CUDAGraph(keep_graph=True)
    s = evrt.cuda.Stream()
    calls = []
    with evrt.cuda.graph(g, stream=s, capture_error_mode="thread_local"):
        s.launch(calls.append, 7)
    assert g.raw_cuda_graph() != 0
    with pytest.raises(RuntimeError):
        g.raw_cuda_graph_exec()  # not instantiated yet
    g.replay()  # instantiates
    assert g.raw_cuda_graph_exec() != 0
    evrt.cuda.synchronize()
    assert calls == [7]
    path = str(tmp_path / "kept.dot")
    g.debug_dump(path)
    assert os.path.getsize(path) > 0
    d = evrt.cuda.CUDAGraph()
    d.enable_debug_mode()
    with evrt.cuda.graph(d, stream=s):
        s.launch(calls.append, 8)
    d.debug_dump(str(tmp_path / "debug.dot"))
    assert os.path.getsize(str(tmp_path / "debug.dot")) > 0
    n = evrt.cuda.CUDAGraph()
    with evrt.cuda.graph(n, stream=s):
        s.launch(calls.append, 9)
    with pytest.warns(UserWarning):
        n.debug_dump(str(tmp_path / "none.dot"))


def _rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def test_dropping_graphs_behind_a_busy_stream_stays_small():
    # Issue 23, item 4: each dropped graph's kept objects are released
    # through evrt_device_launch_host_func, which waits for every stream;
    # behind a busy stream (and with the GIL held by this loop) the first
    # design's call k queued k items, and 2,000 rounds took 1.2 GB (4,000:
    # 5 GB).  Now each costs one small item; the pending releases' own
    # Python objects are all that grows.
    busy = evrt.Stream()
    gate = threading.Event()
    busy.launch(gate.wait)
    s = evrt.Stream()
    try:
        r0 = _rss_kib()
        for i in range(1000):
            evrt.begin_capture(s, "relaxed")
            s.launch(len, [i])
            g = evrt.end_capture(s)
            x = g.instantiate()
            x.launch(s)
            x.destroy()
            g.destroy()
            del x, g
        grown = _rss_kib() - r0
    finally:
        gate.set()
    evrt.synchronize()
    # generous: ~2 KiB a round (the pending objects) now; ~300 MB before
    assert grown < 64 * 1024, f"RSS grew by {grown} KiB over 1,000 rounds"
