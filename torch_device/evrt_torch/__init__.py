"""evrt as a PyTorch device.

``import evrt_torch`` (or torch's own ``torch.backends`` entry-point
autoload) renames PrivateUse1 to ``evrt`` and registers ``torch.evrt``:
tensors on ``torch.device("evrt", i)`` whose ops run asynchronously, in
stream order, on evrt streams (docs/torch.md).

EVRT_TORCH_BACKEND_NAME (test-only) registers the device under another name
(e.g. ``openreg``), so that upstream tests written for that name run
unchanged.  A process has one PrivateUse1 slot: the name is fixed by the
first import.
"""
import atexit
import os

import torch

from . import _C  # noqa: F401  (registers the guard, hooks, allocator, kernels)
from . import device as _device

BACKEND_NAME = os.environ.get("EVRT_TORCH_BACKEND_NAME", "evrt") or "evrt"


def _register():
    if torch._C._get_privateuse1_backend_name() == BACKEND_NAME:
        return
    torch.utils.rename_privateuse1_backend(BACKEND_NAME)
    _device._set_name(BACKEND_NAME)
    torch._register_device_module(BACKEND_NAME, _device)
    torch.utils.generate_methods_for_privateuse1_backend(
        for_tensor=True, for_module=True, for_packed_sequence=True, for_storage=True
    )


_register()


@atexit.register
def _drain():
    # Let queued tasks finish before the interpreter tears torch down under
    # them (a failure left unreported is dropped here).
    for d in range(_C.device_count()):
        try:
            _C.synchronize(d)
        except RuntimeError:
            pass


def _autoload():
    """Entry point of torch's ``torch.backends`` group: importing this
    package has registered the device already."""


__all__ = ["BACKEND_NAME"]
