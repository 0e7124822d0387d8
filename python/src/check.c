/*
 * check.c - the synchronization checker from Python (docs/check.md):
 * evrt.check_enabled(), evrt.check_access(obj, mode), evrt.check_findings(),
 * evrt.check_release(obj), evrt.check_acquire(obj).  Objects with the
 * buffer protocol name their memory; a call made inside a function that
 * Stream.launch runs is an access of that work item.  Reports name the
 * Python caller ("file.py:LINE (function)", the innermost frame outside
 * the evrt package) through evrt_check_site_api, and phrase their fix in
 * the Python API.
 */
#include "evrt_module.h"

#include <dlfcn.h>
#include <frameobject.h>
#include <string.h>

/* The directory of the evrt package (this extension's own directory, where
 * its Python modules are too), with its '/'; "" if unknown.  Written once
 * with the GIL held. */
static char pkg_dir[4096];
static int pkg_dir_done;

static const char *package_dir(void) {
  if (!pkg_dir_done) {
    pkg_dir_done = 1;
    Dl_info di;
    const char *sl;
    if (dladdr((void *)package_dir, &di) && di.dli_fname &&
        (sl = strrchr(di.dli_fname, '/')) &&
        (size_t)(sl - di.dli_fname) + 2 < sizeof pkg_dir)
      snprintf(pkg_dir, sizeof pkg_dir, "%.*s",
               (int)(sl - di.dli_fname + 1), di.dli_fname);
  }
  return pkg_dir;
}

/* Is the code in a file of the evrt package (evrt.cuda's wrappers, the
 * graphs module): not the user's line. */
static int in_package(const char *file) {
  const char *d = package_dir();
  size_t n = strlen(d);
  return n && file && strncmp(file, d, n) == 0;
}

/* Name the calling Python line (the innermost frame outside the evrt
 * package) as the call site of the next evrt calls, written in the Python
 * API (a report's fix says s2.wait_stream(s1), evrt.synchronize()). */
static void site_from_python(void) {
  if (!evrt_check_enabled())
    return;
  PyFrameObject *f = PyEval_GetFrame(); /* borrowed */
  Py_XINCREF(f);
  char buf[256] = "";
  while (f) {
    PyCodeObject *code = PyFrame_GetCode(f); /* new reference */
    const char *file = PyUnicode_AsUTF8(code->co_filename);
    const char *name = PyUnicode_AsUTF8(code->co_name);
    if (!file || !name)
      PyErr_Clear();
    PyFrameObject *back = PyFrame_GetBack(f); /* new reference */
    if (!in_package(file) || !back) {
      const char *base = file ? strrchr(file, '/') : NULL;
      snprintf(buf, sizeof buf, "%s (%s:%d)", name ? name : "?",
               base ? base + 1 : (file ? file : "?"),
               PyFrame_GetLineNumber(f));
      Py_XDECREF(back);
      back = NULL;
    }
    Py_DECREF(code);
    Py_DECREF(f);
    f = back;
  }
  evrt_check_site_api(buf[0] ? buf : NULL, EVRT_CHECK_API_PYTHON);
}

void evrtpy_check_site(void) { site_from_python(); }

static PyObject *m_check_enabled(PyObject *self, PyObject *unused) {
  return PyBool_FromLong(evrt_check_enabled());
}

static PyObject *m_check_findings(PyObject *self, PyObject *unused) {
  return PyLong_FromUnsignedLongLong(evrt_check_findings());
}

static PyObject *m_check_access(PyObject *self, PyObject *args,
                                PyObject *kw) {
  static char *names[] = {"obj", "mode", NULL};
  PyObject *obj;
  const char *mode = "rw";
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O|s:check_access", names, &obj,
                                   &mode))
    return NULL;
  unsigned m = 0;
  if (strcmp(mode, "r") == 0)
    m = EVRT_CHECK_READ;
  else if (strcmp(mode, "w") == 0)
    m = EVRT_CHECK_WRITE;
  else if (strcmp(mode, "rw") == 0 || strcmp(mode, "wr") == 0)
    m = EVRT_CHECK_READ | EVRT_CHECK_WRITE;
  else
    return PyErr_Format(PyExc_ValueError,
                        "check_access: mode must be 'r', 'w' or 'rw', not %R",
                        PyTuple_GET_ITEM(args, PyTuple_GET_SIZE(args) - 1));
  Py_buffer view;
  if (PyObject_GetBuffer(obj, &view, PyBUF_ANY_CONTIGUOUS) < 0)
    return NULL;
  site_from_python();
  evrt_status_t st = evrt_check_access(view.buf, (size_t)view.len, m);
  evrt_check_site(NULL);
  PyBuffer_Release(&view);
  if (st)
    return evrtpy_raise(st, "evrt_check_access");
  Py_RETURN_NONE;
}

/* The object itself names the synchronization (its address). */
static PyObject *sync_call(PyObject *obj,
                           evrt_status_t (*fn)(const void *),
                           const char *what) {
  site_from_python();
  evrt_status_t st = fn(obj);
  evrt_check_site(NULL);
  if (st)
    return evrtpy_raise(st, what);
  Py_RETURN_NONE;
}

static PyObject *m_check_release(PyObject *self, PyObject *obj) {
  return sync_call(obj, evrt_check_release, "evrt_check_release");
}

static PyObject *m_check_acquire(PyObject *self, PyObject *obj) {
  return sync_call(obj, evrt_check_acquire, "evrt_check_acquire");
}

PyMethodDef evrtpy_check_methods[] = {
    {"check_enabled", m_check_enabled, METH_NOARGS,
     "check_enabled($module, /)\n--\n\n"
     "True when the synchronization checker is on (EVRT_CHECK=1)."},
    {"check_findings", m_check_findings, METH_NOARGS,
     "check_findings($module, /)\n--\n\n"
     "Number of the checker's findings so far."},
    {"check_access", (PyCFunction)(void (*)(void))m_check_access,
     METH_VARARGS | METH_KEYWORDS,
     "check_access($module, /, obj, mode='rw')\n--\n\n"
     "Declare that the caller reads ('r'), writes ('w') or both the memory "
     "of obj (any contiguous buffer)."},
    {"check_release", m_check_release, METH_O,
     "check_release($module, obj, /)\n--\n\n"
     "Host-level synchronization evrt does not see: everything before it "
     "is ordered before a check_acquire(obj) that observed it."},
    {"check_acquire", m_check_acquire, METH_O,
     "check_acquire($module, obj, /)\n--\n\n"
     "The other half of check_release(obj)."},
    {NULL}};
