/*
 * acl_rt_copy.c - evrt.acl.rt: batch copies, the copy through device
 * addresses (aclrtMemcpyAsyncWithOffset) and the random-number task: the
 * memory tasks whose arguments are arrays or C structs.
 *
 * One ACL family of the pyACL-style module, split from acl_module.c (whose
 * top says the conventions: handles are ints, `ret` comes last, which calls
 * release the GIL); the helpers the families share are in acl_common.h.
 * evrtpy_acl_init adds this file's functions through the table at its end.
 *
 * pyACL has none of these calls: they are named by its rule, the C arrays
 * are lists (their lengths are the C counts) and the C structs are dicts
 * with the C field names.
 */
#include "acl_common.h"

#ifdef EVRTPY_HAVE_ACL

/* ------------------------------------------------- rt: copy with offset */

/* memcpy_async_with_offset(dst, dest_max, dst_data_offset, src, count,
 * src_data_offset, kind, stream) -> ret: dst and src are device memory
 * holding the base addresses (read when the task runs). */
static PyObject *c_memcpy_async_with_offset(PyObject *m, PyObject *args) {
  void *dst, *src, *s;
  size_t dmax, doff, count, soff;
  int kind;
  if (!PyArg_ParseTuple(args, "O&O&O&O&O&O&iO&:memcpy_async_with_offset",
                        to_ptr, &dst, cv_size, &dmax, cv_size, &doff, to_ptr,
                        &src, cv_size, &count, cv_size, &soff, &kind, to_ptr,
                        &s))
    return NULL;
  RET(aclrtMemcpyAsyncWithOffset((void **)dst, dmax, doff, (const void **)src,
                                 count, soff, (aclrtMemcpyKind)kind, s));
}

/* ---------------------------------------------------- rt: batch copies */

/* One aclrtMemcpyBatchAttr: {"dstLoc": {"id", "type"}, "srcLoc": {...},
 * "rsv": optional 16 bytes}. */
static int conv_batch_attr(PyObject *o, void *slot) {
  aclrtMemcpyBatchAttr *a = slot;
  return check_dict(o, "attrs[i]") && dict_loc(o, "dstLoc", &a->dstLoc) &&
         dict_loc(o, "srcLoc", &a->srcLoc) &&
         dict_rsv(o, "rsv", a->rsv, sizeof a->rsv);
}

/* The arrays of a batch: numBatches is the length of the four per-copy
 * lists, numAttrs that of attrs and attrs_indexes. */
struct batch_args {
  void *dsts, *dmax, *srcs, *sizes, *attrs, *idx;
  Py_ssize_t n, nattrs;
};

static void batch_free(struct batch_args *b) {
  PyMem_Free(b->dsts);
  PyMem_Free(b->dmax);
  PyMem_Free(b->srcs);
  PyMem_Free(b->sizes);
  PyMem_Free(b->attrs);
  PyMem_Free(b->idx);
}

static int batch_parse(PyObject *const o[6], struct batch_args *b) {
  Py_ssize_t nd, nm, ns, ni;
  memset(b, 0, sizeof *b);
  if (seq_to_array(o[0], "dsts must be a sequence of ints", sizeof(void *),
                   conv_ptr, &b->dsts, &nd) &&
      seq_to_array(o[1], "dest_maxs must be a sequence of ints",
                   sizeof(size_t), conv_size, &b->dmax, &nm) &&
      seq_to_array(o[2], "srcs must be a sequence of ints", sizeof(void *),
                   conv_ptr, &b->srcs, &ns) &&
      seq_to_array(o[3], "sizes must be a sequence of ints", sizeof(size_t),
                   conv_size, &b->sizes, &b->n) &&
      seq_to_array(o[4], "attrs must be a sequence of dicts",
                   sizeof(aclrtMemcpyBatchAttr), conv_batch_attr, &b->attrs,
                   &b->nattrs) &&
      seq_to_array(o[5], "attrs_indexes must be a sequence of ints",
                   sizeof(size_t), conv_size, &b->idx, &ni) &&
      same_len(nd, b->n, "dsts and sizes") &&
      same_len(nm, b->n, "dest_maxs and sizes") &&
      same_len(ns, b->n, "srcs and sizes") &&
      same_len(ni, b->nattrs, "attrs and attrs_indexes"))
    return 1;
  batch_free(b);
  return 0;
}

/* The four calls: with or without failIndex (V2 drops it), on the caller
 * or as a task of a stream. */
enum batch_kind { B_SYNC, B_SYNC_V2, B_ASYNC, B_ASYNC_V2 };

/* memcpy_batch(dsts, dest_maxs, srcs, sizes, attrs, attrs_indexes)
 *   -> (fail_index, ret), memcpy_batch_v2(same) -> ret, and the _async
 * forms with a stream last.  fail_index is the C value: SIZE_MAX (2**64-1)
 * when no copy is to blame.  The GIL is released: the synchronous forms
 * copy on the caller, and the asynchronous ones wait when a host side is
 * plain memory (CANN's rule). */
static PyObject *batch_call(PyObject *args, const char *fmt,
                            enum batch_kind kind) {
  PyObject *o[6];
  void *s = NULL;
  int async = kind == B_ASYNC || kind == B_ASYNC_V2;
  if (!(async ? PyArg_ParseTuple(args, fmt, &o[0], &o[1], &o[2], &o[3],
                                 &o[4], &o[5], to_ptr, &s)
              : PyArg_ParseTuple(args, fmt, &o[0], &o[1], &o[2], &o[3],
                                 &o[4], &o[5])))
    return NULL;
  struct batch_args b;
  if (!batch_parse(o, &b))
    return NULL;
  size_t fail = SIZE_MAX, n = (size_t)b.n, na = (size_t)b.nattrs;
  aclError r = ACL_SUCCESS;
  Py_BEGIN_ALLOW_THREADS
  switch (kind) {
  case B_SYNC:
    r = aclrtMemcpyBatch(b.dsts, b.dmax, b.srcs, b.sizes, n, b.attrs, b.idx,
                         na, &fail);
    break;
  case B_SYNC_V2:
    r = aclrtMemcpyBatchV2(b.dsts, b.dmax, b.srcs, b.sizes, n, b.attrs, b.idx,
                           na);
    break;
  case B_ASYNC:
    r = aclrtMemcpyBatchAsync(b.dsts, b.dmax, b.srcs, b.sizes, n, b.attrs,
                              b.idx, na, &fail, s);
    break;
  case B_ASYNC_V2:
    r = aclrtMemcpyBatchAsyncV2(b.dsts, b.dmax, b.srcs, b.sizes, n, b.attrs,
                                b.idx, na, s);
    break;
  }
  Py_END_ALLOW_THREADS
  batch_free(&b);
  if (kind == B_SYNC_V2 || kind == B_ASYNC_V2)
    RET(r);
  return Py_BuildValue("(Ki)", (unsigned long long)fail, (int)r);
}

static PyObject *c_memcpy_batch(PyObject *m, PyObject *args) {
  return batch_call(args, "OOOOOO:memcpy_batch", B_SYNC);
}
static PyObject *c_memcpy_batch_v2(PyObject *m, PyObject *args) {
  return batch_call(args, "OOOOOO:memcpy_batch_v2", B_SYNC_V2);
}
static PyObject *c_memcpy_batch_async(PyObject *m, PyObject *args) {
  return batch_call(args, "OOOOOOO&:memcpy_batch_async", B_ASYNC);
}
static PyObject *c_memcpy_batch_async_v2(PyObject *m, PyObject *args) {
  return batch_call(args, "OOOOOOO&:memcpy_batch_async_v2", B_ASYNC_V2);
}

/* ---------------------------------------------------- rt: random numbers */

/* One aclrtRandomParaInfo: {"isAddr": 0/1, "valueOrAddr": an int (its 8
 * bytes in the machine's order: an address, or an integer value) or bytes
 * (at most 8: a float packed with struct.pack, ...), "size": the bytes
 * used}. */
static int conv_para(PyObject *o, void *slot) {
  aclrtRandomParaInfo *p = slot;
  uint64_t is_addr, size;
  memset(p, 0, sizeof *p);
  if (!check_dict(o, "a random parameter") ||
      !dict_u64(o, "isAddr", &is_addr) || !dict_u64(o, "size", &size))
    return 0;
  PyObject *v = PyDict_GetItemString(o, "valueOrAddr");
  if (!v) {
    PyErr_SetString(PyExc_KeyError, "'valueOrAddr' is missing");
    return 0;
  }
  if (PyBytes_Check(v)) {
    if (PyBytes_GET_SIZE(v) > (Py_ssize_t)sizeof p->valueOrAddr) {
      PyErr_SetString(PyExc_ValueError, "'valueOrAddr' holds 8 bytes");
      return 0;
    }
    memcpy(p->valueOrAddr, PyBytes_AS_STRING(v), (size_t)PyBytes_GET_SIZE(v));
  } else {
    uint64_t x;
    if (!cv_u64(v, &x))
      return 0;
    memcpy(p->valueOrAddr, &x, sizeof x);
  }
  p->isAddr = (uint8_t)is_addr;
  p->size = (uint8_t)size;
  return 1;
}

/* The paramInfo union: the dict has the key of one member,
 * "dropoutBitmaskInfo": {"dropoutRation"}, "uniformDisInfo": {"min",
 * "max"} or "normalDisInfo": {"mean", "stddev"} (as malloc_cfg's "value"
 * names its union member). */
static int random_params(PyObject *pi, aclrtRandomNumFuncParaInfo *f) {
  static const struct {
    const char *member, *a, *b;
    size_t off; /* of the member's first aclrtRandomParaInfo */
  } members[] = {
      {"dropoutBitmaskInfo", "dropoutRation", NULL,
       offsetof(aclrtRandomNumFuncParaInfo,
                paramInfo.dropoutBitmaskInfo.dropoutRation)},
      {"uniformDisInfo", "min", "max",
       offsetof(aclrtRandomNumFuncParaInfo, paramInfo.uniformDisInfo.min)},
      {"normalDisInfo", "mean", "stddev",
       offsetof(aclrtRandomNumFuncParaInfo, paramInfo.normalDisInfo.mean)},
  };
  for (size_t i = 0; i < sizeof members / sizeof members[0]; i++) {
    if (!PyDict_GetItemString(pi, members[i].member))
      continue;
    PyObject *d = dict_sub(pi, members[i].member);
    aclrtRandomParaInfo *p =
        (aclrtRandomParaInfo *)((char *)f + members[i].off);
    return d && dict_conv(d, members[i].a, conv_para, &p[0]) &&
           (!members[i].b || dict_conv(d, members[i].b, conv_para, &p[1]));
  }
  PyErr_SetString(PyExc_KeyError,
                  "paramInfo needs one of 'dropoutBitmaskInfo', "
                  "'uniformDisInfo', 'normalDisInfo'");
  return 0;
}

/* The aclrtRandomNumTaskInfo dict: {"dataType", "randomNumFuncParaInfo":
 * {"funcType", "paramInfo": {...}}, "randomParaAddr" (optional),
 * "randomResultAddr", "randomCounterAddr", "randomSeed": parameter,
 * "randomNum": parameter, "rsv": optional 8 bytes}. */
static int random_task_info(PyObject *d, aclrtRandomNumTaskInfo *t) {
  uint64_t type, func;
  PyObject *fp, *pi, *pa;
  memset(t, 0, sizeof *t);
  if (!check_dict(d, "task_info") || !dict_u64(d, "dataType", &type) ||
      !(fp = dict_sub(d, "randomNumFuncParaInfo")) ||
      !dict_u64(fp, "funcType", &func) || !(pi = dict_sub(fp, "paramInfo")) ||
      !random_params(pi, &t->randomNumFuncParaInfo) ||
      !dict_conv(d, "randomResultAddr", conv_ptr, &t->randomResultAddr) ||
      !dict_conv(d, "randomCounterAddr", conv_ptr, &t->randomCounterAddr) ||
      !dict_conv(d, "randomSeed", conv_para, &t->randomSeed) ||
      !dict_conv(d, "randomNum", conv_para, &t->randomNum) ||
      !dict_rsv(d, "rsv", t->rsv, sizeof t->rsv))
    return 0;
  if ((pa = PyDict_GetItemString(d, "randomParaAddr")) &&
      !to_ptr(pa, &t->randomParaAddr))
    return 0;
  t->dataType = (aclDataType)type;
  t->randomNumFuncParaInfo.funcType = (aclrtRandomNumFuncType)func;
  return 1;
}

/* random_num_async(task_info, stream, reserve) -> ret (reserve must be 0,
 * as reduce_async's) */
static PyObject *c_random_num_async(PyObject *m, PyObject *args) {
  PyObject *d;
  void *s, *reserve;
  aclrtRandomNumTaskInfo t;
  if (!PyArg_ParseTuple(args, "OO&O&:random_num_async", &d, to_ptr, &s,
                        to_ptr, &reserve) ||
      !random_task_info(d, &t))
    return NULL;
  RET(aclrtRandomNumAsync(&t, s, reserve));
}

/* Added to evrt.acl.rt by evrtpy_acl_init. */
PyMethodDef evrtpy_acl_rt_copy_methods[] = {
    MV(memcpy_async_with_offset, c_memcpy_async_with_offset),
    MV(memcpy_batch, c_memcpy_batch),
    MV(memcpy_batch_v2, c_memcpy_batch_v2),
    MV(memcpy_batch_async, c_memcpy_batch_async),
    MV(memcpy_batch_async_v2, c_memcpy_batch_async_v2),
    MV(random_num_async, c_random_num_async),
    {NULL, NULL, 0, NULL}};

#endif /* EVRTPY_HAVE_ACL */
