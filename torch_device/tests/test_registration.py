"""Registration: the renamed backend, torch.evrt, autoload, the test-only
name switch."""
import pytest
import torch

from conftest import run_python


def test_device_and_tensor_methods():
    d = torch.device("evrt", 1)
    assert d.type == "evrt" and d.index == 1
    t = torch.ones(3).to("evrt")
    assert t.is_evrt and t.device == torch.device("evrt", 0)
    assert not torch.ones(1).is_evrt
    u = torch.ones(2).evrt(1)
    assert u.device == torch.device("evrt", 1)
    assert torch.equal(u.cpu(), torch.ones(2))


def test_torch_evrt_module():
    assert torch.evrt.is_available()
    assert torch.evrt.device_count() == 2
    assert torch.evrt.current_device() == 0
    torch.evrt.set_device(1)
    try:
        assert torch.evrt.current_device() == 1
        assert torch.ones(1, device="evrt").device.index == 1
    finally:
        torch.evrt.set_device(0)
    with torch.evrt.device(1):
        assert torch.evrt.current_device() == 1
    assert torch.evrt.current_device() == 0
    s = torch.evrt.Stream()
    assert isinstance(s, torch.Stream) and s.device == torch.device("evrt", 0)
    with torch.evrt.stream(s):
        assert torch.evrt.current_stream() == s
    assert torch.evrt.current_stream() == torch.evrt.default_stream()
    before = torch.evrt.memory_allocated()
    x = torch.empty(1000, device="evrt")
    assert torch.evrt.memory_allocated() >= before + 4000
    del x
    assert torch.evrt.memory_allocated() == before
    torch.evrt.synchronize()
    assert torch.accelerator.current_accelerator() == torch.device("evrt")
    assert torch.accelerator.device_count() == 2
    caps = torch.accelerator.get_device_capability("evrt:1")["supported_dtypes"]
    assert torch.float32 in caps and torch.complex64 in caps


def test_autoload_without_import():
    # torch's entry-point autoload (group torch.backends) registers evrt.
    r = run_python("import torch; x = torch.ones(2, device='evrt'); "
                   "print(torch.evrt.device_count(), x.is_evrt, (x + 1).cpu().tolist())",
                   EVRT_CPU_DEVICES="2")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["2", "True", "[2.0,", "2.0]"]
    r = run_python("import torch; print(hasattr(torch, 'evrt'))",
                   TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "False"


def test_other_name_switch():
    r = run_python("import torch, evrt_torch; x = torch.ones(2, device='openreg'); "
                   "print(x.is_openreg, torch.openreg.device_count(), x.device)",
                   EVRT_TORCH_BACKEND_NAME="openreg", EVRT_CPU_DEVICES="2")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["True", "2", "openreg:0"]
