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


BUILD = os.environ.get("EVRT_TEST_BUILD_DIR")


def readelf_dynamic(path):
    tool = shutil.which("readelf")
    if not tool:
        pytest.skip("readelf is missing (binutils)")
    return subprocess.run([tool, "-d", str(path)], capture_output=True,
                          text=True, check=True).stdout


def test_pip_installed_package_uses_its_bundled_libevrt():
    """What the CMake build pip-installed (offline, no build isolation, as
    a user does): libevrt.so.0 and libascendcl.so inside the package, the
    extension linked against them and exporting only its init function."""
    if not BUILD or not os.path.isdir(os.path.join(BUILD, "python", "site")):
        pytest.skip("needs the CMake build's pip install (EVRT_TEST_BUILD_DIR)")
    pkg = os.path.join(BUILD, "python", "site", "evrt")
    files = os.listdir(pkg)
    assert "libevrt.so.0" in files and "py.typed" in files, files
    so = [f for f in files if f.startswith("_evrt") and f.endswith(".so")]
    assert len(so) == 1, files
    assert "_evrt.pyi" in files and "cuda.pyi" in files
    dyn = readelf_dynamic(os.path.join(pkg, so[0]))
    assert "[libevrt.so.0]" in dyn and "[$ORIGIN]" in dyn, dyn
    assert "(SONAME)" in readelf_dynamic(os.path.join(pkg, "libevrt.so.0"))
    if "libascendcl.so" in files:
        assert "[libascendcl.so]" in dyn, dyn
    nm = shutil.which("nm")
    if nm:
        syms = subprocess.run([nm, "-D", "--defined-only",
                               os.path.join(pkg, so[0])],
                              capture_output=True, text=True).stdout.split()
        assert "PyInit__evrt" in syms
        assert not [s for s in syms if s.startswith(("evrt_", "acl"))], syms
    r = run_python("import evrt; print(evrt.library_path())",
                   env={"PYTHONPATH": os.path.dirname(pkg)})
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == os.path.join(pkg, "libevrt.so.0")


def test_pip_install_against_an_installed_libevrt(tmp_path):
    """EVRT_LIBDIR: link the libraries of an installed evrt (here the CMake
    build's), bundle nothing."""
    r = subprocess.run([sys.executable, "-m", "pip", "--version"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip("pip is not available for %s (install python3-pip)"
                    % sys.executable)
    if not BUILD or not os.path.exists(os.path.join(BUILD, "libevrt.so")):
        pytest.skip("needs a CMake build's libevrt.so (EVRT_TEST_BUILD_DIR)")
    libdirs = [BUILD, os.path.join(BUILD, "src", "acl")]
    # Only the package and the headers: no evrt sources to build from.
    src = tmp_path / "src"
    root = os.path.dirname(PKG)
    shutil.copytree(PKG, src / "python", ignore=shutil.ignore_patterns(
        "build*", "*.egg-info", "__pycache__", "*.so"))
    shutil.copytree(os.path.join(root, "include"), src / "include")
    target = tmp_path / "site"
    env = dict(os.environ, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1",
               PIP_ROOT_USER_ACTION="ignore",
               EVRT_LIBDIR=os.pathsep.join(libdirs))
    r = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-build-isolation",
         "--no-deps", "--no-index", "--target", str(target),
         str(src / "python")], capture_output=True, text=True, env=env,
        timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    files = os.listdir(target / "evrt")
    assert not [f for f in files if f.startswith("lib")], files
    so = [f for f in files if f.startswith("_evrt") and f.endswith(".so")][0]
    dyn = readelf_dynamic(target / "evrt" / so)
    assert "[libevrt.so.0]" in dyn and BUILD in dyn, dyn
    code = ("import evrt; s = evrt.Stream(); e = evrt.Event(enable_timing=True);"
            "f = evrt.Event(enable_timing=True); e.record(s); s.delay(20);"
            "f.record(s); f.synchronize(); assert e.elapsed_time(f) >= 19;"
            "import evrt.acl as acl; print(evrt.library_path())")
    r = run_python(code, env={"PYTHONPATH": str(target)})
    assert r.returncode == 0, r.stderr
    assert os.path.dirname(r.stdout.strip()) == BUILD, r.stdout


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


def test_forked_child_with_pending_launches_exits_at_once():
    # The child has none of the parent's worker threads, so the launches
    # pending at the fork never run there: its exit must not wait for them
    # (it waited the exit hook's whole 10 s).
    code = ("import evrt, os, sys, threading, time\n"
            "gate = threading.Event()\n"
            "s = evrt.Stream()\n"
            "s.launch(gate.wait)\n"
            "s.launch(lambda: print('parent launch ran', flush=True))\n"
            "pid = os.fork()\n"
            "if pid == 0:\n"
            "    try:\n"
            "        evrt.Stream()\n"
            "    except evrt.EvrtError as e:\n"
            "        print('child:', e.name, flush=True)\n"
            "    sys.exit(0)\n"
            "t0 = time.monotonic()\n"
            "_, status = os.waitpid(pid, 0)\n"
            "print('child exited %d after %.1f s' % (status, time.monotonic() - t0),"
            " flush=True)\n"
            "gate.set()\n")
    r = run_python(code)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert "child: EVRT_ERROR_FORKED" in lines, r.stdout
    exited = [ln for ln in lines if ln.startswith("child exited")]
    assert exited and exited[0].split()[2] == "0", r.stdout
    assert float(exited[0].split()[4]) < 5.0, r.stdout
    # the parent's own launches still run before its exit
    assert lines[-1] == "parent launch ran", r.stdout
    assert "skipped" not in r.stderr, r.stderr
