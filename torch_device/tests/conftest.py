"""pytest setup of the evrt torch tests: two evrt devices, the device loaded,
and a skipped or expected-failure test fails the run (in CI a torch test
that does not run is a failure)."""
import os
import sys
import time
import warnings

os.environ.setdefault("EVRT_CPU_DEVICES", "2")
warnings.filterwarnings("ignore", message="Failed to initialize NumPy")

import pytest  # noqa: E402
import torch  # noqa: E402

import evrt_torch  # noqa: E402,F401

HERE = os.path.dirname(os.path.abspath(__file__))
PKG = os.path.dirname(HERE)


class Gate:
    """Holds a stream at a point of its work until opened (evrt's value
    wait; the stand-in for a long kernel)."""

    def __init__(self, stream=None):
        self.id = evrt_torch._C._gate_new()
        self.opened = False
        if stream is not None:
            self.hold(stream)

    def hold(self, stream):
        evrt_torch._C._gate_wait(stream.stream_id, stream.device_index, self.id)
        return self

    def open(self):
        if not self.opened:
            self.opened = True
            evrt_torch._C._gate_open(self.id)


@pytest.fixture
def gate():
    gates = []

    def make(stream=None):
        g = Gate(stream)
        gates.append(g)
        return g

    yield make
    for g in gates:  # never leave a stream parked for the next test
        g.open()
    torch.evrt.synchronize(0)
    torch.evrt.synchronize(1)


def wait_until(pred, timeout=10.0):
    """Poll pred (generous timeout; order, not timing, is asserted)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.001)
    return pred()


def run_python(code, **env):
    """Run code in a fresh interpreter of this venv (with the package on
    its path), returning the CompletedProcess."""
    import subprocess

    e = dict(os.environ)
    e["PYTHONPATH"] = PKG + os.pathsep + e.get("PYTHONPATH", "")
    e.update(env)
    return subprocess.run([sys.executable, "-W", "ignore", "-c", code], env=e,
                          capture_output=True, text=True, timeout=120)


def pytest_sessionfinish(session, exitstatus):
    tr = session.config.pluginmanager.get_plugin("terminalreporter")
    if tr is None:
        return
    bad = [r.nodeid for key in ("skipped", "xfailed", "xpassed")
           for r in tr.stats.get(key, [])]
    if bad:
        sys.stderr.write("evrt torch tests: %d test(s) did not run as tests: %s\n"
                         % (len(bad), ", ".join(bad)))
        session.exitstatus = 1
