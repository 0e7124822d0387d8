"""torch.evrt: the device module (torch.cuda's shape, on evrt streams)."""
import contextlib

import torch

from . import _C

_name = "evrt"


def _set_name(name):
    global _name
    _name = name


def _index(device, optional=True):
    """A device index from an int, a string or a torch.device (None: the
    current device)."""
    if device is None:
        return _C.current_device()
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        device = torch.device(device)
    if isinstance(device, torch.device):
        if device.type != _name:
            raise ValueError(f"Expected a {_name} device, but got: {device}")
        return _C.current_device() if device.index is None else device.index
    raise TypeError(f"Invalid device: {device!r}")


def is_available():
    return _C.device_count() > 0


def is_initialized():
    return _C.is_initialized()


def init():
    _C.init()


def _lazy_init():
    pass


def _is_in_bad_fork():
    return False


def device_count():
    return _C.device_count()


def current_device():
    return _C.current_device()


def set_device(device):
    _C.set_device(_index(device))


class device:
    """Context manager that changes the current device."""

    def __init__(self, device):
        self.idx = -1 if device is None else _index(device)
        self.prev = -1

    def __enter__(self):
        self.prev = _C.current_device()
        if self.idx >= 0 and self.idx != self.prev:
            _C.set_device(self.idx)

    def __exit__(self, *exc):
        if self.idx >= 0 and self.idx != self.prev:
            _C.set_device(self.prev)
        return False


def synchronize(device=None):
    """Wait for every stream of the device (GIL released meanwhile)."""
    _C.synchronize(_index(device))


class Stream(torch.Stream):
    """An evrt stream (a pooled one, 32 per priority class, as CUDA's)."""

    def __new__(cls, device=None, priority=0, **kwargs):
        if "stream_id" in kwargs:
            return super().__new__(cls, **kwargs)
        with torch.accelerator.device_index(_index(device)):
            return super().__new__(cls, device=torch.device(_name, _index(device)),
                                   priority=priority)


class Event(torch.Event):
    """An evrt event, created at its first record on the recording stream's
    device."""

    def __new__(cls, enable_timing=False, blocking=False, interprocess=False):
        return super().__new__(cls, device=_name, enable_timing=enable_timing,
                               blocking=blocking, interprocess=interprocess)


def _wrap(s):
    return Stream(stream_id=s.stream_id, device_index=s.device_index,
                  device_type=s.device_type)


def current_stream(device=None):
    return _wrap(torch.accelerator.current_stream(_index(device)))


def default_stream(device=None):
    idx = _index(device)
    cur = torch.accelerator.current_stream(idx)
    return Stream(stream_id=0, device_index=idx, device_type=cur.device_type)


def set_stream(stream):
    torch.accelerator.set_stream(stream)


@contextlib.contextmanager
def stream(s):
    """Make s the current stream of its device within the block (None: no
    change)."""
    if s is None:
        yield
        return
    prev = torch.accelerator.current_stream(s.device_index)
    prev_dev = _C.current_device()
    torch.accelerator.set_stream(s)
    try:
        yield
    finally:
        torch.accelerator.set_stream(prev)
        if _C.current_device() != prev_dev:
            _C.set_device(prev_dev)


# Memory (the caching allocator's stats, through torch.accelerator)
def memory_allocated(device=None):
    return torch.accelerator.memory_allocated(_index(device))


def max_memory_allocated(device=None):
    return torch.accelerator.max_memory_allocated(_index(device))


def memory_reserved(device=None):
    return torch.accelerator.memory_reserved(_index(device))


def max_memory_reserved(device=None):
    return torch.accelerator.max_memory_reserved(_index(device))


def memory_stats(device=None):
    return torch.accelerator.memory_stats(_index(device))


def reset_peak_memory_stats(device=None):
    torch.accelerator.reset_peak_memory_stats(_index(device))


def empty_cache():
    _C.empty_cache()


# RNG: the kernels are CPU kernels and draw from torch's CPU generator.
def manual_seed(seed):
    torch.random.default_generator.manual_seed(int(seed))


manual_seed_all = manual_seed


def seed():
    torch.random.default_generator.seed()


seed_all = seed


def initial_seed():
    return torch.random.default_generator.initial_seed()


def get_rng_state(device=None):
    return torch.random.default_generator.get_state()


def set_rng_state(state, device=None):
    torch.random.default_generator.set_state(state)


def get_amp_supported_dtype():
    return [torch.float16, torch.bfloat16]


def _sync_counts():
    """{op name: count} of op calls that ran synchronously (their output
    shape depends on the data, they return host values, or they have no
    meta kernel)."""
    return dict(_C.sync_counts())


def _reset_sync_counts():
    _C.reset_sync_counts()
