"""evrt: streams and events with PyTorch's device Stream/Event API.

- ``evrt.Stream``, ``evrt.Event``, ``evrt.device`` and the module functions
  (``current_stream``, ``set_stream``, ``stream``, ``synchronize``, ...) are
  the equivalents of ``torch.Stream``, ``torch.Event``, ``torch.device`` and
  ``torch.cuda``'s functions, on evrt's own device type ("evrt:N").  The
  event constructor is device-first: ``Event(device=None, *,
  enable_timing=False, blocking=False, interprocess=False)``.
- ``evrt.cuda`` and ``evrt.xpu`` mirror ``torch.cuda`` and ``torch.xpu``
  (names, signatures, messages, reprs); ``evrt.accelerator`` mirrors
  ``torch.accelerator``.
- ``evrt.acl`` is the pyACL-style API over evrt's ACL layer.

One runtime per process: the package runs the shared libevrt.so.0, so the
handles (``Stream.handle``, ``Event.event_id``) are the ones C code and
``evrt.acl.rt`` use.  See docs/python.md.
"""

import atexit as _atexit
import contextlib as _contextlib

from . import _contexts, _evrt
from ._evrt import (  # noqa: F401  (re-exported)
    IPC_HANDLE_SIZE,
    Event,
    EvrtError,
    NotSupportedError,
    Stream,
    __version__,
    device,
    library_path,
    check_access,
    check_acquire,
    check_enabled,
    check_findings,
    check_release,
)

__all__ = [
    "Event", "EvrtError", "ExternalStream", "Graph", "GraphExec",
    "NotSupportedError", "Stream", "StreamContext", "accelerator", "acl",
    "begin_capture", "capture_status", "cuda", "current_device",
    "current_stream", "default_stream", "device", "device_count",
    "end_capture", "exchange_capture_mode", "get_stream_from_external",
    "init", "is_available", "is_initialized", "library_path",
    "rename_device_type", "set_device",
    "set_stream", "stream", "synchronize", "trace", "xpu", "check_access",
    "check_acquire", "check_enabled", "check_findings", "check_release",
]

_f = _evrt._functions("evrt")
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
_exchange_device = _f["_exchange_device"]
_reset_current_streams = _f["_reset_current_streams"]


def rename_device_type(name, display_name=None):
    """Rename evrt's device type ("evrt"), as
    ``torch.utils.rename_privateuse1_backend`` renames torch's PrivateUse1
    backend: device strings, reprs and messages then use ``name``.  Where
    torch's messages spell a backend otherwise ("Cannot re-initialize CUDA
    ..."), they use ``display_name`` (default: ``name``), e.g.
    ``rename_device_type("openreg", "OpenReg")``."""
    _evrt._rename_device_type(name, display_name)


class ExternalStream(Stream):
    """A stream made outside Python (by C code through libevrt, or by
    ``evrt.acl.rt``), by its handle; the object does not own it.

    Args:
        stream_ptr (int): the evrt_stream_t handle (0: the default stream).
        device (device or int, optional): the stream's device (checked).
    """

    __slots__ = ()

    def __new__(cls, stream_ptr, device=None, **kwargs):
        return super().__new__(cls, device, stream_ptr=stream_ptr, **kwargs)


# StreamContext and stream (evrt's own device context manager is evrt.device)
_api = _contexts.module_api("evrt", "evrt", _f)
StreamContext = _api["StreamContext"]
stream = _api["stream"]


@_contextlib.contextmanager
def trace(path):
    """Write a Chrome trace (Perfetto) of everything evrt does in the block.

    Raises NotSupportedError while the library is built without the trace
    writer.
    """
    _evrt._trace_start(path)
    try:
        yield path
    finally:
        _evrt._trace_stop()


def _exit_hook():
    # Launched callables need a live interpreter: let them finish first.
    if not _evrt._at_exit(10.0):
        import sys
        sys.stderr.write("evrt: launched callables still pending at exit "
                         "were skipped\n")


_atexit.register(_exit_hook)

from . import _gpu_trace  # noqa: E402  (torch's _gpu_trace callbacks)


def _activate_gpu_trace():
    """Turn the GPU trace callbacks on for the process (``evrt._gpu_trace``,
    ``evrt.cuda._gpu_trace``, ``evrt.xpu._gpu_trace``), as
    ``torch._C._activate_gpu_trace()`` does.  There is no way back; off,
    each traced call pays one test of a flag."""
    _evrt._activate_gpu_trace(_gpu_trace._fire)

from ._graphs import (  # noqa: E402,F401  (stream capture, docs/capture.md)
    Graph, GraphExec, begin_capture, capture_status, end_capture,
    exchange_capture_mode)

from . import accelerator, cuda, xpu  # noqa: E402,F401

try:  # evrt.acl needs the ACL layer (src/acl) in the build
    from . import acl  # noqa: E402,F401
except ImportError:
    __all__.remove("acl")
