/*
 * acl_init_callback.c - evrt.acl: init / finalize callbacks
 * (aclInitCallbackRegister, aclInitCallbackUnRegister,
 * aclFinalizeCallbackRegister, aclFinalizeCallbackUnRegister) with Python
 * callables, and aclFinalizeReference.
 *
 * One ACL family of the pyACL-style module, split from acl_module.c (whose
 * top says the conventions: handles are ints, `ret` comes last, which calls
 * release the GIL); the helpers the families share are in acl_common.h.
 * evrtpy_acl_init adds this file's functions through the table at its end.
 *
 * The C layer (src/acl/acl_initcb.c) keeps (type, function, user data)
 * entries and unregisters the first entry of a type with the given
 * function.  So that unregistering one Python callable removes exactly its
 * own entry (ACL_REG_TYPE_OTHER takes several), each Python registration
 * gets its own C trampoline out of a fixed set of SLOTS per kind: slot i
 * is registered with trampoline i, and unregistering slot i unregisters
 * trampoline i.  A SLOTS+1-th registration of one kind at once gets
 * ACL_ERROR_BAD_ALLOC.
 *
 * The slots are read and written with the GIL held.  The C calls run with
 * the GIL released: aclInit / aclFinalize run the callbacks holding the C
 * layer's callback lock, and a trampoline takes the GIL inside it, so a
 * thread holding the GIL must never wait for that lock (lock order: C
 * callback lock, then the GIL).  A slot is filled before its C
 * registration (an init callback registered after aclInit runs at once,
 * inside the registration) and emptied only after its C unregistration has
 * returned, when the C layer can no longer call its trampoline.
 */
#include "acl_common.h"

#ifdef EVRTPY_HAVE_ACL

#define SLOTS 32

/* FREE -> JOINING (filled, C registration under way) -> LIVE (registered)
 * -> LEAVING (C unregistration under way) -> FREE; a failed C call goes
 * back (JOINING -> FREE, LEAVING -> LIVE).  Only LIVE slots are found by
 * unregister; the trampoline calls any slot that holds a callable. */
enum { FREE, JOINING, LIVE, LEAVING };

struct slot {
  int state;
  int type;       /* the aclRegisterCallbackType */
  PyObject *fn;   /* strong references while not FREE */
  PyObject *user;
};

static struct slot init_slots[SLOTS], fini_slots[SLOTS];

/* A callback's result as its aclError: None is ACL_SUCCESS, an int is the
 * code.  An exception, raised or from a result of another type, goes to
 * sys.unraisablehook (ACL has no channel for it) and the callback fails
 * with ACL_ERROR_FAILURE, so aclInit / aclFinalize return that. */
static aclError result_code(PyObject *fn, PyObject *res) {
  aclError r = ACL_ERROR_FAILURE;
  if (res == Py_None) {
    r = ACL_SUCCESS;
  } else if (res && PyLong_Check(res)) {
    long v = PyLong_AsLong(res);
    if (!(v == -1 && PyErr_Occurred())) {
      if (v < INT32_MIN || v > INT32_MAX)
        PyErr_SetString(PyExc_OverflowError,
                        "callback result does not fit an aclError");
      else
        r = (aclError)v;
    }
  } else if (res) {
    PyErr_Format(PyExc_TypeError,
                 "callback must return an int or None, not %.100s",
                 Py_TYPE(res)->tp_name);
  }
  if (PyErr_Occurred()) {
    PyErr_WriteUnraisable(fn);
    r = ACL_ERROR_FAILURE;
  }
  Py_XDECREF(res);
  return r;
}

/* Runs slot s's callable: fn(config, user_data) for an init callback
 * (config: the config file's content, decoded as UTF-8 with replacement),
 * fn(user_data) for a finalize one.  Called by the C layer on the thread
 * that called aclInit / aclFinalize / the registration, with or without
 * the GIL; after the interpreter has begun to exit it does nothing. */
static aclError run_slot(struct slot *s, const char *cfg, size_t len) {
  if (!evrtpy_trampoline_enter(0))
    return ACL_SUCCESS;
  evrtpy_gil_t g;
  evrtpy_gil_take(&g);
  aclError r = ACL_SUCCESS;
  PyObject *fn = s->fn, *user = s->user;
  if (fn) {
    Py_INCREF(fn); /* the slot may be emptied while fn runs */
    Py_INCREF(user);
    PyObject *res;
    if (cfg) {
      PyObject *c = PyUnicode_DecodeUTF8(cfg, (Py_ssize_t)len, "replace");
      res = c ? PyObject_CallFunctionObjArgs(fn, c, user, NULL) : NULL;
      Py_XDECREF(c);
    } else {
      res = PyObject_CallFunctionObjArgs(fn, user, NULL);
    }
    r = result_code(fn, res);
    Py_DECREF(user);
    Py_DECREF(fn);
  }
  evrtpy_gil_drop(&g);
  evrtpy_trampoline_leave(0);
  return r;
}

#define TR(i)                                                                  \
  static aclError init_tr##i(const char *c, size_t n, void *u) {               \
    return run_slot(&init_slots[i], c ? c : "", n);                            \
  }                                                                            \
  static aclError fini_tr##i(void *u) {                                        \
    return run_slot(&fini_slots[i], NULL, 0);                                  \
  }
#define TR8(i) TR(i##0) TR(i##1) TR(i##2) TR(i##3) TR(i##4) TR(i##5) TR(i##6) \
  TR(i##7)
TR8(0) TR8(1) TR8(2) TR8(3)
#undef TR8
#undef TR
#define T8(p, i) p##i##0, p##i##1, p##i##2, p##i##3, p##i##4, p##i##5, p##i##6, \
  p##i##7
static void *const init_tr[SLOTS] = {T8(init_tr, 0), T8(init_tr, 1),
                                     T8(init_tr, 2), T8(init_tr, 3)};
static void *const fini_tr[SLOTS] = {T8(fini_tr, 0), T8(fini_tr, 1),
                                     T8(fini_tr, 2), T8(fini_tr, 3)};
#undef T8

/* One kind (init or finalize): its slots, trampolines and C calls. */
struct kind {
  struct slot *slots;
  void *const *tr;
  aclError (*reg)(aclRegisterCallbackType, void *, void *);
  aclError (*unreg)(aclRegisterCallbackType, void *);
};

static aclError reg_init(aclRegisterCallbackType t, void *f, void *u) {
  return aclInitCallbackRegister(t, (aclInitCallbackFunc)f, u);
}
static aclError unreg_init(aclRegisterCallbackType t, void *f) {
  return aclInitCallbackUnRegister(t, (aclInitCallbackFunc)f);
}
static aclError reg_fini(aclRegisterCallbackType t, void *f, void *u) {
  return aclFinalizeCallbackRegister(t, (aclFinalizeCallbackFunc)f, u);
}
static aclError unreg_fini(aclRegisterCallbackType t, void *f) {
  return aclFinalizeCallbackUnRegister(t, (aclFinalizeCallbackFunc)f);
}

static const struct kind init_kind = {init_slots, init_tr, reg_init,
                                      unreg_init};
static const struct kind fini_kind = {fini_slots, fini_tr, reg_fini,
                                      unreg_fini};

static int check_callable(PyObject *fn) {
  if (PyCallable_Check(fn))
    return 1;
  PyErr_Format(PyExc_TypeError, "callback must be callable, not %.100s",
               Py_TYPE(fn)->tp_name);
  return 0;
}

static void empty_slot(struct slot *s) {
  PyObject *fn = s->fn, *user = s->user;
  s->fn = s->user = NULL;
  s->state = FREE;
  Py_XDECREF(fn);
  Py_XDECREF(user);
}

/* *_callback_register(type, fn, user_data) -> ret */
static PyObject *do_register(const struct kind *k, PyObject *args,
                             const char *fmt) {
  int type;
  PyObject *fn, *user;
  if (!PyArg_ParseTuple(args, fmt, &type, &fn, &user) || !check_callable(fn))
    return NULL;
  int i = 0;
  while (i < SLOTS && k->slots[i].state != FREE)
    i++;
  if (i == SLOTS)
    RET(ACL_ERROR_BAD_ALLOC);
  struct slot *s = &k->slots[i];
  Py_INCREF(fn);
  Py_INCREF(user);
  *s = (struct slot){JOINING, type, fn, user};
  aclError r;
  Py_BEGIN_ALLOW_THREADS
  r = k->reg((aclRegisterCallbackType)type, k->tr[i], NULL);
  Py_END_ALLOW_THREADS
  if (r == ACL_SUCCESS)
    s->state = LIVE;
  else
    empty_slot(s);
  RET(r);
}

/* The LIVE slot of `type` whose callable is fn or equal to it, -1 if none
 * (-2 with an exception from __eq__).  __eq__ may run Python code that
 * lets other threads change the slots: a match counts only if the slot
 * still holds the compared callable afterwards. */
static int find_slot(const struct kind *k, int type, PyObject *fn) {
  for (int i = 0; i < SLOTS; i++) {
    struct slot *s = &k->slots[i];
    if (s->state != LIVE || s->type != type)
      continue;
    PyObject *x = s->fn;
    Py_INCREF(x);
    int eq = PyObject_RichCompareBool(x, fn, Py_EQ);
    int same = s->state == LIVE && s->fn == x;
    Py_DECREF(x);
    if (eq < 0)
      return -2;
    if (eq && same)
      return i;
  }
  return -1;
}

/* *_callback_unregister(type, fn) -> ret.  A callable not registered for
 * the type gets the C layer's own answer (500000): the C call is made with
 * a trampoline no live registration of this type uses. */
static PyObject *do_unregister(const struct kind *k, PyObject *args,
                               const char *fmt) {
  int type;
  PyObject *fn;
  if (!PyArg_ParseTuple(args, fmt, &type, &fn) || !check_callable(fn))
    return NULL;
  int i = find_slot(k, type, fn);
  if (i == -2)
    return NULL;
  aclError r;
  if (i < 0) {
    void *unused = (void *)k; /* no trampoline has this address */
    Py_BEGIN_ALLOW_THREADS
    r = k->unreg((aclRegisterCallbackType)type, unused);
    Py_END_ALLOW_THREADS
    RET(r);
  }
  struct slot *s = &k->slots[i];
  s->state = LEAVING;
  Py_BEGIN_ALLOW_THREADS
  r = k->unreg((aclRegisterCallbackType)type, k->tr[i]);
  Py_END_ALLOW_THREADS
  if (r == ACL_SUCCESS)
    empty_slot(s);
  else
    s->state = LIVE;
  RET(r);
}

static PyObject *c_init_callback_register(PyObject *m, PyObject *args) {
  return do_register(&init_kind, args, "iOO:init_callback_register");
}
static PyObject *c_init_callback_unregister(PyObject *m, PyObject *args) {
  return do_unregister(&init_kind, args, "iO:init_callback_unregister");
}
static PyObject *c_finalize_callback_register(PyObject *m, PyObject *args) {
  return do_register(&fini_kind, args, "iOO:finalize_callback_register");
}
static PyObject *c_finalize_callback_unregister(PyObject *m, PyObject *args) {
  return do_unregister(&fini_kind, args, "iO:finalize_callback_unregister");
}

/* finalize_reference() -> (ref_count, ret): drops one aclInit reference;
 * the last one finalizes as acl.finalize does (finalize callbacks, device
 * resets).  evrt.acl holds no reference of its own (it never calls aclInit
 * itself), so the count is that of the program's acl.init calls. */
static PyObject *c_finalize_reference(PyObject *m, PyObject *unused) {
  uint64_t n = 0;
  aclError r;
  Py_BEGIN_ALLOW_THREADS
  r = aclFinalizeReference(&n);
  Py_END_ALLOW_THREADS
  return u64_ret(n, r);
}

/* Added to evrt.acl by evrtpy_acl_init. */
PyMethodDef evrtpy_acl_init_callback_methods[] = {
    MV(init_callback_register, c_init_callback_register),
    MV(init_callback_unregister, c_init_callback_unregister),
    MV(finalize_callback_register, c_finalize_callback_register),
    MV(finalize_callback_unregister, c_finalize_callback_unregister),
    M0(finalize_reference, c_finalize_reference),
    {NULL, NULL, 0, NULL}};

#endif /* EVRTPY_HAVE_ACL */
