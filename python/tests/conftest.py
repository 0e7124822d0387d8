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


# --- evrt.acl tests (test_acl*.py): pyACL's set-up and result unpacking.
@pytest.fixture
def acl_device():
    """acl.init(), device 0 set for the test, reset after it."""
    acl = pytest.importorskip(
        "evrt.acl", reason="evrt built without the ACL layer (src/acl)")
    ret = acl.init()
    assert ret in (acl.ACL_SUCCESS, acl.ACL_ERROR_REPEAT_INITIALIZE)
    assert acl.rt.set_device(0) == acl.ACL_SUCCESS
    yield
    assert acl.rt.reset_device(0) == acl.ACL_SUCCESS


def acl_ok(result):
    """Unpack pyACL's (outputs..., ret), asserting ret == ACL_SUCCESS."""
    import evrt.acl as acl
    *out, ret = result
    assert ret == acl.ACL_SUCCESS, (ret, acl.get_recent_err_msg())
    return out[0] if len(out) == 1 else tuple(out)
