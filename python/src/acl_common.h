/*
 * acl_common.h - what the files of evrt.acl share (acl_module.c and one
 * file per ACL family: acl_base.c, acl_util.c, acl_rt_*.c): the argument
 * and result helpers, the interruptible pre-wait of the blocking calls and
 * the method-table macros.  Helpers are static inline, so a file that uses
 * none of them pays nothing.  The conventions are at the top of
 * acl_module.c.
 */
#ifndef EVRTPY_ACL_COMMON_H
#define EVRTPY_ACL_COMMON_H

#include "evrt_module.h"

#ifdef EVRTPY_HAVE_ACL

#include <acl/acl.h>

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

/* ------------------------------------------------------------- helpers */

/* A handle argument: an int (the pointer) or None (NULL). */
static inline int to_ptr(PyObject *o, void **out) {
  if (o == Py_None) {
    *out = NULL;
    return 1;
  }
  if (!PyLong_Check(o)) {
    PyErr_Format(PyExc_TypeError, "handle must be an int, not %.100s",
                 Py_TYPE(o)->tp_name);
    return 0;
  }
  void *p = PyLong_AsVoidPtr(o);
  if (!p && PyErr_Occurred())
    return 0;
  *out = p;
  return 1;
}

static inline PyObject *ptr_ret(void *p, aclError ret) {
  PyObject *h = p ? PyLong_FromVoidPtr(p) : PyLong_FromLong(0);
  if (!h)
    return NULL;
  return Py_BuildValue("(Ni)", h, (int)ret);
}

/* (handle, ret) of a call whose one argument is a handle output. */
static inline PyObject *ptr_out_ret(aclError (*fn)(void **)) {
  void *p = NULL;
  aclError r = fn(&p);
  return ptr_ret(p, r);
}

/* The two for acl_mdl.c (evrt_module.h). */

#define RET(expr) return PyLong_FromLong((long)(expr))

/* ------------------------------------------------------------- Ctrl-C */

/* The blocking calls (synchronize_*) first wait for the work themselves,
 * interruptibly (wait.c: GIL released, signal handlers run every slice),
 * through the evrt handle behind the ACL one: aclrtStream and aclrtEvent
 * values are evrt handles (one runtime).  Then they make the ACL call, which
 * finds the work done and returns ACL's own code and error state; the
 * waiting left none (a failing handle ends it early and the ACL call reports
 * the failure).  Returns -1 with KeyboardInterrupt (or whatever a handler
 * raised) set, else 0 and *left_ms: the timeout left for the ACL call (-1
 * stays -1; a wait that used up its timeout leaves 1 ms, so that ACL
 * reports its own timeout). */
enum prewait_kind { PRE_STREAM, PRE_EVENT, PRE_DEVICE };

static inline int prewait(enum prewait_kind kind, void *h, int timeout_ms,
                   int *left_ms) {
  int64_t ns = timeout_ms < 0 ? -1 : (int64_t)timeout_ms * 1000000;
  evrt_status_t st = EVRT_SUCCESS;
  int rc = 0;
  *left_ms = timeout_ms;
  if (kind == PRE_DEVICE) {
    int32_t dev = 0;
    if (aclrtGetDevice(&dev) != ACL_SUCCESS)
      return 0;
    rc = evrtpy_device_wait((int)dev, ns, 0, &st);
  } else if (kind == PRE_STREAM) {
    if (!h && aclrtCtxGetCurrentDefaultStream(&h) != ACL_SUCCESS)
      return 0;
    rc = evrtpy_stream_wait((evrt_stream_t)h, ns, 1, &st);
  } else {
    rc = evrtpy_event_wait((evrt_event_t)h, ns, 1, &st);
  }
  if (rc < 0)
    return -1;
  if (st == EVRT_ERROR_TIMEOUT && timeout_ms > 0)
    *left_ms = 1;
  return 0;
}


/* A size_t / uint64_t / int64_t argument (OverflowError when it does not
 * fit, TypeError when it is not an int). */
static inline int cv_size(PyObject *o, size_t *out) {
  size_t v = PyLong_AsSize_t(o);
  if (v == (size_t)-1 && PyErr_Occurred())
    return 0;
  *out = v;
  return 1;
}

static inline int cv_u64(PyObject *o, uint64_t *out) {
  unsigned long long v = PyLong_AsUnsignedLongLong(o);
  if (v == (unsigned long long)-1 && PyErr_Occurred())
    return 0;
  *out = (uint64_t)v;
  return 1;
}

static inline int cv_i64(PyObject *o, int64_t *out) {
  long long v = PyLong_AsLongLong(o);
  if (v == -1 && PyErr_Occurred())
    return 0;
  *out = (int64_t)v;
  return 1;
}

/* d[key] as an unsigned 64-bit int: KeyError when missing. */
static inline int dict_u64(PyObject *d, const char *key, uint64_t *out) {
  PyObject *v = PyDict_GetItemString(d, key); /* borrowed */
  if (!v) {
    PyErr_Format(PyExc_KeyError, "'%s' is missing", key);
    return 0;
  }
  return cv_u64(v, out);
}

static inline int check_dict(PyObject *d, const char *what) {
  if (PyDict_Check(d))
    return 1;
  PyErr_Format(PyExc_TypeError, "%s must be a dict, not %.100s", what,
               Py_TYPE(d)->tp_name);
  return 0;
}

/* Sets d[key] = v, stealing v; 0 on failure. */
static inline int dict_put(PyObject *d, const char *key, PyObject *v) {
  if (!v)
    return 0;
  int r = PyDict_SetItemString(d, key, v);
  Py_DECREF(v);
  return r == 0;
}

/* (value, ret) with an unsigned 64-bit / signed 64-bit value. */
static inline PyObject *u64_ret(uint64_t v, aclError r) {
  return Py_BuildValue("(Ki)", (unsigned long long)v, (int)r);
}
static inline PyObject *i64_ret(int64_t v, aclError r) {
  return Py_BuildValue("(Li)", (long long)v, (int)r);
}

/* A Python sequence as a C array (PyMem_Malloc memory the caller frees;
 * one element allocated for an empty sequence, so *out is never NULL on
 * success): conv stores item i into the elem_size-byte slot, or sets an
 * exception and returns 0.  msg is the TypeError of a non-sequence. */
static inline int seq_to_array(PyObject *o, const char *msg, size_t elem_size,
                               int (*conv)(PyObject *, void *), void **out,
                               Py_ssize_t *n) {
  PyObject *seq = PySequence_Fast(o, msg);
  if (!seq)
    return 0;
  Py_ssize_t k = PySequence_Fast_GET_SIZE(seq);
  char *v = PyMem_Malloc((size_t)(k ? k : 1) * elem_size);
  if (!v) {
    Py_DECREF(seq);
    PyErr_NoMemory();
    return 0;
  }
  for (Py_ssize_t i = 0; i < k; i++)
    if (!conv(PySequence_Fast_GET_ITEM(seq, i), v + (size_t)i * elem_size)) {
      PyMem_Free(v);
      Py_DECREF(seq);
      return 0;
    }
  Py_DECREF(seq);
  *out = v;
  *n = k;
  return 1;
}

/* seq_to_array's element converters: a handle (void *) and a uint32_t
 * (OverflowError outside [0, 2^32)). */
static inline int conv_ptr(PyObject *o, void *slot) {
  return to_ptr(o, (void **)slot);
}
static inline int conv_u32(PyObject *o, void *slot) {
  unsigned long v = PyLong_AsUnsignedLong(o);
  if (v == (unsigned long)-1 && PyErr_Occurred())
    return 0;
  if (v > UINT32_MAX) {
    PyErr_SetString(PyExc_OverflowError, "value does not fit in 32 bits");
    return 0;
  }
  *(uint32_t *)slot = (uint32_t)v;
  return 1;
}

/* More element converters (seq_to_array, dict_conv): a size_t, a uint64_t,
 * an int64_t, an int32_t (OverflowError outside its range). */
static inline int conv_size(PyObject *o, void *slot) {
  return cv_size(o, (size_t *)slot);
}
static inline int conv_u64(PyObject *o, void *slot) {
  return cv_u64(o, (uint64_t *)slot);
}
static inline int conv_i64(PyObject *o, void *slot) {
  return cv_i64(o, (int64_t *)slot);
}
static inline int conv_i32(PyObject *o, void *slot) {
  long v = PyLong_AsLong(o);
  if (v == -1 && PyErr_Occurred())
    return 0;
  if (v < INT32_MIN || v > INT32_MAX) {
    PyErr_SetString(PyExc_OverflowError, "value does not fit in 32 bits");
    return 0;
  }
  *(int32_t *)slot = (int32_t)v;
  return 1;
}

/* A list of pids (any sequence of ints) as an int32_t array the caller
 * frees with PyMem_Free. */
static inline int to_pids(PyObject *o, int32_t **out, size_t *n) {
  void *v;
  Py_ssize_t k;
  if (!seq_to_array(o, "pids must be a sequence of ints", sizeof(int32_t),
                    conv_i32, &v, &k))
    return 0;
  *out = v;
  *n = (size_t)k;
  return 1;
}

/* ValueError unless two sequences that describe the same items (a batch's
 * sizes and sources, ...) have the same length. */
static inline int same_len(Py_ssize_t a, Py_ssize_t b, const char *what) {
  if (a == b)
    return 1;
  PyErr_Format(PyExc_ValueError, "%s must have the same length (%zd, %zd)",
               what, a, b);
  return 0;
}

/* d[key] converted by conv (one of the conv_* above) into *out: KeyError
 * when missing, conv's error when malformed.  The C struct fields of the
 * dicts below are read this way. */
static inline int dict_conv(PyObject *d, const char *key,
                            int (*conv)(PyObject *, void *), void *out) {
  PyObject *v = PyDict_GetItemString(d, key); /* borrowed */
  if (!v) {
    PyErr_Format(PyExc_KeyError, "'%s' is missing", key);
    return 0;
  }
  return conv(v, out);
}

/* d[key] as a dict (borrowed): KeyError when missing, TypeError when not a
 * dict. */
static inline PyObject *dict_sub(PyObject *d, const char *key) {
  PyObject *v = PyDict_GetItemString(d, key);
  if (!v) {
    PyErr_Format(PyExc_KeyError, "'%s' is missing", key);
    return NULL;
  }
  return check_dict(v, key) ? v : NULL;
}

/* The optional reserved bytes d[key] (a sequence of at most n ints, each
 * one byte) into out, zero-filled; absent: all zero.  CANN requires them
 * zero, and the C calls check: this lets a test pass non-zero ones. */
static inline int dict_rsv(PyObject *d, const char *key, uint8_t *out,
                           size_t n) {
  memset(out, 0, n);
  PyObject *v = PyDict_GetItemString(d, key);
  if (!v)
    return 1;
  void *a;
  Py_ssize_t k;
  if (!seq_to_array(v, "reserved bytes must be a sequence of ints",
                    sizeof(uint32_t), conv_u32, &a, &k))
    return 0;
  int ok = (size_t)k <= n;
  for (Py_ssize_t i = 0; ok && i < k; i++)
    ok = ((uint32_t *)a)[i] <= 0xff;
  if (ok)
    for (Py_ssize_t i = 0; i < k; i++)
      out[i] = (uint8_t)((uint32_t *)a)[i];
  PyMem_Free(a);
  if (!ok)
    PyErr_Format(PyExc_ValueError, "'%s' holds at most %zu bytes (0..255)",
                 key, n);
  return ok;
}

/* The aclrtMemLocation dict of pyACL: {"id", "type"}, into *l (to_loc),
 * d[key] into *l (dict_loc), and back (loc_dict). */
static inline int to_loc(PyObject *d, aclrtMemLocation *l) {
  uint64_t id, type;
  if (!check_dict(d, "location") || !dict_u64(d, "id", &id) ||
      !dict_u64(d, "type", &type))
    return 0;
  l->id = (uint32_t)id;
  l->type = (aclrtMemLocationType)type;
  return 1;
}

static inline int dict_loc(PyObject *d, const char *key, aclrtMemLocation *l) {
  PyObject *v = PyDict_GetItemString(d, key);
  if (!v) {
    PyErr_Format(PyExc_KeyError, "'%s' is missing", key);
    return 0;
  }
  return to_loc(v, l);
}

static inline PyObject *loc_dict(const aclrtMemLocation *l) {
  PyObject *d = PyDict_New();
  if (d && (!dict_put(d, "id", PyLong_FromUnsignedLong(l->id)) ||
            !dict_put(d, "type", PyLong_FromLong((long)l->type)))) {
    Py_DECREF(d);
    return NULL;
  }
  return d;
}

#define M0(name, fn) {#name, (PyCFunction)fn, METH_NOARGS, NULL}
#define MV(name, fn) {#name, (PyCFunction)fn, METH_VARARGS, NULL}

/* This thread's error messages carried over by process_report
 * (acl_rt_callback.c), for acl.get_recent_err_msg (acl_module.c); PyMem_Raw
 * memory the caller frees, NULL if none. */
char *evrtpy_acl_take_carried_msgs(void);

/* The families' method tables (acl_*.c), added by evrtpy_acl_init. */
extern PyMethodDef evrtpy_acl_rt_device_methods[];
extern PyMethodDef evrtpy_acl_rt_stream_methods[];
extern PyMethodDef evrtpy_acl_rt_event_methods[];
extern PyMethodDef evrtpy_acl_rt_callback_methods[];
extern PyMethodDef evrtpy_acl_rt_memory_methods[];
extern PyMethodDef evrtpy_acl_rt_pool_methods[];
extern PyMethodDef evrtpy_acl_rt_copy_methods[];
extern PyMethodDef evrtpy_acl_util_methods[];
extern PyMethodDef evrtpy_acl_rt_failure_methods[];
extern PyMethodDef evrtpy_acl_base_methods[];
extern PyMethodDef evrtpy_acl_init_callback_methods[];
extern PyMethodDef evrtpy_acl_rt_vmm_methods[];
extern PyMethodDef evrtpy_acl_rt_allocator_methods[];

#endif /* EVRTPY_HAVE_ACL */

#endif
