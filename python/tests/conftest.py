"""Shared set-up of the evrt Python tests.

Two virtual devices, so that the multi-device rules are testable: the cpu
backend reads EVRT_CPU_DEVICES once, at the first evrt call, so it is set
here, before anything imports evrt.
"""
import os
import sys

os.environ.setdefault("EVRT_CPU_DEVICES", "2")

import pytest  # noqa: E402

import evrt  # noqa: E402


@pytest.fixture(autouse=True)
def _fresh_thread_state():
    """Each test starts on device 0 with default current streams."""
    evrt.set_device(0)
    evrt._reset_current_streams()
    yield
    evrt.set_device(0)
    evrt._reset_current_streams()


@pytest.fixture
def two_devices():
    if evrt.device_count() < 2:
        pytest.skip("needs EVRT_CPU_DEVICES>=2 (got %d device)"
                    % evrt.device_count())


def run_python(code, env=None, timeout=60):
    """Run code in a fresh interpreter (the one running the tests)."""
    import subprocess
    e = dict(os.environ)
    if env:
        for k, v in env.items():
            if v is None:
                e.pop(k, None)
            else:
                e[k] = v
    return subprocess.run([sys.executable, "-c", code], env=e,
                          capture_output=True, text=True, timeout=timeout)
