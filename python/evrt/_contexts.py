"""What evrt, evrt.cuda and evrt.xpu share besides their C functions: the
context managers of torch.cuda / torch.xpu (StreamContext, device,
_DeviceGuard, device_of) and _get_device_index, made for one module by
module_api()."""

from . import _evrt


class StreamContext:
    """Context manager that selects a given stream (torch's StreamContext).

    All the work queued in its block goes to ``stream``; its device becomes
    the current device for the block, and on exit the previous current
    stream of both devices and the previous device are restored.  ``None``
    makes it a no-op.  It nests and may be re-entered.
    """

    # set by each module's subclass: its current_stream and set_stream
    _current_stream = None
    _set_stream = None

    def __init__(self, stream):
        self.stream = stream
        self._saved = []

    def __enter__(self):
        cur = self.stream
        if cur is None:
            self._saved.append(None)
            return cur
        cls = type(self)
        src_prev = cls._current_stream()
        dst_prev = None
        if src_prev.device != cur.device:
            dst_prev = cls._current_stream(cur.device)
        self._saved.append((src_prev, dst_prev))
        cls._set_stream(cur)
        return cur

    def __exit__(self, exc_type, exc, tb):
        saved = self._saved.pop()
        if saved is None:
            return False
        src_prev, dst_prev = saved
        cls = type(self)
        if dst_prev is not None:
            cls._set_stream(dst_prev)
        cls._set_stream(src_prev)
        return False


class DeviceGuard:
    """Context manager that makes a device index current (torch's
    _DeviceGuard: the index is taken as is)."""

    _exchange_device = None  # the module's _exchange_device

    def __init__(self, index):
        self.idx = index
        self.prev_idx = -1

    def __enter__(self):
        self.prev_idx = type(self)._exchange_device(self.idx)
        return self

    def __exit__(self, exc_type, exc, tb):
        self.idx = type(self)._exchange_device(self.prev_idx)
        return False


class DeviceContext(DeviceGuard):
    """Context manager that changes the current device (torch.cuda.device).

    ``device`` is an index, a device string or a device object; ``None`` or
    a negative index makes it a no-op.
    """

    _get_device_index = None  # the module's _get_device_index

    def __init__(self, device):
        super().__init__(type(self)._get_device_index(device, optional=True))


def get_device_index(module_type, device_cls, device, optional=False,
                     allow_cpu=False):
    """torch.cuda._utils._get_device_index for a module of type
    ``module_type`` ('cuda', 'xpu' or 'evrt')."""
    if isinstance(device, bool):
        raise TypeError("a bool is not a device (got %r)" % (device,))
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        device = _evrt.device(device)
    if isinstance(device, _evrt.device):
        if allow_cpu:
            if device.type not in (module_type, "cpu"):
                raise ValueError("Expected a %s or cpu device, but got: %s"
                                 % (module_type, device))
        elif device.type != module_type:
            raise ValueError("Expected a%s %s device, but got: %s"
                             % ("n" if module_type[0] in "aeiou" else "",
                                module_type, device))
        if device.type == "cpu":
            return -1
        if device.index is not None:
            return device.index
        device = None
    if isinstance(device, device_cls):
        return device.idx
    if device is None:
        if optional:
            return _evrt._functions(module_type)["current_device"]()
        raise ValueError("Expected a torch.device with a specified index or "
                         "an integer, but got:%s" % (device,))
    raise TypeError("device must be an int, a str or a device, not %s"
                    % type(device).__name__)


def empty_cache():
    """Release the unoccupied cached device memory, as
    torch.cuda.empty_cache(): a no-op, since evrt's device modules keep no
    memory cache (the evrt torch device's allocator has its own,
    torch.evrt.empty_cache)."""


def module_api(module_name, type_name, functions):
    """The Python part of a torch.<type>-like module: _get_device_index,
    device, _DeviceGuard, device_of, StreamContext and stream, bound to
    ``functions`` (the module's C functions) and named as members of
    ``module_name``."""
    exchange = functions["_exchange_device"]

    def index_of(device, optional=False, allow_cpu=False):
        return get_device_index(type_name, device_cls, device, optional,
                                allow_cpu)

    class device(DeviceContext):
        _exchange_device = exchange
        _get_device_index = staticmethod(index_of)

    device_cls = device

    class _DeviceGuard(DeviceGuard):
        _exchange_device = exchange

    class device_of(device):
        def __init__(self, obj):
            dev = getattr(obj, "device", None)
            idx = dev.index if getattr(dev, "type", None) == type_name else -1
            super().__init__(-1 if idx is None else idx)

    class StreamContext_(StreamContext):
        _current_stream = functions["current_stream"]
        _set_stream = functions["set_stream"]

    def stream(stream):
        return StreamContext_(stream)

    an = "an" if type_name[0] in "aeiou" else "a"
    docs = {
        "_get_device_index": "torch.%s._utils._get_device_index: the index "
                             "of a device argument." % type_name,
        "device": "Context manager that changes the current device "
                  "(torch.%s.device).\n\nArgs:\n    device (device or int): "
                  "the device; None or a negative int: no-op." % type_name,
        "_DeviceGuard": "Context manager that makes a device index current "
                        "(torch.%s._DeviceGuard)." % type_name,
        "device_of": "Context manager that makes the device of ``obj`` "
                     "current (a no-op for an object not on %s %s device)."
                     % (an, type_name),
        "StreamContext": "Context manager that selects a given stream "
                         "(torch.%s.StreamContext): the stream's device "
                         "becomes current for the block, and the previous "
                         "streams of both devices and the device are "
                         "restored.\n\nArgs:\n    stream (Stream): the "
                         "stream; None makes it a no-op." % type_name,
        "stream": "``with %s.stream(s):`` runs the block with ``s`` as the "
                  "current stream (a StreamContext)." % module_name,
    }
    api = {"_get_device_index": index_of, "device": device,
           "_DeviceGuard": _DeviceGuard, "device_of": device_of,
           "StreamContext": StreamContext_, "stream": stream}
    for name, obj in api.items():
        obj.__name__ = obj.__qualname__ = name
        obj.__module__ = module_name
        obj.__doc__ = docs[name]
    return api
