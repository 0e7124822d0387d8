"""The context managers that evrt, evrt.cuda and evrt.xpu share: torch's
StreamContext (``with cuda.stream(s):``), the device context manager
(``with cuda.device(1):``) and _DeviceGuard, each bound to one module's
functions by a subclass."""


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


class DeviceContext:
    """Context manager that changes the current device (torch.cuda.device).

    ``device`` is an index, a device string or a device object; ``None`` or
    a negative index makes it a no-op.
    """

    _exchange_device = None  # the module's _exchange_device
    _get_device_index = None  # the module's _get_device_index

    def __init__(self, device):
        self.idx = type(self)._get_device_index(device, optional=True)
        self.prev_idx = -1

    def __enter__(self):
        self.prev_idx = type(self)._exchange_device(self.idx)
        return self

    def __exit__(self, exc_type, exc, tb):
        self.idx = type(self)._exchange_device(self.prev_idx)
        return False


class DeviceGuard:
    """Context manager that makes a device index current (torch's
    _DeviceGuard: the index is taken as is)."""

    _exchange_device = None

    def __init__(self, index):
        self.idx = index
        self.prev_idx = -1

    def __enter__(self):
        self.prev_idx = type(self)._exchange_device(self.idx)
        return self

    def __exit__(self, exc_type, exc, tb):
        self.idx = type(self)._exchange_device(self.prev_idx)
        return False


def get_device_index(module_type, device_cls, device, optional=False,
                     allow_cpu=False):
    """torch.cuda._utils._get_device_index for a module of type
    ``module_type`` ('cuda', 'xpu' or 'evrt')."""
    from . import _evrt
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
