"""pyACL-style API over evrt's ACL compatibility layer.

``from evrt import acl`` then pyACL's conventions::

    ret = acl.init()
    ret = acl.rt.set_device(0)
    event, ret = acl.rt.create_event()
    stream, ret = acl.rt.create_stream()
    ret = acl.rt.record_event(event, stream)
    status, ret = acl.rt.query_event_status(event)

Handles are ints (the C pointers; 0 is NULL, i.e. the default stream), every
call returns the ACL integer code as ``ret`` (last when there are outputs),
and the constants exist by their ACL names (``acl.ACL_SUCCESS``,
``acl.ACL_EVENT_RECORDED_STATUS_COMPLETE``, ...).  See docs/python.md.
"""

from .. import _evrt

if not getattr(_evrt, "HAVE_ACL", 0):
    raise ImportError("evrt was built without the ACL layer (src/acl): "
                      "evrt.acl is not available")

from . import mdl, rt, util  # noqa: E402

_c = _evrt._acl
# Every function of the C module (init, finalize, get_recent_err_msg,
# get_soc_name, the aclDataBuffer calls, ...) and every ACL_* constant.
_names = sorted(k for k in dir(_c) if not k.startswith("_"))
globals().update({k: getattr(_c, k) for k in _names})

__all__ = ["mdl", "rt", "util"] + _names
