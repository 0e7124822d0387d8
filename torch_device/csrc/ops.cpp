// The kernels of the evrt device.  Factory, view and copy kernels are
// registered one by one; every other aten op goes through one boxed
// fallback that computes the outputs' metadata on the host (the op on meta
// tensors), allocates them, and enqueues on the current evrt stream a task
// that runs the CPU kernel over the device memory (the CPU backend's device
// memory is host memory).  The host returns before the op runs.
#include "evrt_torch.h"

#include <ATen/ATen.h>
#include <ATen/EmptyTensor.h>
#include <c10/core/DefaultDtype.h>
#include <ATen/native/Resize.h>
#include <c10/core/CPUAllocator.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/view_native.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <c10/util/irange.h>
#include <torch/library.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_map>

// libgomp's, loaded with torch (the wheel's own copy).
extern "C" void omp_set_num_threads(int n);

namespace evrt_torch {

// ============================================================ settings

static bool env_on(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::strcmp(v, "0") != 0;
}

bool launch_blocking() {
  static bool on = env_on("EVRT_TORCH_LAUNCH_BLOCKING");
  return on;
}

namespace {
std::mutex g_sync_mu;  // guards g_syncs (leaf lock)
std::map<std::string, uint64_t>* g_syncs = new std::map<std::string, uint64_t>();

struct SyncReport {
  ~SyncReport() {
    if (!env_on("EVRT_TORCH_SYNC_REPORT")) return;
    auto counts = sync_counts();
    uint64_t total = 0;
    for (auto& kv : counts) total += kv.second;
    std::fprintf(stderr, "evrt_torch: %llu op call(s) ran synchronously",
                 static_cast<unsigned long long>(total));
    for (auto& kv : counts)
      std::fprintf(stderr, "%s %s x%llu", &kv == &*counts.begin() ? ":" : ",",
                   kv.first.c_str(), static_cast<unsigned long long>(kv.second));
    std::fprintf(stderr, "\n");
  }
} g_sync_report;
}  // namespace

void count_sync(const std::string& op) {
  std::lock_guard<std::mutex> lock(g_sync_mu);
  (*g_syncs)[op]++;
}
std::map<std::string, uint64_t> sync_counts() {
  std::lock_guard<std::mutex> lock(g_sync_mu);
  return *g_syncs;
}
void reset_sync_counts() {
  std::lock_guard<std::mutex> lock(g_sync_mu);
  g_syncs->clear();
}

namespace {

constexpr auto kEvrt = c10::DeviceType::PrivateUse1;

bool is_evrt(const at::Tensor& t) { return t.defined() && t.device().type() == kEvrt; }

// ========================================================= tensor views
//
// What a task knows of a tensor: where its bytes are and how they are laid
// out, and whether the op reads or writes it.  Issue 27 declares these
// ranges to EVRT_CHECK; nothing here holds a reference to the tensor (a
// device's kernel does not either: the caching allocator keeps freed memory
// mapped, and record_stream orders its reuse).
struct TensorRef {
  char* base = nullptr;  // storage data
  int64_t offset = 0;    // storage offset, in elements
  std::vector<int64_t> sizes, strides;
  at::ScalarType dtype = at::kFloat;
  bool write = false;
  bool tracked = true;  // device memory (a copy's host staging is not)

  // Declare its elements to EVRT_CHECK (the caller checked check_on()).
  void declare(unsigned mode) const {
    if (tracked)
      declare_tensor(base, offset, sizes, strides, c10::elementSize(dtype), mode);
  }

  static TensorRef of(const at::Tensor& t, bool write) {
    TensorRef r;
    r.base = static_cast<char*>(t.storage().mutable_data());
    r.offset = t.storage_offset();
    r.sizes = t.sizes().vec();
    r.strides = t.strides().vec();
    r.dtype = t.scalar_type();
    r.write = write;
    return r;
  }
  // A CPU tensor over the same bytes (no ownership).  resizable: a CPU
  // kernel may grow it (an out= kernel that resizes its output on the
  // way), moving it to CPU memory of its own; the caller copies it back.
  at::Tensor cpu(bool resizable = false) const {
    auto opts = at::TensorOptions().dtype(dtype).device(at::kCPU);
    int64_t numel = 1;
    for (auto s : sizes) numel *= s;
    if (!resizable && (numel == 0 || !base))
      return at::empty_strided(sizes, strides, opts);
    if (!resizable)
      return at::from_blob(base + offset * c10::elementSize(dtype), sizes,
                           strides, [](void*) {}, opts);
    size_t isz = c10::elementSize(dtype);
    size_t nbytes = numel == 0 ? 0
        : at::detail::computeStorageNbytes(sizes, strides, isz) ;
    char* p = base ? base + offset * isz : nullptr;
    c10::Storage st(c10::Storage::use_byte_size_t(), nbytes,
                    c10::DataPtr(p, p, [](void*) {}, c10::Device(at::kCPU)),
                    c10::GetCPUAllocator(), /*resizable=*/true);
    auto t = at::empty({0}, opts);
    t.unsafeGetTensorImpl()->set_storage_keep_dtype(std::move(st));
    t.unsafeGetTensorImpl()->set_sizes_and_strides(sizes, strides);
    return t;
  }
};

// The same tensor on the meta device (shape and dtype only).
at::Tensor to_meta(const at::Tensor& t) {
  auto m = at::empty_strided(t.sizes(), t.strides(),
                             t.options().device(at::kMeta));
  if (t.unsafeGetTensorImpl()->is_wrapped_number())
    m.unsafeGetTensorImpl()->set_wrapped_number(true);
  return m;
}

// ====================================================== argument scan

struct Scan {
  c10::DeviceIndex device = -1;
  bool bad_cpu = false;
  std::string bad_device;
};

void note_tensor(Scan& sc, const at::Tensor& t) {
  if (!t.defined()) return;
  if (t.device().type() == kEvrt) {
    if (sc.device < 0)
      sc.device = t.device().index();
    else if (sc.device != t.device().index() && sc.bad_device.empty())
      sc.bad_device = t.device().str();
  } else if (t.device().type() == at::kCPU && t.dim() == 0) {
    // CPU scalars are allowed with device tensors, as on CUDA.
  } else if (t.device().type() != at::kMeta && sc.bad_device.empty()) {
    sc.bad_device = t.device().str();
  }
}

template <typename F>
void for_each_tensor(const c10::IValue& v, F&& f) {
  if (v.isTensor()) {
    f(v.toTensor());
  } else if (v.isTensorList()) {
    for (const at::Tensor& t : v.toTensorList()) f(t);
  } else if (v.isList()) {
    for (const c10::IValue& e : v.toListRef())
      if (e.isTensor()) f(e.toTensor());
  }
}

// Rewrite every tensor of an IValue (lists included; None stays None).
// f(tensor, element index: -1 for a plain Tensor argument).
using TensorFn = std::function<at::Tensor(const at::Tensor&, int64_t)>;
c10::IValue map_tensors(const c10::IValue& v, const TensorFn& f) {
  if (v.isTensor()) return f(v.toTensor(), -1);
  if (v.isTensorList()) {
    c10::List<at::Tensor> out;
    int64_t ei = 0;
    for (const at::Tensor& t : v.toTensorList()) out.push_back(f(t, ei++));
    return out;
  }
  if (v.isList()) {
    auto l = v.toList();
    if (l.elementType()->kind() == c10::TypeKind::OptionalType) {
      c10::List<std::optional<at::Tensor>> out;
      int64_t ei = 0;
      for (const c10::IValue& e : v.toListRef()) {
        out.push_back(e.isTensor() ? std::optional<at::Tensor>(f(e.toTensor(), ei))
                                   : std::nullopt);
        ei++;
      }
      return out;
    }
  }
  if (v.isDevice() && v.toDevice().type() == kEvrt) return c10::IValue(c10::Device(at::kCPU));
  return v;
}

bool is_write_arg(const c10::FunctionSchema& s, size_t i) {
  const auto& a = s.arguments()[i].alias_info();
  return a && a->isWrite();
}

// ================================================================ tasks

// Thread-local state a CPU kernel sees: the dispatch key TLS (Python keys
// removed: a task never enters Python) and grad mode, from enqueue time.
// (at::ThreadLocalState is not used: it holds the Python modes' objects,
// whose release on a worker would take the GIL.)
struct TaskTLS {
  c10::DispatchKeySet included, excluded;
  bool grad = false;
  static TaskTLS capture() {
    TaskTLS s;
    auto keys = c10::impl::tls_local_dispatch_key_set();
    auto py = c10::DispatchKeySet({c10::DispatchKey::Python,
                                   c10::DispatchKey::PythonTLSSnapshot,
                                   c10::DispatchKey::PythonDispatcher,
                                   c10::DispatchKey::PreDispatch});
    s.included = keys.included_ - py;
    s.excluded = keys.excluded_ | py;
    s.grad = c10::GradMode::is_enabled();
    return s;
  }
};

struct Task {
  c10::OperatorHandle op;
  std::string name;
  std::vector<c10::IValue> args;  // tensors replaced by their views below
  // (argument index, element index or -1, view)
  std::vector<std::tuple<size_t, int64_t, TensorRef>> ins;
  // new outputs: (return index, element index or -1, view)
  std::vector<std::tuple<size_t, int64_t, TensorRef>> outs;
  TaskTLS tls;
  uint64_t stream_id = 0;
  explicit Task(const c10::OperatorHandle& h) : op(h) {}
};

// Build the CPU stack of a task: its arguments with every device tensor a
// CPU view of the same bytes.
// Run the CPU kernel of the task over CPU views of its device tensors,
// and write its new outputs into their device memory.
void run_cpu(const Task& t) {
  std::map<std::pair<size_t, int64_t>, at::Tensor> views;
  for (auto& [ai, ei, ref] : t.ins) views[{ai, ei}] = ref.cpu(ref.write);
  std::vector<c10::IValue> stack;
  for (size_t ai = 0; ai < t.args.size(); ai++)
    stack.push_back(map_tensors(t.args[ai], [&](const at::Tensor& x, int64_t ei) {
      auto it = views.find({ai, ei});
      return it == views.end() ? x : it->second;
    }));
  t.op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), &stack);
  // A written argument the kernel moved to memory of its own (it resized
  // it): its final value goes back to the device memory.
  for (auto& [ai, ei, ref] : t.ins) {
    if (!ref.write) continue;
    const at::Tensor& v = views[{ai, ei}];
    char* p = ref.base ? ref.base + ref.offset * c10::elementSize(ref.dtype) : nullptr;
    if (v.numel() > 0 && static_cast<char*>(v.data_ptr()) != p) ref.cpu().copy_(v);
  }
  for (auto& [ri, ei, ref] : t.outs) {
    const c10::IValue& r = stack.at(ri);
    at::Tensor res = ei < 0 ? r.toTensor() : r.toTensorList().get(ei);
    ref.cpu().copy_(res);
  }
}

// EVRT_CHECK: the task's accesses, each under a site naming the op, the
// argument and the tensor (a report names them).  Declared before the
// kernel runs: only the checker's order matters, not the moment.
void declare_task(const Task& t) {
  const auto& schema = t.op.schema();
  for (auto& [ai, ei, ref] : t.ins) {
    const char* arg = ai < schema.arguments().size() ? schema.arguments()[ai].name().c_str() : "self";
    evrt_check_site(describe_tensor(t.name, arg, ref.dtype, ref.sizes).c_str());
    ref.declare(ref.write ? EVRT_CHECK_READ | EVRT_CHECK_WRITE : EVRT_CHECK_READ);
  }
  for (auto& [ri, ei, ref] : t.outs) {
    evrt_check_site(describe_tensor(t.name, "result", ref.dtype, ref.sizes).c_str());
    ref.declare(EVRT_CHECK_WRITE);
  }
  evrt_check_site(nullptr);
}

int32_t task_main(void* p) {
  std::unique_ptr<Task> t(static_cast<Task*>(p));
  try {
    if (check_on()) declare_task(*t);
    c10::impl::ForceDispatchKeyGuard keys(t->tls.included, t->tls.excluded);
    c10::AutoGradMode grad(t->tls.grad);
    // Serial kernels on workers: a stream is the unit of parallelism here.
    // ATen's OpenMP team, started from each worker thread and spinning
    // between regions, oversubscribed the cores (a side stream's chain of
    // 256x256 matmuls ran 8-15x slower than with one thread).  The count
    // is an OpenMP per-thread setting (at::get_num_threads reads it), so
    // the host's own CPU ops keep theirs.
    thread_local bool serial = false;
    if (!serial) {
      omp_set_num_threads(1);
      serial = true;
    }
    run_cpu(*t);
    return 0;
  } catch (const std::exception& e) {
    record_task_failure(t->stream_id, t->name + ": " + e.what());
    return 1;
  } catch (...) {
    record_task_failure(t->stream_id, t->name + ": unknown exception");
    return 1;
  }
}

void enqueue(std::unique_ptr<Task> t, const c10::Stream& s) {
  evrt_stream_t ns = native_stream(s);
  evrt_stream_get_id(ns, &t->stream_id);
  Task* raw = t.release();
  UserSite site;
  evrt_status_t st = evrt_launch_host_func_status(ns, task_main, raw);
  if (st != EVRT_SUCCESS) {
    delete raw;
    check(st, "launch");
  }
  if (launch_blocking()) {
    Unobserved quiet;  // a debugging mode, not the program's ordering
    synchronize_stream(s);
  }
}

// ============================================================ fallback

bool returns_view(const c10::FunctionSchema& s) {
  for (const auto& r : s.returns())
    if (r.alias_info() && !r.alias_info()->isWrite()) return true;
  return false;
}

bool returns_only_tensors(const c10::FunctionSchema& s) {
  for (const auto& r : s.returns()) {
    auto k = r.type()->kind();
    if (k == c10::TypeKind::TensorType) continue;
    if (k == c10::TypeKind::ListType &&
        r.type()->containedType(0)->kind() == c10::TypeKind::TensorType)
      continue;
    return false;
  }
  return true;
}

// The argument index that return ri aliases (same alias set), or -1.
int64_t aliased_arg(const c10::FunctionSchema& s, size_t ri) {
  const auto& ra = s.returns()[ri].alias_info();
  if (!ra) return -1;
  for (size_t i = 0; i < s.arguments().size(); i++) {
    const auto& aa = s.arguments()[i].alias_info();
    if (aa && aa->beforeSets() == ra->beforeSets()) return static_cast<int64_t>(i);
  }
  return -1;
}

const std::string& op_name(const c10::OperatorHandle& op);
std::string host_site(const std::string& what);

void declare_only(void* p) {
  std::unique_ptr<Task> t(static_cast<Task*>(p));
  try {
    declare_task(*t);
  } catch (...) {  // (a failed string build: nothing declared)
  }
}

// The synchronous route: wait for the current stream, run the CPU kernel
// on the host over the device memory, copy new outputs to fresh device
// tensors.  For ops whose output shape depends on the data (nonzero,
// masked_select, unique), ops that return host values, and ops without a
// meta kernel.  Counted (EVRT_TORCH_SYNC_REPORT).
void sync_route(const c10::OperatorHandle& op, torch::jit::Stack* stack,
                c10::DeviceIndex dev) {
  const auto& schema = op.schema();
  size_t nargs = schema.arguments().size();
  c10::Stream s = current_stream(dev);
  std::vector<c10::IValue> args(stack->end() - nargs, stack->end());
  if (check_on()) {
    // The op reads (and writes) its arguments on stream s, in its order: a
    // task of no kernel that declares them, before the synchronize below,
    // which is the layer's own (it orders nothing for the checker).
    auto task = std::make_unique<Task>(op);
    task->name = op_name(op);
    for (size_t i = 0; i < nargs; i++) {
      bool w = is_write_arg(schema, i);
      for_each_tensor(args[i], [&](const at::Tensor& t) {
        if (is_evrt(t)) task->ins.emplace_back(i, -1, TensorRef::of(t, w));
      });
    }
    evrt_stream_t ns = native_stream(s);
    Task* raw = task.release();
    UserSite site;
    evrt_status_t st = evrt_launch_host_func(ns, declare_only, raw);
    if (st != EVRT_SUCCESS) {
      delete raw;
      check(st, "launch");
    }
  }
  {
    Unobserved quiet;
    synchronize_stream(s);
  }
  std::vector<c10::IValue> cpu_args;
  for (const auto& v : args)
    cpu_args.push_back(map_tensors(v, [](const at::Tensor& t, int64_t) {
      return is_evrt(t) ? TensorRef::of(t, false).cpu() : t;
    }));
  op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), &cpu_args);
  torch::jit::drop(*stack, nargs);
  c10::Device d(kEvrt, dev);
  for (size_t ri = 0; ri < schema.returns().size(); ri++) {
    const c10::IValue& r = cpu_args[ri];
    int64_t ai = aliased_arg(schema, ri);
    if (ai >= 0) {
      torch::jit::push(*stack, args[ai]);
      continue;
    }
    torch::jit::push(*stack, map_tensors(r, [&](const at::Tensor& t, int64_t) {
      if (!t.defined()) return t;
      auto out = at::empty_strided(t.sizes(), t.strides(), t.options().device(d));
      TensorRef::of(out, true).cpu().copy_(t);
      return out;
    }));
  }
  count_sync(schema.operator_name().name +
             (schema.overload_name().empty() ? "" : "." + schema.overload_name()));
}

// View ops without a kernel of their own (unfold, view_as_real, ...): run
// the CPU kernel on views of the same bytes (metadata only, no task) and
// give each result the input's storage.
void view_route(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const auto& schema = op.schema();
  size_t nargs = schema.arguments().size();
  std::vector<c10::IValue> args(stack->end() - nargs, stack->end());
  std::vector<c10::IValue> cpu_args;
  std::vector<at::Tensor> cpu_bases(nargs);
  for (size_t i = 0; i < nargs; i++) {
    cpu_args.push_back(map_tensors(args[i], [&](const at::Tensor& t, int64_t) {
      if (!is_evrt(t)) return t;
      // The whole storage as a CPU tensor, then t's layout over it, so
      // that the result's storage offset counts from the storage's start.
      auto opts = at::TensorOptions().dtype(t.dtype()).device(at::kCPU);
      int64_t n = static_cast<int64_t>(t.storage().nbytes() / t.itemsize());
      auto whole = at::from_blob(t.storage().mutable_data(), {n}, [](void*) {}, opts);
      return whole.as_strided(t.sizes(), t.strides(), t.storage_offset());
    }));
  }
  op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), &cpu_args);
  torch::jit::drop(*stack, nargs);
  for (size_t ri = 0; ri < schema.returns().size(); ri++) {
    int64_t ai = aliased_arg(schema, ri);
    TORCH_CHECK(ai >= 0 && args[ai].isTensor(), "evrt: view op ", schema.name(),
                " with an unsupported alias pattern");
    at::Tensor base = args[ai].toTensor();
    torch::jit::push(*stack, map_tensors(cpu_args[ri], [&](const at::Tensor& r, int64_t) {
      return at::native::as_strided_tensorimpl(base, r.sizes(), r.strides(),
                                               r.storage_offset());
    }));
  }
}

// ------------------------------------------------------ metadata cache
//
// The meta run costs tens of microseconds (for some ops torch's Meta kernel
// is a Python one: 77 us for add), more than the rest of the enqueue.  Its
// result is a function of the op, the inputs' metadata and the non-tensor
// arguments, so it is kept per (op, those) in a bounded map.  Arguments of
// a kind the key does not encode make the call uncacheable.

struct MetaOut {
  std::vector<int64_t> sizes, strides;
  at::ScalarType dtype = at::kFloat;
  static MetaOut of(const at::Tensor& t) {
    return MetaOut{t.sizes().vec(), t.strides().vec(), t.scalar_type()};
  }
};

struct MetaResult {
  std::vector<std::pair<size_t, MetaOut>> written;  // write args after the run
  std::vector<std::vector<MetaOut>> rets;           // new outputs per return
};

template <typename T>
void put(std::string* k, const T& v) {
  k->append(reinterpret_cast<const char*>(&v), sizeof v);
}

bool key_tensor(std::string* k, const at::Tensor& t) {
  if (!t.defined()) {
    k->push_back('U');
    return true;
  }
  k->push_back(is_evrt(t) ? 'E' : 'C');
  put(k, static_cast<int8_t>(t.scalar_type()));
  put(k, static_cast<int8_t>(t.unsafeGetTensorImpl()->is_wrapped_number()));
  put(k, static_cast<int32_t>(t.dim()));
  for (auto x : t.sizes()) put(k, x);
  for (auto x : t.strides()) put(k, x);
  return true;
}

bool key_value(std::string* k, const c10::IValue& v) {
  if (v.isTensor()) return key_tensor(k, v.toTensor());
  if (v.isNone()) { k->push_back('N'); return true; }
  if (v.isBool()) { k->push_back('b'); put(k, v.toBool()); return true; }
  if (v.isInt()) { k->push_back('i'); put(k, v.toInt()); return true; }
  if (v.isDouble()) { k->push_back('d'); put(k, v.toDouble()); return true; }
  if (v.isComplexDouble()) {
    k->push_back('c');
    put(k, v.toComplexDouble());
    return true;
  }
  if (v.isString()) {
    k->push_back('s');
    k->append(v.toStringRef());
    k->push_back('\0');
    return true;
  }
  if (v.isDevice()) {
    k->push_back('v');
    put(k, static_cast<int16_t>(v.toDevice().type()));
    put(k, static_cast<int16_t>(v.toDevice().index()));
    return true;
  }
  if (v.isList()) {
    k->push_back('[');
    put(k, static_cast<uint64_t>(v.toListRef().size()));
    for (const c10::IValue& e : v.toListRef())
      if (!key_value(k, e)) return false;
    k->push_back(']');
    return true;
  }
  return false;  // generators, storages, objects...
}

bool meta_key(const c10::OperatorHandle& op, c10::ArrayRef<c10::IValue> args,
              std::string* key) {
  key->reserve(128);
  put(key, static_cast<const void*>(&op.schema()));
  // What a dtype=None may resolve to.
  put(key, static_cast<int8_t>(c10::get_default_dtype_as_scalartype()));
  for (const auto& v : args)
    if (!key_value(key, v)) return false;
  return true;
}

std::mutex g_meta_mu;  // guards g_meta (leaf lock)
std::unordered_map<std::string, std::shared_ptr<const MetaResult>>* g_meta =
    new std::unordered_map<std::string, std::shared_ptr<const MetaResult>>();

std::shared_ptr<const MetaResult> meta_cache_find(const std::string& key) {
  std::lock_guard<std::mutex> lock(g_meta_mu);
  auto it = g_meta->find(key);
  return it == g_meta->end() ? nullptr : it->second;
}

void meta_cache_put(const std::string& key, std::shared_ptr<const MetaResult> r) {
  std::lock_guard<std::mutex> lock(g_meta_mu);
  if (g_meta->size() >= 16384) g_meta->clear();  // bounded; rebuilt on use
  g_meta->emplace(key, std::move(r));
}

const std::string& op_name(const c10::OperatorHandle& op) {
  static std::mutex mu;  // guards names
  static auto* names = new std::unordered_map<const void*, std::string>();
  std::lock_guard<std::mutex> lock(mu);
  auto [it, fresh] = names->try_emplace(&op.schema());
  if (fresh) {
    const auto& s = op.schema();
    it->second = s.operator_name().name +
                 (s.overload_name().empty() ? "" : "." + s.overload_name());
  }
  return it->second;
}

void evrt_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const auto& schema = op.schema();
  size_t nargs = schema.arguments().size();
  auto args = torch::jit::last(*stack, nargs);

  Scan sc;
  for (const auto& v : args) for_each_tensor(v, [&](const at::Tensor& t) { note_tensor(sc, t); });
  if (!sc.bad_device.empty()) {
    std::string first = sc.device >= 0 ? c10::Device(kEvrt, sc.device).str() : "cpu";
    TORCH_CHECK(false, "Expected all tensors to be on the same device, but found at least two devices, ",
                first, " and ", sc.bad_device, "! (when checking arguments of ",
                schema.name(), ")");
  }
  c10::DeviceIndex dev = sc.device >= 0 ? sc.device : current_device();
  c10::DeviceGuard guard(c10::Device(kEvrt, dev));

  if (returns_view(schema)) return view_route(op, stack);
  if (!returns_only_tensors(schema)) return sync_route(op, stack, dev);

  // Output metadata on the host: the op on meta tensors, or what it gave
  // last time for the same op and the same input metadata.
  std::string key;
  std::shared_ptr<const MetaResult> mr;
  bool cacheable = meta_key(op, args, &key);
  if (cacheable) mr = meta_cache_find(key);
  if (!mr) {
    std::vector<c10::IValue> meta(args.begin(), args.end());
    for (auto& v : meta)
      v = map_tensors(v, [](const at::Tensor& t, int64_t) {
        return is_evrt(t) ? to_meta(t) : t;
      });
    std::vector<c10::IValue> meta_args = meta;  // the meta inputs, kept
    try {
      op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::Meta), &meta);
    } catch (const std::exception&) {
      // No meta kernel, or a data-dependent output shape (a Python meta
      // kernel raises NotImplementedError): synchronous.
      return sync_route(op, stack, dev);
    }
    auto fresh = std::make_shared<MetaResult>();
    for (size_t i = 0; i < nargs; i++) {
      if (!is_write_arg(schema, i) || !meta_args[i].isTensor()) continue;
      const at::Tensor& m = meta_args[i].toTensor();
      if (m.defined()) fresh->written.emplace_back(i, MetaOut::of(m));
    }
    for (size_t ri = 0; ri < schema.returns().size(); ri++) {
      std::vector<MetaOut> outs;
      if (aliased_arg(schema, ri) < 0)
        map_tensors(meta[ri], [&](const at::Tensor& mt, int64_t) {
          outs.push_back(MetaOut::of(mt));
          return mt;
        });
      fresh->rets.push_back(std::move(outs));
    }
    mr = fresh;
    if (cacheable) meta_cache_put(key, mr);
  }

  auto task = std::make_unique<Task>(op);
  task->name = op_name(op);
  task->tls = TaskTLS::capture();

  // out= arguments the meta kernel resized: resize the device tensors too.
  for (const auto& [i, m] : mr->written) {
    const at::Tensor& real = args[i].toTensor();
    if (is_evrt(real) && (real.sizes() != c10::IntArrayRef(m.sizes) ||
                          real.strides() != c10::IntArrayRef(m.strides))) {
      real.resize_(m.sizes);
      if (real.strides() != c10::IntArrayRef(m.strides))
        real.as_strided_(m.sizes, m.strides, real.storage_offset());
    }
  }

  c10::Device d(kEvrt, dev);
  for (size_t i = 0; i < nargs; i++) {
    bool w = is_write_arg(schema, i);
    task->args.push_back(map_tensors(args[i], [&](const at::Tensor& t, int64_t ei) {
      if (is_evrt(t)) task->ins.emplace_back(i, ei, TensorRef::of(t, w));
      // The placeholder for a device tensor; a CPU scalar is copied now
      // (the task owns the copy, which no Python object refers to).
      return is_evrt(t) ? at::Tensor() : (t.defined() ? t.clone() : t);
    }));
  }

  std::vector<c10::IValue> results;
  for (size_t ri = 0; ri < schema.returns().size(); ri++) {
    int64_t ai = aliased_arg(schema, ri);
    if (ai >= 0) {
      results.push_back(args[ai]);
      continue;
    }
    const auto& outs = mr->rets[ri];
    auto make = [&](const MetaOut& m, int64_t ei) {
      auto out = at::empty_strided(m.sizes, m.strides,
                                   at::TensorOptions().dtype(m.dtype).device(d));
      task->outs.emplace_back(ri, ei, TensorRef::of(out, true));
      return out;
    };
    if (schema.returns()[ri].type()->kind() == c10::TypeKind::TensorType) {
      results.push_back(make(outs.at(0), -1));
    } else {
      c10::List<at::Tensor> l;
      for (size_t k = 0; k < outs.size(); k++) l.push_back(make(outs[k], static_cast<int64_t>(k)));
      results.push_back(l);
    }
  }

  enqueue(std::move(task), current_stream(dev));
  torch::jit::drop(*stack, nargs);
  for (auto& r : results) torch::jit::push(*stack, std::move(r));
}

// ===================================================== explicit kernels

at::Tensor empty_memory_format(c10::IntArrayRef size, std::optional<at::ScalarType> dtype,
                               std::optional<at::Layout>, std::optional<at::Device> device,
                               std::optional<bool>, std::optional<at::MemoryFormat> mf) {
  c10::Device d = device.value_or(c10::Device(kEvrt, current_device()));
  if (d.index() < 0) d = c10::Device(kEvrt, current_device());
  check_device_index(d.index());
  c10::DeviceGuard g(d);
  return at::detail::empty_generic(size, device_allocator(),
                                   c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
                                   c10::dtype_or_default(dtype), mf);
}

at::Tensor empty_strided(c10::IntArrayRef size, c10::IntArrayRef stride,
                         std::optional<at::ScalarType> dtype, std::optional<at::Layout>,
                         std::optional<at::Device> device, std::optional<bool>) {
  c10::Device d = device.value_or(c10::Device(kEvrt, current_device()));
  if (d.index() < 0) d = c10::Device(kEvrt, current_device());
  check_device_index(d.index());
  c10::DeviceGuard g(d);
  return at::detail::empty_strided_generic(size, stride, device_allocator(),
                                           c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
                                           c10::dtype_or_default(dtype));
}

const at::Tensor& resize_(const at::Tensor& self, c10::IntArrayRef size,
                          std::optional<at::MemoryFormat> mf) {
  c10::DeviceGuard g(self.device());
  auto* impl = self.unsafeGetTensorImpl();
  impl->set_sizes_contiguous(size);
  size_t need = at::detail::computeStorageNbytesContiguous(size, self.itemsize(),
                                                          self.storage_offset());
  if (need > self.storage().nbytes())
    at::detail::getPrivateUse1Hooks().resizePrivateUse1Bytes(self.storage(), need);
  if (mf) impl->empty_tensor_restride(*mf);
  return self;
}

at::Tensor& set_storage(at::Tensor& self, at::Storage source, int64_t offset,
                        c10::IntArrayRef size, c10::IntArrayRef stride) {
  auto* impl = self.unsafeGetTensorImpl();
  impl->set_storage_keep_dtype(std::move(source));
  impl->set_storage_offset(offset);
  if (stride.empty())
    impl->set_sizes_contiguous(size);
  else
    impl->set_sizes_and_strides(size, stride);
  return self;
}

at::Tensor& set_source_storage(at::Tensor& self, at::Storage source) {
  int64_t n = static_cast<int64_t>(source.nbytes() / self.itemsize());
  return set_storage(self, std::move(source), 0, {n}, {});
}

at::Tensor& set_source_tensor(at::Tensor& self, const at::Tensor& src) {
  return set_storage(self, src.storage(), src.storage_offset(), src.sizes(), src.strides());
}

at::Tensor& set_empty(at::Tensor& self) {
  c10::Storage st(c10::Storage::use_byte_size_t(), 0, device_allocator(), true);
  return set_storage(self, std::move(st), 0, {0}, {});
}

// Copies.  D2D and H2D are in stream order; D2H into pageable memory (all
// host memory here: no pinned allocator yet) returns once the copy is done,
// non_blocking or not, as cudaMemcpyAsync does for pageable memory.
bool plain_same(const at::Tensor& a, const at::Tensor& b) {
  return a.dtype() == b.dtype() && a.is_contiguous() && b.is_contiguous() &&
         a.sizes() == b.sizes();
}

void free_host(void* p) { std::free(p); }

at::Tensor copy_from(const at::Tensor& self, const at::Tensor& dst, bool non_blocking) {
  (void)non_blocking;
  if (self.numel() == 0) return dst;
  UserSite site;  // the copies' and tasks' enqueue site in reports
  if (is_evrt(dst) && is_evrt(self)) {
    c10::DeviceGuard g(dst.device());
    c10::Stream s = current_stream(dst.device().index());
    if (self.device() != dst.device()) {
      // Cross-device: the copy runs on dst's current stream after the work
      // enqueued so far on src's current stream, and src's stream goes on
      // only after the copy (both streams are ordered around it, as CUDA's
      // peer copies are).
      c10::Stream ss = current_stream(self.device().index());
      evrt_event_t e = nullptr;
      check(evrt_event_create(&e, EVRT_EVENT_NO_LIMIT), "event create");
      check(evrt_event_record(e, native_stream(ss)), "event record");
      check(evrt_stream_wait_event(native_stream(s), e), "wait");
      evrt_event_destroy(e);
    }
    if (plain_same(self, dst)) {
      check(evrt_memcpy_async(native_stream(s), dst.data_ptr(), self.data_ptr(),
                              self.nbytes()),
            "memcpy");
    } else {
      auto task = std::make_unique<Task>(
          c10::Dispatcher::singleton().findSchemaOrThrow("aten::copy_", ""));
      task->name = "aten::copy_";
      task->tls = TaskTLS::capture();
      task->args = {c10::IValue(at::Tensor()), c10::IValue(at::Tensor()), c10::IValue(false)};
      task->ins.emplace_back(0, -1, TensorRef::of(dst, true));
      task->ins.emplace_back(1, -1, TensorRef::of(self, false));
      enqueue(std::move(task), s);
    }
    if (self.device() != dst.device()) {
      evrt_event_t e = nullptr;
      check(evrt_event_create(&e, EVRT_EVENT_NO_LIMIT), "event create");
      check(evrt_event_record(e, native_stream(s)), "event record");
      check(evrt_stream_wait_event(native_stream(current_stream(self.device().index())), e),
            "wait");
      evrt_event_destroy(e);
    }
    if (launch_blocking()) synchronize_stream(s);
    return dst;
  }
  if (is_evrt(dst)) {
    // H2D: staged now (the host's bytes are read at the call, as CUDA does
    // for pageable memory), copied in stream order.
    c10::DeviceGuard g(dst.device());
    c10::Stream s = current_stream(dst.device().index());
    at::Tensor src = self.to(dst.scalar_type()).expand(dst.sizes()).contiguous();
    void* stage = std::malloc(src.nbytes());
    TORCH_CHECK(stage, "evrt: out of host memory staging a copy");
    std::memcpy(stage, src.data_ptr(), src.nbytes());
    if (dst.is_contiguous()) {
      check(evrt_memcpy_async(native_stream(s), dst.data_ptr(), stage, src.nbytes()),
            "memcpy");
    } else {
      auto task = std::make_unique<Task>(
          c10::Dispatcher::singleton().findSchemaOrThrow("aten::copy_", ""));
      task->name = "aten::copy_";
      task->tls = TaskTLS::capture();
      TensorRef sref;
      sref.base = static_cast<char*>(stage);
      sref.sizes = src.sizes().vec();
      sref.strides = src.strides().vec();
      sref.dtype = src.scalar_type();
      sref.tracked = false;
      task->args = {c10::IValue(at::Tensor()), c10::IValue(at::Tensor()), c10::IValue(false)};
      task->ins.emplace_back(0, -1, TensorRef::of(dst, true));
      task->ins.emplace_back(1, -1, sref);
      enqueue(std::move(task), s);
    }
    check(evrt_launch_host_func(native_stream(s), free_host, stage), "launch");
    if (launch_blocking()) synchronize_stream(s);
    return dst;
  }
  // D2H.
  c10::DeviceGuard g(self.device());
  c10::Stream s = current_stream(self.device().index());
  if (plain_same(self, dst)) {
    check(evrt_memcpy_async(native_stream(s), dst.data_ptr(), self.data_ptr(), self.nbytes()),
          "memcpy");
    synchronize_stream(s);
  } else {
    synchronize_stream(s);
    // The host reads the device tensor itself, after the synchronize.
    if (check_on()) {
      evrt_check_site(host_site(describe_tensor("aten::_copy_from (to host)", "self",
                                      self.scalar_type(), self.sizes())).c_str());
      TensorRef::of(self, false).declare(EVRT_CHECK_READ);
      evrt_check_site(nullptr);
    }
    dst.copy_(TensorRef::of(self, false).cpu());
  }
  return dst;
}

at::Tensor copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  dst.resize_(self.sizes());
  return copy_from(self, dst, false);
}

// The site of a host-side access: the program's line, then the op.
std::string host_site(const std::string& what) {
  std::string where = user_frame();
  return where.empty() ? what : where + ": " + what;
}

// item(): waits for the stream (a CUDA synchronization point).
at::Scalar local_scalar_dense(const at::Tensor& self) {
  c10::DeviceGuard g(self.device());
  synchronize_stream(current_stream(self.device().index()));
  // The host reads the tensor after the synchronize of the current stream
  // only: its producer on another stream, not waited for, races it.
  if (check_on()) {
    evrt_check_site(host_site(describe_tensor("aten::_local_scalar_dense (item)", "self",
                                    self.scalar_type(), self.sizes())).c_str());
    TensorRef::of(self, false).declare(EVRT_CHECK_READ);
    evrt_check_site(nullptr);
  }
  return at::_local_scalar_dense(TensorRef::of(self, false).cpu());
}

void record_stream_(at::Tensor& self, c10::Stream s) {
  device_allocator()->recordStream(self.storage().data_ptr(), s);
}

at::Tensor as_strided(const at::Tensor& self, c10::IntArrayRef size, c10::IntArrayRef stride,
                      std::optional<int64_t> offset) {
  return at::native::as_strided_tensorimpl(self, size, stride, offset);
}

}  // namespace

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&evrt_fallback>());
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("empty.memory_format", empty_memory_format);
  m.impl("empty_strided", empty_strided);
  m.impl("as_strided", as_strided);
  m.impl("view", at::native::view);
  m.impl("_reshape_alias", at::native::_reshape_alias);
  m.impl("resize_", resize_);
  m.impl("set_.source_Storage", set_source_storage);
  m.impl("set_.source_Storage_storage_offset", set_storage);
  m.impl("set_.source_Tensor", set_source_tensor);
  m.impl("set_", set_empty);
  m.impl("_copy_from", copy_from);
  m.impl("_copy_from_and_resize", copy_from_and_resize);
  m.impl("_local_scalar_dense", local_scalar_dense);
  m.impl("record_stream", record_stream_);
}

}  // namespace evrt_torch
