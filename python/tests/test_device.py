"""evrt.device: torch.device's equivalent, accepted wherever a device index
is; a bool is never a device."""
import pickle
import re

import pytest

import evrt
import evrt.cuda as cuda


def test_construction_and_round_trip():
    d = evrt.device("evrt:1")
    assert (d.type, d.index) == ("evrt", 1)
    assert str(d) == "evrt:1" and repr(d) == "device(type='evrt', index=1)"
    assert evrt.device(str(d)) == d
    assert evrt.device("cuda", 1) == evrt.device("cuda:1")
    assert evrt.device(1) == d  # the current accelerator's type
    c = evrt.device("cuda")
    assert c.index is None and str(c) == "cuda"
    assert repr(c) == "device(type='cuda')"
    assert evrt.device(d) is d
    assert pickle.loads(pickle.dumps(d)) == d
    assert len({evrt.device("xpu:0"), evrt.device("xpu", 0),
                evrt.device("xpu:1")}) == 2
    assert evrt.device("cpu") != evrt.device("evrt")


def test_errors_are_torchs():
    with pytest.raises(RuntimeError, match="Invalid device string: 'cuda0'"):
        evrt.device("cuda0")
    with pytest.raises(RuntimeError, match="Invalid device string"):
        evrt.device("cuda:x")
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda, xpu"):
        evrt.device("tpu:0")
    with pytest.raises(RuntimeError, match="must not be negative"):
        evrt.device(-1)
    with pytest.raises(RuntimeError, match="must not include an index"):
        evrt.device("cuda:1", 1)
    with pytest.raises(TypeError):
        evrt.device(True)


def test_accepted_wherever_an_int_is(two_devices):
    d1 = evrt.device("evrt:1")
    evrt.set_device(d1)
    assert evrt.current_device() == 1
    evrt.set_device(evrt.device("evrt:0"))
    assert evrt.Stream(d1).device_index == 1
    assert evrt.current_stream(d1).device_index == 1
    assert evrt.default_stream("evrt:1").device_index == 1
    evrt.synchronize(d1)
    cuda.synchronize(evrt.device("cuda:1"))
    assert cuda.Stream(evrt.device("cuda:1")).device == evrt.device("cuda:1")
    assert cuda.current_stream("cuda:1").device.index == 1
    with d1:  # evrt's own use: the device for the block
        assert evrt.current_device() == 1
    assert evrt.current_device() == 0


def test_a_bool_is_never_a_device():
    for call in (lambda: evrt.Event(True), lambda: evrt.Stream(True),
                 lambda: evrt.set_device(True), lambda: evrt.synchronize(False),
                 lambda: evrt.current_stream(True),
                 lambda: cuda.current_stream(True),
                 lambda: cuda.Stream(True)):
        with pytest.raises(TypeError, match="bool is not a device"):
            call()


def test_rename_device_type():
    code = ("import evrt; evrt.rename_device_type('openreg');"
            "evrt.accelerator.use('openreg');"
            "s = evrt.Stream('openreg:0'); print(s.device, repr(s));"
            "print(evrt.accelerator.current_accelerator())")
    from conftest import run_python
    r = run_python(code)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[0].startswith(
        "openreg:0 torch.Stream device_type=openreg, device_index=0")
    assert r.stdout.split("\n")[1] == "openreg"
    with pytest.raises(ValueError):
        evrt.rename_device_type("cuda")


def test_rename_device_type_display_name():
    """A display name for torch's messages (OpenReg's fork error says
    "OpenReg"); the device string stays the name; bad input changes nothing."""
    from conftest import run_python
    r = run_python(
        "import os, evrt\n"
        "for bad in (('openreg', ''), ('openreg', 'Open Reg'), ('openreg', 3),"
        " ('cuda', 'X')):\n"
        "    try:\n"
        "        evrt.rename_device_type(*bad)\n"
        "    except (ValueError, TypeError) as e:\n"
        "        print(type(e).__name__)\n"
        "print(evrt.Stream().device)\n"
        "evrt.rename_device_type('openreg', 'OpenReg')\n"
        "print(evrt.Stream().device)\n"
        "evrt.init()\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    try:\n"
        "        evrt.init()\n"
        "    except RuntimeError as e:\n"
        "        print(e, flush=True)\n"
        "    os._exit(0)\n"
        "os.waitpid(pid, 0)\n")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[:4] == ["ValueError", "ValueError", "TypeError", "ValueError"]
    assert lines[4] == "evrt:0"
    assert lines[5] == "openreg:0"
    assert lines[6] == ("Cannot re-initialize OpenReg in forked subprocess. "
                        "To use OpenReg with multiprocessing, you must use "
                        "the 'spawn' start method")


def test_out_of_range_wording_per_type():
    """Each type says it as its torch backend does: torch.cuda's words for
    cuda; torch.xpu's for xpu, which are also OpenReg's (torch's reference
    PrivateUse1 backend) and so evrt's own type's, renamed or not."""
    import evrt.accelerator
    import evrt.xpu
    n = evrt.device_count()
    with pytest.raises(RuntimeError, match=re.escape(
            "Device index value %d is out of index range [0, %d)." % (n, n))):
        cuda.set_device(n)
    other = re.escape("The device index is out of range. It must be in "
                      "[0, %d), but got %d." % (n, n))
    for call in (lambda: evrt.set_device(n), lambda: evrt.xpu.set_device(n),
                 lambda: evrt.accelerator.set_device_index(n),
                 lambda: evrt.Stream(n)):
        with pytest.raises(RuntimeError, match=other):
            call()
    from conftest import run_python
    r = run_python("import evrt, evrt.accelerator as a\n"
                   "evrt.rename_device_type('openreg'); a.use('openreg')\n"
                   "try:\n    a.set_device_index(a.device_count())\n"
                   "except RuntimeError as e:\n    print(e)\n")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("The device index is out of range.")
