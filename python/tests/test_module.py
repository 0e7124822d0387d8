"""Module functions: devices, current streams (per thread), context managers."""
import threading

import pytest

import evrt
from conftest import run_python


def test_device_count_follows_environment():
    r = run_python("import evrt; print(evrt.device_count())",
                   env={"EVRT_CPU_DEVICES": "3"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "3"
    r = run_python("import evrt; print(evrt.device_count())",
                   env={"EVRT_CPU_DEVICES": None})
    assert r.stdout.strip() == "1", r.stderr


def test_set_device_and_device_context(two_devices):
    assert evrt.current_device() == 0
    evrt.set_device(1)
    assert evrt.current_device() == 1
    evrt.set_device(-1)  # negative: no-op, as torch
    assert evrt.current_device() == 1
    evrt.set_device(0)
    with evrt.device(1):
        assert evrt.current_device() == 1
        with evrt.device(0):
            assert evrt.current_device() == 0
        assert evrt.current_device() == 1
    assert evrt.current_device() == 0
    with evrt.device(None):
        assert evrt.current_device() == 0
    with pytest.raises(RuntimeError, match="The device index is out of range"):
        evrt.set_device(evrt.device_count())


def test_current_and_default_stream(two_devices):
    d0 = evrt.default_stream()
    assert d0.is_default and d0.device == evrt.device("evrt:0")
    assert evrt.current_stream() == d0
    assert evrt.current_stream(1) == evrt.default_stream(1)
    assert evrt.current_stream(1).device.index == 1
    with pytest.raises(ValueError, match="Expected an evrt device, but got: cpu"):
        evrt.current_stream("cpu")
    with pytest.raises(ValueError, match="Expected an evrt device"):
        evrt.default_stream("cpu")
    with pytest.raises(ValueError, match="Expected an evrt device"):
        evrt.synchronize("cpu")
    with pytest.raises(RuntimeError, match="The device index is out of range"):
        evrt.current_stream(evrt.device_count())


def test_set_stream_also_sets_device(two_devices):
    s1 = evrt.Stream(1)
    evrt.set_stream(s1)
    assert evrt.current_device() == 1
    assert evrt.current_stream() == s1
    assert evrt.current_stream(0) == evrt.default_stream(0)
    evrt.set_stream(None)  # no-op
    assert evrt.current_stream() == s1
    with pytest.raises(TypeError):
        evrt.set_stream(42)


def test_stream_context_manager(two_devices):
    s0, s1 = evrt.Stream(0), evrt.Stream(1)
    with s0 as got:
        assert got is s0
        assert evrt.current_stream() == s0
        with s1:
            assert evrt.current_device() == 1
            assert evrt.current_stream() == s1
            assert evrt.current_stream(0) == s0
        assert evrt.current_device() == 0
        assert evrt.current_stream() == s0
        # the previous current stream of device 1 is restored too
        assert evrt.current_stream(1) == evrt.default_stream(1)
    assert evrt.current_stream() == evrt.default_stream(0)


def test_stream_context_manager_reentrant():
    s = evrt.Stream()
    with s, s:
        assert evrt.current_stream() == s
        with s:
            assert evrt.current_stream() == s
        assert evrt.current_stream() == s
    assert evrt.current_stream() == evrt.default_stream()


def test_stream_context_restores_on_exception():
    s = evrt.Stream()
    with pytest.raises(KeyError):
        with s:
            raise KeyError
    assert evrt.current_stream() == evrt.default_stream()


def test_evrt_stream_context_switches_and_restores(two_devices):
    s0, s1 = evrt.Stream(0), evrt.Stream(1)
    other1 = evrt.Stream(1)
    evrt.set_stream(other1)  # device 1's current stream ...
    evrt.set_device(0)       # ... then back on device 0
    with evrt.stream(s0):
        assert evrt.current_stream() == s0
        with evrt.stream(s1):
            assert evrt.current_device() == 1
            assert evrt.current_stream() == s1
        assert evrt.current_device() == 0
        assert evrt.current_stream() == s0
    assert evrt.current_stream() == evrt.default_stream(0)
    assert evrt.current_stream(1) == other1  # restored, not the default
    with evrt.stream(None):
        assert evrt.current_stream() == evrt.default_stream(0)


def test_current_stream_is_per_thread(two_devices):
    s = evrt.Stream()
    evrt.set_stream(s)
    seen = {}
    ready = threading.Barrier(2)

    def worker():
        seen["initial"] = evrt.current_stream()
        seen["device"] = evrt.current_device()
        mine = evrt.Stream(1)
        evrt.set_stream(mine)
        seen["mine"] = mine
        seen["after"] = evrt.current_stream()
        ready.wait()
        ready.wait()

    t = threading.Thread(target=worker)
    t.start()
    ready.wait()
    # The other thread's choices did not leak into this one, nor ours there.
    assert seen["initial"] == evrt.default_stream(0)
    assert seen["device"] == 0
    assert seen["after"] == seen["mine"]
    assert evrt.current_stream() == s
    assert evrt.current_device() == 0
    ready.wait()
    t.join()


def test_synchronize_device(two_devices):
    a, b = evrt.Stream(1), evrt.Stream(1)
    a.delay(60)
    b.delay(90)
    c = evrt.Stream(0)
    c.delay(400)
    evrt.synchronize(1)
    assert a.query() and b.query()
    assert not c.query()  # device 0 was not waited for
    assert evrt.current_device() == 0
    evrt.synchronize()
    assert c.query()


def test_error_codes_exposed():
    assert evrt._evrt.EVRT_SUCCESS == 0
    name, msg = evrt._evrt.strerror(evrt._evrt.EVRT_ERROR_INVALID_HANDLE)
    assert name == "EVRT_ERROR_INVALID_HANDLE" and msg
    assert issubclass(evrt.EvrtError, RuntimeError)
    assert issubclass(evrt.NotSupportedError, NotImplementedError)


def test_init_and_is_initialized_as_torch():
    """torch.cuda.init / is_initialized (and torch.xpu's, and a PrivateUse1
    backend's): asking does not initialize; a child forked after
    initialization is told to use spawn, in torch's words."""
    from conftest import run_python
    r = run_python(
        "import os, evrt, evrt.cuda as c, evrt.xpu as x\n"
        "print(evrt.is_initialized(), c.is_initialized(), x.is_initialized())\n"
        "c.init()\n"
        "print(evrt.is_initialized(), c.is_initialized(), x.is_initialized())\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    out = [str(c.is_initialized())]\n"
        "    for m in (c, x, evrt):\n"
        "        try:\n"
        "            m.init()\n"
        "        except RuntimeError as e:\n"
        "            out.append(str(e))\n"
        "    print('|'.join(out), flush=True)\n"
        "    os._exit(0)\n"
        "os.waitpid(pid, 0)\n")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "False False False"
    assert lines[1] == "True True True"
    child = lines[2].split("|")
    assert child[0] == "False"
    for name, msg in zip(("CUDA", "XPU", "evrt"), child[1:]):
        assert msg == ("Cannot re-initialize %s in forked subprocess. To use "
                       "%s with multiprocessing, you must use the 'spawn' "
                       "start method" % (name, name))
    assert len(child) == 4
