"""torch.xpu's stream and event API over evrt: replacing ``torch.xpu``
with ``evrt.xpu`` is the whole port of stream and event code.

Names, signatures, defaults, error types, messages and reprs are
torch.xpu's: ``Event(enable_timing=False)`` (plus ``blocking`` and
``interprocess``, which torch.xpu is adding), ``Stream(device=None,
priority=0)``, ``current_stream``, ``set_stream``, ``stream``, ``device``,
...  The devices are evrt's, named ``xpu:N``.

Handles are evrt's: ``Stream.sycl_queue`` and ``Event.sycl_event`` are the
``evrt_stream_t`` / ``evrt_event_t`` the C API and ``evrt.acl.rt`` accept
(one runtime per process).  See docs/python.md for the porting guide.
"""

from . import _contexts, _evrt

__all__ = [
    "Event", "Stream", "StreamContext", "current_device",
    "current_stream", "default_stream", "device", "device_count",
    "device_of", "empty_cache", "init", "is_available", "is_initialized",
    "set_device", "set_stream", "stream", "synchronize",
]

_f = _evrt._functions("xpu")
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
_exchange_device = _f["_exchange_device"]
_maybe_exchange_device = _f["_exchange_device"]


# Stream and Event are C types (evrt._evrt._XpuStream / _XpuEvent,
# subtypes of evrt.Stream / evrt.Event): methods called on them take
# CPython's fast path for C methods, which a Python subclass would lose.
Stream = _evrt._XpuStream
Event = _evrt._XpuEvent


# empty_cache: a documented no-op (no memory cache here)
empty_cache = _contexts.empty_cache

# _get_device_index, device, _DeviceGuard, device_of, StreamContext, stream
globals().update(_contexts.module_api("evrt.xpu", "xpu", _f))

# torch.xpu._gpu_trace (python/evrt/_gpu_trace.py); also importable as
# evrt.xpu._gpu_trace.
from ._gpu_trace import _xpu_module as _gpu_trace  # noqa: E402
