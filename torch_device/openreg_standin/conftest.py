"""pytest plug-in for running PyTorch's OpenReg test files unchanged against
evrt (`-p conftest` with this folder on PYTHONPATH; docs/torch.md).

torch.testing._internal.common_utils imports numpy and expecttest, which
the torch environment does not have (PyPI gives it torch and pytest only),
so the three names those files take from it are stood in for here, before
they are collected: TestCase (unittest's, with tensor-aware assertEqual),
run_tests, skipIfTorchDynamo and skipIfWindows (no dynamo, not
Windows: no-op decorators)."""
import sys
import types
import unittest

import torch


class TestCase(unittest.TestCase):
    def assertEqual(self, first, second, msg=None):  # noqa: N802
        if isinstance(first, torch.Tensor) or isinstance(second, torch.Tensor):
            a = first if isinstance(first, torch.Tensor) else torch.tensor(first)
            b = second if isinstance(second, torch.Tensor) else torch.tensor(second)
            torch.testing.assert_close(a.cpu(), b.cpu(), msg=msg)
            return
        super().assertEqual(first, second, msg)


def skipIfTorchDynamo(*args, **kwargs):  # noqa: N802
    if len(args) == 1 and callable(args[0]) and not kwargs:
        return args[0]
    return lambda fn: fn


def skipIfWindows(*args, **kwargs):  # noqa: N802
    return skipIfTorchDynamo(*args, **kwargs)


def run_tests():
    unittest.main()


_shim = types.ModuleType("torch.testing._internal.common_utils")
_shim.TestCase = TestCase
_shim.run_tests = run_tests
_shim.skipIfTorchDynamo = skipIfTorchDynamo
_shim.skipIfWindows = skipIfWindows
sys.modules["torch.testing._internal.common_utils"] = _shim
