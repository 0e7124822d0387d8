"""Failures: a task's exception at the next synchronization, bad input,
the launch-blocking and sync-report switches."""
import pytest
import torch

from conftest import run_python


def test_task_exception_names_the_op():
    x = torch.arange(4.0, device="evrt")
    idx = torch.tensor([7], device="evrt")
    y = torch.index_select(x, 0, idx)  # the host returns; the task fails
    with pytest.raises(RuntimeError, match="index_select"):
        torch.evrt.synchronize()
    # reported once; the stream works on
    assert (x + 1).cpu().tolist() == [1.0, 2.0, 3.0, 4.0]
    del y


def test_bad_device_index():
    with pytest.raises(RuntimeError, match="The device index is out of range. It must be in \[0, 2\), but got 5"):
        torch.ones(2).to("evrt:5")
    with pytest.raises(RuntimeError, match="The device index is out of range"):
        torch.evrt.set_device(5)
    assert torch.evrt.current_device() == 0


def test_cross_device_op_without_copy():
    a = torch.ones(3, device="evrt:0")
    b = torch.ones(3, device="evrt:1")
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        a + b
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        a + torch.ones(3)
    assert (a + torch.tensor(2.0)).cpu().tolist() == [3.0] * 3  # CPU scalar
    assert (a + b.to("evrt:0")).cpu().tolist() == [2.0] * 3


def test_launch_blocking_raises_at_the_call():
    code = ("import torch, evrt_torch\n"
            "x = torch.arange(4.0, device='evrt')\n"
            "try:\n"
            "    torch.index_select(x, 0, torch.tensor([9], device='evrt'))\n"
            "    print('returned')\n"
            "except RuntimeError as e:\n"
            "    print('raised', 'index_select' in str(e))\n")
    r = run_python(code, EVRT_TORCH_LAUNCH_BLOCKING="1")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "raised True"
    r = run_python(code)
    assert r.stdout.strip() == "returned"


def test_sync_report():
    code = ("import torch, evrt_torch\n"
            "x = torch.tensor([0.0, 1.0, 2.0], device='evrt')\n"
            "print(torch.nonzero(x).cpu().tolist())\n"
            "print((x * 2).cpu().tolist())\n")
    r = run_python(code, EVRT_TORCH_SYNC_REPORT="1")
    assert r.returncode == 0, r.stderr
    assert "[[1], [2]]" in r.stdout
    assert "ran synchronously: aten::nonzero x1" in r.stderr
    assert "mul" not in r.stderr


def test_sync_counts_in_process():
    torch.evrt._reset_sync_counts()
    x = torch.tensor([1.0, -1.0], device="evrt")
    torch.masked_select(x, x > 0)
    (x * 3).sum()
    counts = torch.evrt._sync_counts()
    assert counts == {"aten::masked_select": 1}, counts


def test_forked_child_is_refused():
    code = ("import os, torch, evrt_torch\n"
            "torch.ones(1, device='evrt').cpu()\n"
            "pid = os.fork()\n"
            "if pid == 0:\n"
            "    try:\n"
            "        torch.evrt.init()\n"
            "        os._exit(3)\n"
            "    except RuntimeError as e:\n"
            "        os._exit(0 if 'Cannot re-initialize evrt in forked subprocess' in str(e) else 4)\n"
            "_, st = os.waitpid(pid, 0)\n"
            "print(os.waitstatus_to_exitcode(st))\n")
    r = run_python(code)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "0"


def test_ctrl_c_during_synchronize():
    # The stream is held by a gate that nothing opens; SIGINT arrives while
    # the main thread waits in torch.evrt.synchronize().
    code = ("import os, signal, threading, time, torch, evrt_torch\n"
            "g = evrt_torch._C._gate_new()\n"
            "s = torch.evrt.current_stream()\n"
            "evrt_torch._C._gate_wait(s.stream_id, s.device_index, g)\n"
            "def poke():\n"
            "    time.sleep(0.3)\n"
            "    global t_sig\n"
            "    t_sig = time.monotonic()\n"
            "    os.kill(os.getpid(), signal.SIGINT)\n"
            "threading.Thread(target=poke).start()\n"
            "try:\n"
            "    torch.evrt.synchronize()\n"
            "    print('returned')\n"
            "except KeyboardInterrupt:\n"
            "    print('interrupted', time.monotonic() - t_sig < 0.1)\n"
            "evrt_torch._C._gate_open(g)\n")
    r = run_python(code)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "interrupted True"
