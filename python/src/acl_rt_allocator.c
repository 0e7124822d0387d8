/*
 * acl_rt_allocator.c - evrt.acl.rt: the external allocator interface.
 *
 * One ACL family of the pyACL-style module, split from acl_module.c (whose
 * top says the conventions: handles are ints, `ret` comes last, which calls
 * release the GIL); the helpers the families share are in acl_common.h.
 * evrtpy_acl_init adds this file's functions through the table at its end.
 */
#include "acl_common.h"

#ifdef EVRTPY_HAVE_ACL

/* ------------------------------------------------- rt: allocator */

/* pyACL keeps one Python function per callback kind, the last one set
 * (whatever the descriptor); so do these.  The C callbacks call it with
 * the GIL held and return its int result as the pointer (pyACL's always
 * return NULL).  Only a C caller of aclrtAllocatorGetByStream runs them:
 * evrt has no operator that allocates workspace. */
static PyObject *cb_alloc, *cb_free, *cb_advise, *cb_addr;

static void *alloc_call(PyObject **slot, const char *fmt, ...) {
  void *out = NULL;
  if (!evrtpy_trampoline_enter(0))
    return NULL;
  evrtpy_gil_t g;
  evrtpy_gil_take(&g);
  PyObject *fn = *slot;
  if (fn) {
    va_list ap;
    va_start(ap, fmt);
    PyObject *a = Py_VaBuildValue(fmt, ap);
    va_end(ap);
    PyObject *r = a ? PyObject_CallObject(fn, a) : NULL;
    Py_XDECREF(a);
    if (!r) {
      PyErr_WriteUnraisable(fn);
    } else {
      if (r != Py_None) {
        out = PyLong_AsVoidPtr(r);
        if (PyErr_Occurred()) {
          PyErr_WriteUnraisable(fn);
          out = NULL;
        }
      }
      Py_DECREF(r);
    }
  }
  evrtpy_gil_drop(&g);
  evrtpy_trampoline_leave(0);
  return out;
}

static void *tr_alloc(aclrtAllocator a, size_t size) {
  return alloc_call(&cb_alloc, "(Nn)", PyLong_FromVoidPtr(a),
                    (Py_ssize_t)size);
}
static void tr_free(aclrtAllocator a, aclrtAllocatorBlock b) {
  (void)alloc_call(&cb_free, "(NN)", PyLong_FromVoidPtr(a),
                   PyLong_FromVoidPtr(b));
}
static void *tr_advise(aclrtAllocator a, size_t size, aclrtAllocatorAddr p) {
  return alloc_call(&cb_advise, "(NnN)", PyLong_FromVoidPtr(a),
                    (Py_ssize_t)size, PyLong_FromVoidPtr(p));
}
static void *tr_addr(aclrtAllocatorBlock b) {
  return alloc_call(&cb_addr, "(N)", PyLong_FromVoidPtr(b));
}

static PyObject *c_allocator_create_desc(PyObject *m, PyObject *unused) {
  return PyLong_FromVoidPtr(aclrtAllocatorCreateDesc());
}

static PyObject *c_allocator_destroy_desc(PyObject *m, PyObject *args) {
  void *d;
  if (!PyArg_ParseTuple(args, "O&:allocator_destroy_desc", to_ptr, &d))
    return NULL;
  RET(aclrtAllocatorDestroyDesc(d));
}

/* allocator_set_obj_to_desc(desc, allocator) -> ret: the allocator int is
 * the object (pyACL passes the address of its local copy instead). */
static PyObject *c_allocator_set_obj_to_desc(PyObject *m, PyObject *args) {
  void *d, *obj;
  if (!PyArg_ParseTuple(args, "O&O&:allocator_set_obj_to_desc", to_ptr, &d,
                        to_ptr, &obj))
    return NULL;
  RET(aclrtAllocatorSetObjToDesc(d, obj));
}

#define ALLOC_FUNC_SETTER(pyname, cfn, slot, tramp)                            \
  static PyObject *c_##pyname(PyObject *m, PyObject *args) {                   \
    void *d;                                                                   \
    PyObject *fn;                                                              \
    if (!PyArg_ParseTuple(args, "O&O:" #pyname, to_ptr, &d, &fn))              \
      return NULL;                                                             \
    if (!PyCallable_Check(fn))                                                 \
      return PyErr_Format(PyExc_TypeError, "%.100s is not callable",          \
                          Py_TYPE(fn)->tp_name);                               \
    aclError r = cfn(d, tramp);                                                \
    if (r == ACL_SUCCESS) {                                                    \
      Py_INCREF(fn);                                                           \
      Py_XSETREF(slot, fn);                                                    \
    }                                                                          \
    RET(r);                                                                    \
  }
ALLOC_FUNC_SETTER(allocator_set_alloc_func_to_desc,
                  aclrtAllocatorSetAllocFuncToDesc, cb_alloc, tr_alloc)
ALLOC_FUNC_SETTER(allocator_set_free_func_to_desc,
                  aclrtAllocatorSetFreeFuncToDesc, cb_free, tr_free)
ALLOC_FUNC_SETTER(allocator_set_alloc_advise_func_to_desc,
                  aclrtAllocatorSetAllocAdviseFuncToDesc, cb_advise,
                  tr_advise)
ALLOC_FUNC_SETTER(allocator_set_get_addr_from_block_func_to_desc,
                  aclrtAllocatorSetGetAddrFromBlockFuncToDesc, cb_addr,
                  tr_addr)
#undef ALLOC_FUNC_SETTER

static PyObject *c_allocator_register(PyObject *m, PyObject *args) {
  void *s, *d;
  if (!PyArg_ParseTuple(args, "O&O&:allocator_register", to_ptr, &s, to_ptr,
                        &d))
    return NULL;
  RET(aclrtAllocatorRegister(s, d));
}

/* One callback of allocator_get_by_stream's result: the Python function
 * when it is this module's trampoline (the last one set for that kind,
 * which is what a C caller of the trampoline runs), the C function's
 * address as an int when C code set it, None when it is NULL. */
static PyObject *got_func(void *fn, void *tramp, PyObject *slot) {
  PyObject *o = fn == tramp && slot ? slot : NULL;
  if (o) {
    Py_INCREF(o);
    return o;
  }
  if (!fn)
    Py_RETURN_NONE;
  return PyLong_FromVoidPtr(fn);
}

/* allocator_get_by_stream(stream) -> (desc, allocator, alloc_func,
 * free_func, alloc_advise_func, get_addr_from_block_func, ret): what
 * allocator_register registered for the stream, its callbacks as got_func
 * gives them; (0, 0, None, None, None, None, ret) on failure. */
static PyObject *c_allocator_get_by_stream(PyObject *m, PyObject *args) {
  void *s;
  if (!PyArg_ParseTuple(args, "O&:allocator_get_by_stream", to_ptr, &s))
    return NULL;
  struct { /* the outputs, left NULL by a failing call */
    aclrtAllocatorDesc d;
    aclrtAllocator obj;
    aclrtAllocatorAllocFunc alloc;
    aclrtAllocatorFreeFunc free_fn;
    aclrtAllocatorAllocAdviseFunc advise;
    aclrtAllocatorGetAddrFromBlockFunc addr;
  } o = {0};
  aclError r = aclrtAllocatorGetByStream(s, &o.d, &o.obj, &o.alloc,
                                         &o.free_fn, &o.advise, &o.addr);
  return Py_BuildValue(
      "(NNNNNNi)", PyLong_FromVoidPtr(o.d), PyLong_FromVoidPtr(o.obj),
      got_func((void *)o.alloc, (void *)tr_alloc, cb_alloc),
      got_func((void *)o.free_fn, (void *)tr_free, cb_free),
      got_func((void *)o.advise, (void *)tr_advise, cb_advise),
      got_func((void *)o.addr, (void *)tr_addr, cb_addr), (int)r);
}

static PyObject *c_allocator_unregister(PyObject *m, PyObject *args) {
  void *s;
  if (!PyArg_ParseTuple(args, "O&:allocator_unregister", to_ptr, &s))
    return NULL;
  RET(aclrtAllocatorUnregister(s));
}

/* Added to evrt.acl.rt by evrtpy_acl_init. */
PyMethodDef evrtpy_acl_rt_allocator_methods[] = {
    M0(allocator_create_desc, c_allocator_create_desc),
    MV(allocator_destroy_desc, c_allocator_destroy_desc),
    MV(allocator_set_obj_to_desc, c_allocator_set_obj_to_desc),
    MV(allocator_set_alloc_func_to_desc, c_allocator_set_alloc_func_to_desc),
    MV(allocator_set_free_func_to_desc, c_allocator_set_free_func_to_desc),
    MV(allocator_set_alloc_advise_func_to_desc,
       c_allocator_set_alloc_advise_func_to_desc),
    MV(allocator_set_get_addr_from_block_func_to_desc,
       c_allocator_set_get_addr_from_block_func_to_desc),
    MV(allocator_register, c_allocator_register),
    MV(allocator_unregister, c_allocator_unregister),
    MV(allocator_get_by_stream, c_allocator_get_by_stream),
    {NULL, NULL, 0, NULL}};

#endif /* EVRTPY_HAVE_ACL */
