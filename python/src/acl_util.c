/*
 * acl_util.c - evrt.acl.util: pointers and bytes.
 *
 * One ACL family of the pyACL-style module, split from acl_module.c (whose
 * top says the conventions: handles are ints, `ret` comes last, which calls
 * release the GIL); the helpers the families share are in acl_common.h.
 * evrtpy_acl_init adds this file's functions through the table at its end.
 */
#include "acl_common.h"

#ifdef EVRTPY_HAVE_ACL

/* ------------------------------------------------------- acl.util */

/* ptr_to_bytes(ptr, size) -> bytes: a copy of size bytes at ptr. */
/* Copy n bytes at p, or fail (0) if any of them is not readable memory of
 * this process: the kernel copies (process_vm_readv on ourselves) and
 * answers EFAULT for a bogus pointer instead of a crash (issue 13 item 2).
 * Where that call is refused, the pages must at least be mapped. */
static int safe_copy(char *dst, const void *src, size_t n) {
  if (n == 0)
    return 1;
  if ((uintptr_t)src + n < (uintptr_t)src)
    return 0;
  struct iovec l = {dst, n}, r = {(void *)src, n};
  ssize_t got = process_vm_readv(getpid(), &l, 1, &r, 1, 0);
  if (got == (ssize_t)n)
    return 1;
  if (got >= 0 || (errno != ENOSYS && errno != EPERM))
    return 0;
  long ps = sysconf(_SC_PAGESIZE);
  uintptr_t a = (uintptr_t)src & ~(uintptr_t)(ps - 1);
  size_t len = (uintptr_t)src + n - a;
  unsigned char vec[64];
  for (size_t off = 0; off < len; off += 64 * (size_t)ps) {
    size_t chunk = len - off < 64 * (size_t)ps ? len - off : 64 * (size_t)ps;
    if (mincore((void *)(a + off), chunk, vec) != 0)
      return 0; /* not mapped */
  }
  memcpy(dst, src, n);
  return 1;
}

static PyObject *u_ptr_to_bytes(PyObject *m, PyObject *args) {
  void *p;
  Py_ssize_t n;
  if (!PyArg_ParseTuple(args, "O&n:ptr_to_bytes", to_ptr, &p, &n))
    return NULL;
  if (n < 0 || (!p && n > 0))
    return PyErr_Format(PyExc_ValueError, "invalid pointer or size");
  PyObject *b = PyBytes_FromStringAndSize(NULL, n);
  if (!b)
    return NULL;
  if (!safe_copy(PyBytes_AS_STRING(b), p, (size_t)n)) {
    Py_DECREF(b);
    return PyErr_Format(PyExc_ValueError,
                        "%zd bytes at %p are not readable memory of this "
                        "process",
                        n, p);
  }
  return b;
}

/* bytes_to_ptr(b) -> int: the address of the bytes object's buffer (valid
 * while b is alive; the memory must not be written). */
static PyObject *u_bytes_to_ptr(PyObject *m, PyObject *arg) {
  if (!PyBytes_Check(arg))
    return PyErr_Format(PyExc_TypeError, "bytes_to_ptr expects bytes, not "
                        "%.100s", Py_TYPE(arg)->tp_name);
  return PyLong_FromVoidPtr(PyBytes_AS_STRING(arg));
}

/* Added to evrt.acl.util by evrtpy_acl_init. */
PyMethodDef evrtpy_acl_util_methods[] = {
    MV(ptr_to_bytes, u_ptr_to_bytes),
    {"bytes_to_ptr", (PyCFunction)u_bytes_to_ptr, METH_O, NULL},
    {NULL, NULL, 0, NULL}};

#endif /* EVRTPY_HAVE_ACL */
