"""torch.cuda's stream and event API over evrt: replacing ``torch.cuda``
with ``evrt.cuda`` is the whole port of stream and event code.

Names, signatures, defaults, error types, messages and reprs are
torch.cuda's: ``Event(enable_timing=False, blocking=False,
interprocess=False, external=False)``, ``Stream(device=None, priority=0)``,
``current_stream``, ``set_stream``, ``stream``, ``device``, ...  The devices
are evrt's (``EVRT_CPU_DEVICES`` with the cpu backend), named ``cuda:N``.

Handles are evrt's: ``Stream.cuda_stream`` and ``Event.cuda_event`` are the
``evrt_stream_t`` / ``evrt_event_t`` the C API and ``evrt.acl.rt`` accept
(one runtime per process); a device's default stream has ``cuda_stream ==
0``, which the C API reads as the current device's default stream, as CUDA
reads its legacy stream 0.  See docs/python.md for the porting guide.
"""

from . import _contexts, _evrt

__all__ = [
    "Event", "ExternalStream", "Stream", "StreamContext", "current_device",
    "current_stream", "default_stream", "device", "device_count",
    "device_of", "get_stream_from_external", "ipc_collect", "is_available",
    "set_device", "set_stream", "stream", "synchronize",
]

_f = _evrt._functions("cuda")
current_stream = _f["current_stream"]
default_stream = _f["default_stream"]
set_stream = _f["set_stream"]
synchronize = _f["synchronize"]
device_count = _f["device_count"]
is_available = _f["is_available"]
current_device = _f["current_device"]
set_device = _f["set_device"]
get_stream_from_external = _f["get_stream_from_external"]
ipc_collect = _f["ipc_collect"]
_exchange_device = _f["_exchange_device"]
_maybe_exchange_device = _f["_exchange_device"]


# Stream and Event are C types (evrt._evrt._CudaStream / _CudaEvent,
# subtypes of evrt.Stream / evrt.Event): methods called on them take
# CPython's fast path for C methods, which a Python subclass would lose.
Stream = _evrt._CudaStream
Event = _evrt._CudaEvent


class ExternalStream(Stream):
    """Wrapper around a stream made outside Python (by C code, or by
    evrt.acl.rt), as torch.cuda.ExternalStream.

    It does not own the stream: the caller keeps it alive while in use.

    Args:
        stream_ptr (int): the evrt_stream_t handle (0: the default stream).
        device (device or int, optional): the stream's device (checked).
    """

    __slots__ = ()

    def __new__(cls, stream_ptr, device=None, **kwargs):
        return super().__new__(cls, device, stream_ptr=stream_ptr, **kwargs)


def _get_device_index(device, optional=False, allow_cpu=False):
    """torch.cuda._utils._get_device_index."""
    return _contexts.get_device_index("cuda", device_cls, device, optional,
                                      allow_cpu)


class device(_contexts.DeviceContext):
    """Context manager that changes the current device (torch.cuda.device).

    Args:
        device (device or int): the device; None or a negative int: no-op.
    """

    _exchange_device = _exchange_device
    _get_device_index = staticmethod(_get_device_index)


device_cls = device


class _DeviceGuard(_contexts.DeviceGuard):
    _exchange_device = _exchange_device


class device_of(device):
    """Context manager that makes the device of ``obj`` current (no-op for
    an object that is not on a cuda device)."""

    def __init__(self, obj):
        dev = getattr(obj, "device", None)
        idx = dev.index if getattr(dev, "type", None) == "cuda" else -1
        super().__init__(-1 if idx is None else idx)


class StreamContext(_contexts.StreamContext):
    """Context manager that selects a given stream (torch.cuda.StreamContext).

    Args:
        stream (Stream): the stream; None makes it a no-op.
    """

    _current_stream = current_stream
    _set_stream = set_stream


def stream(stream):
    """``with evrt.cuda.stream(s):`` runs the block with ``s`` current."""
    return StreamContext(stream)
