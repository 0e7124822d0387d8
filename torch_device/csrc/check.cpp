// What the evrt torch device tells EVRT_CHECK (docs/check.md, "Torch
// programs"): the byte ranges a task's tensors cover, and the layer's own
// waits, which must not order the program's work.  Everything here does
// nothing unless evrt_check_enabled().
#include <Python.h>

#include "evrt_torch.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

namespace evrt_torch {

bool check_on() { return evrt_check_enabled() != 0; }

Unobserved::Unobserved() { evrt_check_unobserved_begin(); }
Unobserved::~Unobserved() { evrt_check_unobserved_end(); }

namespace {

// Above this many separate runs a view is declared as its [min, max] byte
// span instead (a superset: it can only add conflicts with views that
// interleave with it, never hide one).
constexpr int64_t kMaxRuns = 4096;

struct Dim {
  int64_t size, stride;
};

}  // namespace

void declare_tensor(const char* base, int64_t offset, c10::IntArrayRef sizes,
                    c10::IntArrayRef strides, size_t itemsize, unsigned mode) {
  if (!base) return;
  // Negative strides walk down from the offset: start at the lowest element
  // and walk up instead (the same set of elements).
  int64_t lo = offset;
  std::vector<Dim> dims;
  for (size_t i = 0; i < sizes.size(); i++) {
    if (sizes[i] == 0) return;  // no element: no access
    if (sizes[i] == 1 || strides[i] == 0) continue;
    int64_t st = strides[i];
    if (st < 0) {
      lo += st * (sizes[i] - 1);
      st = -st;
    }
    dims.push_back({sizes[i], st});
  }
  std::sort(dims.begin(), dims.end(),
            [](const Dim& a, const Dim& b) { return a.stride < b.stride; });
  // The innermost dimensions that together are one contiguous run.
  int64_t run = 1;  // elements
  size_t k = 0;
  while (k < dims.size() && dims[k].stride == run) run *= dims[k++].size;
  int64_t runs = 1, hi = lo + run - 1;
  for (size_t i = k; i < dims.size(); i++) {
    runs = runs > kMaxRuns ? runs : runs * dims[i].size;
    hi += dims[i].stride * (dims[i].size - 1);
  }
  const char* p0 = base + lo * static_cast<int64_t>(itemsize);
  if (runs > kMaxRuns || k == dims.size()) {
    // One range: contiguous (k covers every dimension), or the span.
    evrt_check_access(p0, static_cast<size_t>(hi - lo + 1) * itemsize, mode);
    return;
  }
  // An odometer over the outer dimensions, one access per run.
  std::vector<int64_t> idx(dims.size() - k, 0);
  size_t bytes = static_cast<size_t>(run) * itemsize;
  for (int64_t r = 0; r < runs; r++) {
    int64_t off = 0;
    for (size_t i = 0; i < idx.size(); i++) off += idx[i] * dims[k + i].stride;
    evrt_check_access(p0 + off * static_cast<int64_t>(itemsize), bytes, mode);
    for (size_t i = 0; i < idx.size(); i++) {
      if (++idx[i] < dims[k + i].size) break;
      idx[i] = 0;
    }
  }
}

std::string describe_tensor(const std::string& op, const char* arg,
                            c10::ScalarType dtype, c10::IntArrayRef sizes) {
  std::string s = op + " " + arg + ": " + c10::toString(dtype) + "[";
  for (size_t i = 0; i < sizes.size(); i++)
    s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + "]";
}

namespace {

// torch's, evrt_torch's and the interpreter's own frames are not the
// user's: a report names the innermost frame of the program itself.
bool library_frame(const char* file) {
  return std::strstr(file, "/torch/") || std::strstr(file, "/evrt_torch/") ||
         std::strncmp(file, "<frozen", 7) == 0;
}

// "train.py:42 (step)" of the innermost user frame, or "" (no Python
// frame).  Caller holds the GIL.
std::string python_site() {
  PyFrameObject* f = PyEval_GetFrame();  // borrowed
  if (!f) return "";
  Py_INCREF(f);
  std::string out;
  while (f) {
    PyCodeObject* code = PyFrame_GetCode(f);  // new reference
    const char* file = PyUnicode_AsUTF8(code->co_filename);
    if (file && !library_frame(file)) {
      const char* fn = PyUnicode_AsUTF8(code->co_name);
      out = std::string(file) + ":" + std::to_string(PyFrame_GetLineNumber(f)) +
            " (" + (fn ? fn : "?") + ")";
      Py_DECREF(code);
      Py_DECREF(f);
      break;
    }
    if (!file) PyErr_Clear();
    Py_DECREF(code);
    PyFrameObject* back = PyFrame_GetBack(f);  // new reference
    Py_DECREF(f);
    f = back;
  }
  return out;
}

}  // namespace


// Nested sites (a copy that enqueues a task): the outermost one names
// them all.
thread_local int tls_site_depth = 0;

std::string user_frame() {
  // torch's bindings release the GIL around an op: take it back to read
  // the frames, on a thread that has a Python state (the calling Python
  // thread; not an evrt worker, nor an autograd thread that never ran
  // Python).  No lock of this layer is held here (never under the
  // allocator's mutex: a thread holding the GIL may be waiting for it).
  if (!check_on() || !Py_IsInitialized() || _Py_IsFinalizing() ||
      !PyGILState_GetThisThreadState())
    return "";
  PyGILState_STATE g = PyGILState_Ensure();
  std::string where = python_site();
  PyGILState_Release(g);
  return where;
}

UserSite::UserSite() {
  if (tls_site_depth++ > 0) return;
  std::string where = user_frame();
  if (where.empty()) return;
  set_ = true;
  evrt_check_site(where.c_str());
}

UserSite::~UserSite() {
  tls_site_depth--;
  if (set_) evrt_check_site(nullptr);
}

}  // namespace evrt_torch
