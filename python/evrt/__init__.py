"""evrt: streams and events with PyTorch's device Event/Stream API.

``evrt.Event`` and ``evrt.Stream`` behave like ``torch.cuda.Event`` and
``torch.cuda.Stream`` (names, defaults, error types and messages); the
module functions mirror ``torch.cuda``'s.  Devices are plain ints.  The
pyACL-style API is ``from evrt import acl``.

The C extension ``evrt._evrt`` wraps the public evrt C API; this file adds
what depends on the per-thread current stream, the context managers and
pickling.  See docs/python.md.
"""

import atexit as _atexit
import contextlib as _contextlib
import threading as _threading

from . import _evrt
from ._evrt import (  # noqa: F401  (re-exported)
    EvrtError,
    NotSupportedError,
    current_device,
    device_count,
    set_device,
    IPC_HANDLE_SIZE,
    __version__,
    library_path,
    check_access,
    check_acquire,
    check_enabled,
    check_findings,
    check_release,
)

__all__ = [
    "Event", "Stream", "EvrtError", "NotSupportedError", "current_stream",
    "default_stream", "set_stream", "stream", "StreamContext", "synchronize",
    "device_count", "current_device", "set_device", "device", "trace",
    "check_access", "check_acquire", "check_enabled", "check_findings",
    "check_release",
]

# Per-thread current stream, per device ({device: Stream}); a device with no
# entry uses its default stream.  threading.local drops a thread's entries
# when the thread ends.
_tls = _threading.local()
_default_streams = {}
_default_lock = _threading.Lock()


def _current_streams():
    try:
        return _tls.streams
    except AttributeError:
        _tls.streams = {}
        return _tls.streams


class Stream(_evrt._StreamBase):
    """An in-order queue of work on a device (like ``torch.cuda.Stream``).

    ``Stream(device=None, priority=0)`` creates a new stream on ``device``
    (default: the current device).  Lower priority numbers run first; any
    negative value is "high".  Streams compare equal and hash by
    (device, stream_id).  ``with s:`` makes ``s`` the current stream (and its
    device the current device) and restores both on exit; it nests and is
    re-entrant.
    """

    def record_event(self, event=None):
        """Record ``event`` (a new ``Event()`` if None) here; return it."""
        if event is None:
            event = Event()
        event.record(self)
        return event

    def wait_event(self, event):
        """Make future work on this stream wait for ``event`` (no host wait)."""
        event.wait(self)

    def wait_stream(self, stream):
        """Make future work here wait for all work submitted to ``stream``."""
        self.wait_event(stream.record_event())

    def __enter__(self):
        # A per-object stack (torch's reentrance fix) so that ``with s, s:``
        # and nested use of one object restore exactly.
        stack = self.__dict__.setdefault("_ctx_stack", [])
        cur_dev = current_device()
        if cur_dev == self.device and current_stream(self.device) == self:
            stack.append(None)
            return self
        prev_stream = current_stream(self.device)
        stack.append((cur_dev, prev_stream))
        if cur_dev != self.device:
            set_device(self.device)
        _current_streams()[self.device] = self
        return self

    def __exit__(self, *exc):
        saved = self.__dict__["_ctx_stack"].pop()
        if saved is None:
            return False
        prev_dev, prev_stream = saved
        _set_current(prev_stream)
        if prev_dev != self.device:
            set_device(prev_dev)
        return False


class Event(_evrt._EventBase):
    """A marker in a stream (like ``torch.cuda.Event``).

    ``Event(device=None, *, enable_timing=False, blocking=False,
    interprocess=False)``.  The native event is created lazily at the first
    ``record()`` (on the stream's device) or ``ipc_handle()`` (on the
    current device, or ``device`` if given).  Before that ``query()`` is
    True, ``synchronize()`` and ``wait()`` do nothing and ``device`` is None
    (unless a device was given).
    """

    def record(self, stream=None):
        """Capture all work submitted so far to ``stream`` (default: current)."""
        if stream is None:
            stream = current_stream()
        super().record(stream)

    def wait(self, stream=None):
        """Make future work on ``stream`` (default: current) wait for this."""
        if stream is None:
            stream = current_stream()
        super().wait(stream)

    def __reduce__(self):
        # Like torch.multiprocessing: the handle is taken first, so that the
        # device of a never-recorded event is known.
        handle = self.ipc_handle()
        return (_rebuild_event, (self.device, handle))


def _rebuild_event(device, handle):
    return Event.from_ipc_handle(device, handle)


def _set_current(s):
    _current_streams()[s.device] = s


def default_stream(device=None):
    """The default stream of ``device`` (default: the current device)."""
    d = _evrt._device_index(device)
    s = _default_streams.get(d)
    if s is None:
        with _default_lock:
            s = _default_streams.get(d)
            if s is None:
                s = Stream._default(d)
                _default_streams[d] = s
    return s


def current_stream(device=None):
    """The calling thread's current stream of ``device`` (default: current)."""
    d = _evrt._device_index(device)
    s = _current_streams().get(d)
    return s if s is not None else default_stream(d)


def set_stream(stream):
    """Make ``stream`` current for this thread and its device current too."""
    if stream is None:
        return
    if not isinstance(stream, _evrt._StreamBase):
        raise TypeError("set_stream() expects an evrt.Stream, not %s"
                        % type(stream).__name__)
    if current_device() != stream.device:
        set_device(stream.device)
    _set_current(stream)


class StreamContext:
    """Context manager behind ``evrt.stream(s)`` (torch.cuda.StreamContext).

    Switches the current device to the stream's if needed and restores both
    the device and the previous current streams on exit.  ``None`` is a
    no-op.
    """

    def __init__(self, stream):
        self.stream = stream
        self._saved = []

    def __enter__(self):
        s = self.stream
        if s is None:
            self._saved.append(None)
            return s
        src_prev = current_stream()
        dst_prev = None
        if s.device != current_device():
            dst_prev = current_stream(s.device)
        self._saved.append((src_prev, dst_prev))
        set_stream(s)
        return s

    def __exit__(self, *exc):
        saved = self._saved.pop()
        if saved is None:
            return False
        src_prev, dst_prev = saved
        if dst_prev is not None:
            set_stream(dst_prev)
        set_stream(src_prev)
        return False


def stream(s):
    """``with evrt.stream(s):`` runs the block with ``s`` as current stream."""
    return StreamContext(s)


def synchronize(device=None):
    """Wait for every stream of ``device`` (default: current); GIL released.

    Raises the first pending exception of a callable launched on a stream of
    that device, if any.
    """
    _evrt.synchronize(device)


class device:
    """``with evrt.device(i):`` switches the current device for the block.

    None or a negative index is a no-op.
    """

    def __init__(self, index):
        if index is None or (isinstance(index, int) and index < 0):
            self.idx = -1
        else:
            self.idx = _evrt._device_index(index)
        self.prev_idx = -1

    def __enter__(self):
        if self.idx < 0:
            return self
        self.prev_idx = current_device()
        if self.prev_idx != self.idx:
            set_device(self.idx)
        return self

    def __exit__(self, *exc):
        if self.idx >= 0 and self.prev_idx != self.idx:
            set_device(self.prev_idx)
        return False


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
