"""torch.accelerator's equivalent: the device-type-generic API of the
current accelerator.

The current accelerator is evrt's own device type, ``evrt.device("evrt")``,
unless :func:`use` chose ``"cuda"`` or ``"xpu"`` (then generic streams and
events made without a device, ``evrt.Stream()``, are of that type, and the
messages are torch.cuda's or torch.xpu's): a program ported from torch
whose generic objects must compare equal to its ``torch.cuda`` ones calls
``evrt.accelerator.use("cuda")`` once.  Device arguments must be of the
current accelerator's type ("cpu doesn't match the current accelerator
evrt.").
"""

import warnings as _warnings

from . import _evrt

__all__ = [
    "current_accelerator", "current_device_idx", "current_device_index",
    "current_stream", "device_count", "device_index", "is_available",
    "set_device_idx", "set_device_index", "set_stream", "synchronize", "use",
]

_f = _evrt._functions("evrt", True)
device_count = _f["device_count"]
is_available = _f["is_available"]
current_device_index = _f["current_device"]
_exchange_device = _f["_exchange_device"]
# current_stream(device=None, /), synchronize(device=None, /),
# set_device_index(device, /): the C functions themselves (no Python frame)
current_stream = _f["current_stream"]
synchronize = _f["synchronize"]
set_stream = _f["set_stream"]
set_device_index = _f["set_device"]


def use(device_type):
    """Make ``device_type`` ('evrt', 'cuda' or 'xpu') the current
    accelerator of the process (evrt's equivalent of which accelerator a
    torch build has)."""
    _evrt._use_accelerator(device_type)


def current_accelerator(check_available=False):
    """The device of the current accelerator (without an index), or None if
    ``check_available`` and no device is available."""
    if check_available and not is_available():
        return None
    return _evrt.device(_evrt._accelerator_type())


def current_device_idx():
    """(Deprecated) current_device_index()."""
    _warnings.warn("Use `current_device_index` instead.", FutureWarning,
                   stacklevel=2)
    return current_device_index()


def set_device_idx(device, /):
    """(Deprecated) set_device_index()."""
    _warnings.warn("Use `set_device_index` instead.", FutureWarning,
                   stacklevel=2)
    set_device_index(device)


class device_index:
    """Context manager that makes a device index current for its block and
    restores the previous one on exit; None: no change.

    Args:
        device (int or None): the device index.
    """

    def __init__(self, device, /):
        self.idx = device
        self.prev_idx = -1

    def __enter__(self):
        if self.idx is not None:
            self.prev_idx = _exchange_device(self.idx)

    def __exit__(self, *exc_info):
        if self.idx is not None:
            _exchange_device(self.prev_idx)
        return False
