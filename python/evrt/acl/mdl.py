"""acl.mdl: pyACL's model runtime instance calls (aclmdlRI*), over evrt's
stream capture (docs/capture.md).  Each returns the ACL code as ``ret``,
after the outputs when there are any::

    ret = acl.mdl.ri_capture_begin(stream, acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
    ret = acl.rt.launch_host_func(stream, fn, args)   # a task of the model
    model, ret = acl.mdl.ri_capture_end(stream)
    ret = acl.mdl.ri_execute_async(model, stream)     # fn(args) runs each time
    ret = acl.mdl.ri_destroy(model)

The label calls (create_label, set_label, create_label_list,
switch_label_by_index, ...) are in acl.rt, as aclrt* calls."""

from .. import _evrt

_c = _evrt._acl_mdl
__all__ = sorted(k for k in dir(_c) if not k.startswith("_"))
globals().update({k: getattr(_c, k) for k in __all__})
