"""GPU trace callbacks, as torch.cuda._gpu_trace and torch.xpu._gpu_trace.

Tools such as a stream sanitizer register callables here; once
``evrt._activate_gpu_trace()`` has run (torch: ``torch._C._activate_gpu_trace``),
the package calls them, on the calling thread, after each of these calls
succeeded:

=========================  =================  ==============================
registry                   arguments          fired by
=========================  =================  ==============================
event_creation             (event)            the native event's creation:
                                              first record, ipc_handle(),
                                              from_ipc_handle()
event_deletion             (event)            the object's deletion
event_record               (event, stream)    Event.record, record_event
event_wait                 (event, stream)    Event.wait, Stream.wait_event
event_synchronization      (event)            Event.synchronize
stream_creation            (stream)           a new Stream
stream_synchronization     (stream)           Stream.synchronize
device_synchronization     ()                 synchronize()
=========================  =================  ==============================

``Stream.wait_stream`` reports the life of the event it uses (creation,
record, wait, deletion), as torch's does.  Events and streams are given by
their native handles as their type shows them (``cuda_event``,
``cuda_stream``: a cuda default stream is 0).  Each device type has its own
callbacks: ``evrt.cuda._gpu_trace``, ``evrt.xpu._gpu_trace``, and this
module for evrt's own type.  A callback that raises is logged (logger
``evrt.gpu_trace``) and the others still run; the call it reports is not
affected.  There is no way to unregister, as in torch (a test that needs a
clean slate runs in a new process).
"""

import logging as _logging
import sys as _sys
import types as _types

_log = _logging.getLogger("evrt.gpu_trace")

# The trace points, in the C code's order (python/src/gputrace.c), and the
# names torch gives their registries.
_KINDS = (
    ("event_creation", "EventCreationCallbacks"),
    ("event_deletion", "EventDeletionCallbacks"),
    ("event_record", "EventRecordCallbacks"),
    ("event_wait", "EventWaitCallbacks"),
    ("event_synchronization", "EventSynchronizationCallbacks"),
    ("stream_creation", "StreamCreationCallbacks"),
    ("stream_synchronization", "StreamSynchronizationCallbacks"),
    ("device_synchronization", "DeviceSynchronizationCallbacks"),
)


class CallbackRegistry:
    """The callbacks of one trace point, called in the order of
    registration by :meth:`fire_callbacks`."""

    def __init__(self, name):
        self.name = name
        self.callback_list = []

    def add_callback(self, cb):
        """Register ``cb``; it is called at every later firing."""
        if not callable(cb):
            raise TypeError(f"a callback must be callable, not {type(cb).__name__}")
        self.callback_list.append(cb)

    def fire_callbacks(self, *args):
        """Call every callback with ``args``; one that raises is logged."""
        for cb in tuple(self.callback_list):
            try:
                cb(*args)
            except Exception:
                _log.exception("Exception in callback for %s registered "
                               "with gpu trace", self.name)


def _register_function(kind, registry):
    def register(cb):
        registry.add_callback(cb)

    register.__name__ = register.__qualname__ = "register_callback_for_" + kind
    register.__doc__ = (f"Register ``cb``, called after each "
                        f"{kind.replace('_', ' ')} (see evrt._gpu_trace).")
    return register


def _fill(namespace, module_name):
    regs = {}
    for kind, attr in _KINDS:
        reg = CallbackRegistry(kind.replace("_", " "))
        regs[kind] = reg
        namespace[attr] = reg
        fn = _register_function(kind, reg)
        fn.__module__ = module_name
        namespace[fn.__name__] = fn
    return regs


# One set of registries per device type: evrt (0), cuda (1), xpu (2), as
# the C enum numbers them.
_registries = [_fill(globals(), __name__)]
for _name in ("evrt.cuda._gpu_trace", "evrt.xpu._gpu_trace"):
    _m = _types.ModuleType(_name, __doc__)
    _registries.append(_fill(_m.__dict__, _name))
    _m.CallbackRegistry = CallbackRegistry
    _sys.modules[_name] = _m
_cuda_module = _sys.modules["evrt.cuda._gpu_trace"]
_xpu_module = _sys.modules["evrt.xpu._gpu_trace"]
del _name, _m


def _fire(type_index, kind, *args):
    """Called by the C hooks: fire the callbacks of a type's trace point."""
    _registries[type_index][kind].fire_callbacks(*args)
