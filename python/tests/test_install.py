"""The package installs offline with pip from the machine's setuptools, and
behaves at interpreter exit."""
import os
import shutil
import subprocess
import sys

import pytest

from conftest import run_python

HERE = os.path.dirname(os.path.abspath(__file__))
PKG = os.path.dirname(HERE)


def test_pip_install_offline(tmp_path):
    r = subprocess.run([sys.executable, "-m", "pip", "--version"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip("pip is not available for %s (install python3-pip)"
                    % sys.executable)
    # Build from a copy so that the checkout gets no build/ or egg-info.
    src = tmp_path / "src"
    shutil.copytree(os.path.dirname(PKG), src, ignore=shutil.ignore_patterns(
        "build*", ".git", "*.egg-info", "__pycache__", "*.so"))
    target = tmp_path / "site"
    env = dict(os.environ, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    r = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-build-isolation",
         "--no-deps", "--no-index", "--target", str(target),
         str(src / "python")], capture_output=True, text=True, env=env,
        timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    so = [f for f in os.listdir(target / "evrt") if f.startswith("_evrt")]
    assert so, os.listdir(target / "evrt")
    # Only the module init function is exported: the embedded library
    # cannot clash with a libevrt.so in the same process.
    nm = shutil.which("nm")
    if nm:
        syms = subprocess.run([nm, "-D", "--defined-only",
                               str(target / "evrt" / so[0])],
                              capture_output=True, text=True).stdout.split()
        assert "PyInit__evrt" in syms
        assert not [s for s in syms if s.startswith(("evrt_", "acl"))], syms
    code = ("import evrt; s = evrt.Stream(); e = evrt.Event(enable_timing=True);"
            "f = evrt.Event(enable_timing=True); e.record(s); s.delay(20);"
            "f.record(s); f.synchronize(); assert e.elapsed_time(f) >= 19;"
            "import evrt.acl as acl; print('ok', evrt.__file__)")
    r = run_python(code, env={"PYTHONPATH": str(target)})
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("ok " + str(target)), r.stdout


def test_pending_launches_run_before_exit():
    code = ("import evrt, sys\n"
            "s = evrt.Stream()\n"
            "s.delay(100)\n"
            "s.launch(lambda: print('ran', flush=True))\n")
    r = run_python(code)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ran"


def test_uncollected_launch_error_reported_at_exit():
    code = ("import evrt\n"
            "s = evrt.Stream()\n"
            "def failing_step():\n"
            "    raise RuntimeError('never synchronized')\n"
            "s.launch(failing_step)\n")
    r = run_python(code)
    assert r.returncode == 0, r.stderr
    assert "never synchronized" in r.stderr
    assert "failing_step" in r.stderr


def test_ctrl_c_interrupts_synchronize():
    import signal
    import time
    code = ("import evrt, sys\n"
            "s = evrt.Stream()\n"
            "s.delay(20000)\n"
            "e = s.record_event()\n"
            "print('waiting', flush=True)\n"
            "try:\n"
            "    e.synchronize()\n"
            "except KeyboardInterrupt:\n"
            "    print('interrupted', flush=True)\n")
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "waiting"
        time.sleep(0.2)
        t0 = time.monotonic()
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=10)
        took = time.monotonic() - t0
    finally:
        if p.poll() is None:
            p.kill()
    assert "interrupted" in out, err
    assert took < 5.0  # well before the 20 s delay ends
