"""acl.rt: the pyACL runtime functions (streams, events, devices, contexts,
callbacks, memory).  Each returns the ACL code as ``ret``, after the outputs
when there are any: ``event, ret = acl.rt.create_event()``."""

from .. import _evrt

_c = _evrt._acl_rt
__all__ = sorted(k for k in dir(_c) if not k.startswith("_"))
globals().update({k: getattr(_c, k) for k in __all__})
