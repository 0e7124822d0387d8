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
    "CUDAGraph", "Event", "ExternalStream", "Stream", "StreamContext",
    "current_device", "graph", "graph_pool_handle",
    "is_current_stream_capturing",
    "current_stream", "default_stream", "device", "device_count",
    "device_of", "empty_cache", "get_stream_from_external", "init", "ipc_collect",
    "is_available", "is_initialized",
    "set_device", "set_stream", "stream", "synchronize",
]

_f = _evrt._functions("cuda")
current_stream = _f["current_stream"]
default_stream = _f["default_stream"]
set_stream = _f["set_stream"]
synchronize = _f["synchronize"]
device_count = _f["device_count"]
is_available = _f["is_available"]
init = _f["init"]
is_initialized = _f["is_initialized"]
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


# empty_cache: a documented no-op (no memory cache here)
empty_cache = _contexts.empty_cache

# _get_device_index, device, _DeviceGuard, device_of, StreamContext, stream
globals().update(_contexts.module_api("evrt.cuda", "cuda", _f))

# torch.cuda._gpu_trace (python/evrt/_gpu_trace.py); also importable as
# evrt.cuda._gpu_trace.
from ._gpu_trace import _cuda_module as _gpu_trace  # noqa: E402


# torch.cuda.graphs (python/evrt/_graphs.py).
from . import _graphs  # noqa: E402

graph_pool_handle = _graphs.graph_pool_handle
CUDAGraph, graph, is_current_stream_capturing = _graphs.make_torch_api(
    dict(_f, Stream=Stream), stream, "CUDAGraph", __name__)
