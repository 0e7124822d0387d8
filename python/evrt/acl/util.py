"""acl.util: moving bytes in and out of memory addressed by int pointers."""

from .. import _evrt

_c = _evrt._acl_util
ptr_to_bytes = _c.ptr_to_bytes
bytes_to_ptr = _c.bytes_to_ptr
__all__ = ["ptr_to_bytes", "bytes_to_ptr"]
