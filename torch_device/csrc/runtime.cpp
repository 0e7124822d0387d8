// Streams, events, the device guard, the PrivateUse1 hooks and the
// stream-aware caching allocator of the evrt torch device.
#include "evrt_torch.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/Generator.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/util/Exception.h>

#include <array>
#include <atomic>
#include <chrono>
#include <thread>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace evrt_torch {

// ================================================================ errors

namespace {
std::mutex g_fail_mu;  // guards g_fail_msgs; leaf lock, no evrt call under it
std::unordered_map<uint64_t, std::string> g_fail_msgs;  // stream id -> first
}  // namespace

void record_task_failure(uint64_t stream_id, std::string msg) {
  std::lock_guard<std::mutex> lock(g_fail_mu);
  g_fail_msgs.emplace(stream_id, std::move(msg));  // keeps the first one
}

static evrt_stream_t stream_by_id(uint64_t id);

void check(evrt_status_t st, const char* what) {
  if (st == EVRT_SUCCESS) return;
  if (st == EVRT_ERROR_TASK_FAILED || st == EVRT_ERROR_ABORTED) {
    evrt_task_failure_t info{};
    evrt_last_task_failure(&info);
    std::string msg;
    {
      std::lock_guard<std::mutex> lock(g_fail_mu);
      auto it = g_fail_msgs.find(info.stream_id);
      if (it != g_fail_msgs.end()) {
        msg = std::move(it->second);
        g_fail_msgs.erase(it);
      }
    }
    // Reported once: the error is taken off its stream here (evrt's sticky
    // error would fail every later test of the process otherwise).
    if (evrt_stream_t s = stream_by_id(info.stream_id))
      evrt_stream_clear_error(s, nullptr);
    if (msg.empty()) msg = evrt_strerror(st);
    TORCH_CHECK(false, "evrt: ", what, ": a task failed: ", msg);
  }
  // CUDA's and OpenReg's wording for a child forked after initialization.
  TORCH_CHECK(st != EVRT_ERROR_FORKED,
              "Cannot re-initialize evrt in forked subprocess. To use evrt with "
              "multiprocessing, you must use the 'spawn' start method");
  TORCH_CHECK(false, "evrt: ", what, ": ", evrt_err_name(st), ": ",
              evrt_strerror(st), " ", evrt_last_error_message());
}

// =============================================================== devices

c10::DeviceIndex device_count() noexcept {
  static c10::DeviceIndex n = [] {
    int c = 0;
    if (evrt_device_count(&c) != EVRT_SUCCESS) c = 0;
    return static_cast<c10::DeviceIndex>(c);
  }();
  return n;
}

void check_device_index(c10::DeviceIndex d) {
  // torch's wording (XPU's check), with the count's source.
  TORCH_CHECK(d >= 0 && d < device_count(),
              "The device index is out of range. It must be in [0, ",
              static_cast<int>(device_count()), "), but got ",
              static_cast<int>(d), ". (evrt: EVRT_CPU_DEVICES sets the number of devices)");
}

c10::DeviceIndex current_device() {
  int d = 0;
  check(evrt_get_device(&d), "get_device");
  return static_cast<c10::DeviceIndex>(d);
}

void set_device(c10::DeviceIndex d) {
  check_device_index(d);
  check(evrt_set_device(d), "set_device");
}

// =============================================================== streams

namespace {

struct DeviceStreams {
  std::atomic<evrt_stream_t> def{nullptr};
  // Created at first hand-out; a losing creator destroys its own.
  std::array<std::array<std::atomic<evrt_stream_t>, kStreamsPerPool>,
             kPriorityClasses>
      pool{};
  std::array<std::atomic<uint32_t>, kPriorityClasses> next{};
};

std::vector<DeviceStreams>& all_streams() {
  static std::vector<DeviceStreams>* v =
      new std::vector<DeviceStreams>(std::max<int>(device_count(), 1));
  return *v;  // leaked on purpose: tasks may still use them at exit
}

std::mutex g_ids_mu;  // guards g_ids (evrt stream id -> handle)
std::unordered_map<uint64_t, evrt_stream_t> g_ids;

void remember(evrt_stream_t s) {
  uint64_t id = 0;
  evrt_stream_get_id(s, &id);
  std::lock_guard<std::mutex> lock(g_ids_mu);
  g_ids.emplace(id, s);
}

c10::StreamId pool_id(int prio_class, int idx) {
  return (static_cast<c10::StreamId>(idx) << 4) |
         (static_cast<c10::StreamId>(prio_class) << 1) | 1;
}

evrt_stream_t pool_slot(c10::DeviceIndex d, int prio_class, int idx) {
  auto& slot = all_streams()[d].pool[prio_class][idx];
  evrt_stream_t s = slot.load(std::memory_order_acquire);
  if (s) return s;
  evrt_stream_t mine = nullptr;
  check(evrt_stream_create(&mine, d, prio_class ? -1 : 0, 0), "stream_create");
  // acq_rel: the winner publishes a created stream; a loser reads it.
  if (slot.compare_exchange_strong(s, mine, std::memory_order_acq_rel)) {
    remember(mine);
    return mine;
  }
  evrt_stream_destroy(mine);
  return s;
}

evrt_stream_t default_native(c10::DeviceIndex d) {
  auto& slot = all_streams()[d].def;
  evrt_stream_t s = slot.load(std::memory_order_acquire);
  if (s) return s;
  check(evrt_stream_default(d, &s), "stream_default");
  remember(s);
  slot.store(s, std::memory_order_release);
  return s;
}

// The current stream of each device for this thread (a stream id).
thread_local std::vector<c10::StreamId> tls_current;

c10::StreamId& tls_slot(c10::DeviceIndex d) {
  if (tls_current.size() < static_cast<size_t>(device_count()))
    tls_current.resize(device_count(), 0);
  return tls_current[d];
}

}  // namespace

static evrt_stream_t stream_by_id(uint64_t id) {
  std::lock_guard<std::mutex> lock(g_ids_mu);
  auto it = g_ids.find(id);
  return it == g_ids.end() ? nullptr : it->second;
}

evrt_stream_t native_stream(const c10::Stream& s) {
  TORCH_CHECK(s.device_type() == c10::DeviceType::PrivateUse1,
              "not an evrt stream: ", s);
  c10::DeviceIndex d = s.device_index();
  check_device_index(d);
  c10::StreamId id = s.id();
  if (id == 0) return default_native(d);
  TORCH_CHECK((id & 1) == 1, "evrt: unknown stream id ", id);
  int prio_class = static_cast<int>((id >> 1) & 7);
  int64_t idx = id >> 4;
  TORCH_CHECK(prio_class < kPriorityClasses && idx >= 0 &&
                  idx < kStreamsPerPool,
              "evrt: unknown stream id ", id);
  return pool_slot(d, prio_class, static_cast<int>(idx));
}

c10::Stream current_stream(c10::DeviceIndex d) {
  if (d < 0) d = current_device();
  check_device_index(d);
  return c10::Stream(c10::Stream::UNSAFE,
                     c10::Device(c10::DeviceType::PrivateUse1, d),
                     tls_slot(d));
}

c10::Stream exchange_stream(const c10::Stream& s) {
  c10::DeviceIndex d = s.device_index();
  check_device_index(d);
  native_stream(s);  // validates the id
  c10::Stream old = current_stream(d);
  tls_slot(d) = s.id();
  return old;
}

c10::Stream default_stream(c10::DeviceIndex d) {
  if (d < 0) d = current_device();
  check_device_index(d);
  return c10::Stream(c10::Stream::UNSAFE,
                     c10::Device(c10::DeviceType::PrivateUse1, d), 0);
}

c10::Stream pool_stream(c10::DeviceIndex d, bool high_priority) {
  if (d < 0) d = current_device();
  check_device_index(d);
  int pc = high_priority ? 1 : 0;
  uint32_t idx = all_streams()[d].next[pc].fetch_add(
                     1, std::memory_order_relaxed) %
                 kStreamsPerPool;
  pool_slot(d, pc, static_cast<int>(idx));
  return c10::Stream(c10::Stream::UNSAFE,
                     c10::Device(c10::DeviceType::PrivateUse1, d),
                     pool_id(pc, static_cast<int>(idx)));
}

void synchronize_stream(const c10::Stream& s) {
  check(evrt_stream_synchronize(native_stream(s)), "stream synchronize");
}

void synchronize_device(c10::DeviceIndex d) {
  if (d < 0) d = current_device();
  check_device_index(d);
  check(evrt_device_synchronize(d), "device synchronize");
}

// ================================================================ guard

namespace {

struct EvrtGuardImpl final : public c10::impl::DeviceGuardImplInterface {
  static constexpr c10::DeviceType T = c10::DeviceType::PrivateUse1;

  c10::DeviceType type() const override { return T; }

  c10::Device exchangeDevice(c10::Device d) const override {
    c10::DeviceIndex old = current_device();
    if (d.index() != old) set_device(d.index());
    return c10::Device(T, old);
  }
  c10::Device getDevice() const override {
    return c10::Device(T, current_device());
  }
  void setDevice(c10::Device d) const override { set_device(d.index()); }
  void uncheckedSetDevice(c10::Device d) const noexcept override {
    if (d.index() >= 0 && d.index() < device_count()) evrt_set_device(d.index());
  }
  c10::Stream getStream(c10::Device d) const override {
    return current_stream(d.index());
  }
  c10::Stream getDefaultStream(c10::Device d) const override {
    return default_stream(d.index());
  }
  c10::Stream getStreamFromGlobalPool(c10::Device d,
                                      bool high) const override {
    return pool_stream(d.index(), high);
  }
  // torch priorities: 0 normal, negative higher (as CUDA's).
  c10::Stream getNewStream(c10::Device d, int priority) const override {
    return pool_stream(d.index(), priority < 0);
  }
  c10::Stream exchangeStream(c10::Stream s) const override {
    return exchange_stream(s);
  }
  void* getStreamNativeHandle(const c10::Stream s) const override {
    return native_stream(s);
  }
  c10::DeviceIndex deviceCount() const noexcept override {
    return device_count();
  }
  // Every dtype: the kernels are CPU kernels.
  c10::DeviceCapability getDeviceCapability(c10::Device d) const override {
    check_device_index(d.index() < 0 ? current_device() : d.index());
    return c10::DeviceCapability();
  }
  bool queryStream(const c10::Stream& s) const override {
    evrt_status_t st = evrt_stream_query(native_stream(s));
    if (st == EVRT_NOT_READY) return false;
    check(st, "stream query");
    return true;
  }
  void synchronizeStream(const c10::Stream& s) const override {
    synchronize_stream(s);
  }
  void synchronizeDevice(const c10::DeviceIndex d) const override {
    synchronize_device(d);
  }

  // Events: created at the first record on the recording stream's device
  // (torch's lazy rule); BACKEND_DEFAULT is torch's enable_timing=True.
  void record(void** event, const c10::Stream& s, const c10::DeviceIndex d,
              const c10::EventFlag flag) const override {
    TORCH_CHECK(d == -1 || d == s.device_index(), "Event device index ",
                static_cast<int>(d), " does not match recording stream's device index ",
                static_cast<int>(s.device_index()), ".");
    evrt_stream_t ns = native_stream(s);
    auto ev = static_cast<evrt_event_t>(*event);
    if (!ev) {
      unsigned f = flag == c10::EventFlag::BACKEND_DEFAULT ? EVRT_EVENT_TIMING
                                                           : EVRT_EVENT_DEFAULT;
      check(evrt_event_create(&ev, f), "event create");
      *event = ev;
    }
    check(evrt_event_record(ev, ns), "event record");
  }
  // Binds at the call: the stream waits for the record current now.
  void block(void* event, const c10::Stream& s) const override {
    if (!event) return;  // never recorded: no dependency (torch's rule)
    check(evrt_stream_wait_event(native_stream(s),
                                 static_cast<evrt_event_t>(event)),
          "stream wait event");
  }
  bool queryEvent(void* event) const override {
    if (!event) return true;
    evrt_status_t st = evrt_event_query(static_cast<evrt_event_t>(event));
    if (st == EVRT_NOT_READY) return false;
    check(st, "event query");
    return true;
  }
  void synchronizeEvent(void* event) const override {
    if (!event) return;
    check(evrt_event_synchronize(static_cast<evrt_event_t>(event)),
          "event synchronize");
  }
  void destroyEvent(void* event, const c10::DeviceIndex) const noexcept override {
    if (event) evrt_event_destroy(static_cast<evrt_event_t>(event));
  }
  double elapsedTime(void* e1, void* e2,
                     const c10::DeviceIndex) const override {
    TORCH_CHECK_VALUE(e1 && e2,
                      "Both events must be recorded before calculating elapsed time.");
    float ms = 0;
    evrt_status_t st = evrt_event_elapsed_time(
        &ms, static_cast<evrt_event_t>(e1), static_cast<evrt_event_t>(e2));
    TORCH_CHECK_VALUE(st != EVRT_ERROR_TIMING_DISABLED,
                      "Both events must be created with argument 'enable_timing=True'.");
    TORCH_CHECK_VALUE(st != EVRT_ERROR_NOT_RECORDED,
                      "Both events must be recorded before calculating elapsed time.");
    TORCH_CHECK(st != EVRT_ERROR_NOT_COMPLETE,
                "Both events must be completed before calculating elapsed time.");
    check(st, "elapsed time");
    return ms;
  }
  void recordDataPtrOnStream(const c10::DataPtr& p,
                             const c10::Stream& s) const override {
    device_allocator()->recordStream(p, s);
  }
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, EvrtGuardImpl);

}  // namespace

// ============================================================ allocator
//
// A CUDA-style caching allocator over evrt device memory (host memory on
// the CPU backend).  A block belongs to the stream that was current when it
// was allocated.  Freed with no other stream recorded, it is reusable at
// once on that stream (stream order puts its next user after its last
// one); with streams recorded (record_stream, autograd), an event is
// recorded on each of them at the free and the block waits in `pending`
// until all have completed (polled, never waited for).  Like on a device,
// nothing keeps a freed block from being reused while another stream's
// unrecorded work still reads it: that is the user's missing record_stream,
// which the checker reports at reuse (issue 27).  Memory is given back to
// the system only by empty_cache, after synchronizing every device, so a
// stale task never touches unmapped memory.

namespace {

using c10::CachingDeviceAllocator::DeviceStats;
using c10::CachingAllocator::StatType;

constexpr size_t kRound = 512;

struct Block {
  void* ptr = nullptr;
  size_t size = 0;       // rounded size of the allocation
  size_t requested = 0;  // the size asked for (for stats)
  c10::DeviceIndex device = 0;
  evrt_stream_t stream = nullptr;     // the allocating stream
  std::vector<c10::Stream> uses;      // recorded other streams
  std::vector<evrt_event_t> events;   // at free: one per recorded stream
  // EVRT_CHECK: false from a free until its stream-ordered free task ran
  // (release/acquire).  A pending block (recorded streams) is reused only
  // once it is true: its free runs on the free stream, its next life's
  // allocation on its own stream, which must not come first; emptyCache
  // keeps a block whose free task still names it.
  std::atomic<bool> freed_seen{true};
};

struct DevicePool {
  std::multimap<std::pair<evrt_stream_t, size_t>, Block*> free;
  std::deque<Block*> pending;  // freed, waiting for their events
  DeviceStats stats;
};

void stat_add(c10::CachingAllocator::StatArray& a, int64_t n) {
  auto& s = a[static_cast<size_t>(StatType::AGGREGATE)];
  if (n >= 0)
    s.increase(static_cast<size_t>(n));
  else
    s.decrease(static_cast<size_t>(-n));
}

void free_block(void* ctx);

// EVRT_CHECK's free of a block, run as a work item in stream order: on
// the block's stream, or on the device's free stream after the block's
// stream and every recorded stream (record_stream).  Work not ordered
// before it that touches the block is a use after free.
void check_free_task(void* p) {
  auto* b = static_cast<Block*>(p);
  evrt_check_free(b->ptr, b->size, nullptr);
  b->freed_seen.store(true, std::memory_order_release);
}

// The checker's allocation of a block, in stream order on the allocating
// stream: after the block's free there (a block without recorded streams
// is reused at once, as on a device, before its free task ran), and
// before every later item of that stream, whichever host thread enqueues
// it (autograd's engine thread allocates what the Python thread uses, and
// their own handoff is invisible to evrt).
void check_alloc_task(void* p) {
  auto* b = static_cast<Block*>(p);
  evrt_check_alloc(b->ptr, b->size);
}

void check_alloc(Block* b) {
  UserSite site;  // where the tensor was allocated, in reports
  if (evrt_launch_host_func(b->stream, check_alloc_task, b) != EVRT_SUCCESS)
    evrt_check_alloc(b->ptr, b->size);
}

// One internal stream per device for the frees of blocks used by other
// streams: it waits for them, and no stream of the program waits for it,
// so its waits order nothing of the program's.
evrt_stream_t free_stream(c10::DeviceIndex d) {
  static std::vector<std::atomic<evrt_stream_t>>* v =
      new std::vector<std::atomic<evrt_stream_t>>(std::max<int>(device_count(), 1));
  auto& slot = (*v)[d];
  evrt_stream_t s = slot.load(std::memory_order_acquire);
  if (s) return s;
  evrt_stream_t mine = nullptr;
  if (evrt_stream_create(&mine, d, 0, 0) != EVRT_SUCCESS) return nullptr;
  // acq_rel: the winner publishes its stream; a loser reads it.
  if (slot.compare_exchange_strong(s, mine, std::memory_order_acq_rel)) return mine;
  evrt_stream_destroy(mine);
  return s;
}

// Enqueue the checker's free of b (its events recorded, the checker on);
// without a stream to run it on, it is declared now.
void enqueue_check_free(Block* b) {
  b->freed_seen.store(false, std::memory_order_relaxed);
  evrt_stream_t on = b->stream;
  if (!b->events.empty()) {
    on = free_stream(b->device);
    evrt_event_t e = nullptr;
    bool ok = on && evrt_event_create(&e, EVRT_EVENT_NO_LIMIT) == EVRT_SUCCESS;
    if (ok) ok = evrt_event_record(e, b->stream) == EVRT_SUCCESS &&
                 evrt_stream_wait_event(on, e) == EVRT_SUCCESS;
    if (e) evrt_event_destroy(e);  // the wait bound at its call
    for (auto ev : b->events)
      if (ok) ok = evrt_stream_wait_event(on, ev) == EVRT_SUCCESS;
    if (!ok) on = nullptr;
  }
  if (!on || evrt_launch_host_func(on, check_free_task, b) != EVRT_SUCCESS)
    check_free_task(b);
}

class EvrtAllocator final : public c10::DeviceAllocator {
 public:
  c10::DataPtr allocate(size_t n) override {
    c10::DeviceIndex d = current_device();
    c10::Device dev(c10::DeviceType::PrivateUse1, d);
    if (n == 0) return c10::DataPtr(nullptr, nullptr, &free_block, dev);
    evrt_stream_t s = native_stream(current_stream(d));
    size_t size = (n + kRound - 1) / kRound * kRound;
    Block* b = take(d, s, size, n);
    if (!b) {
      void* p = nullptr;
      if (posix_memalign(&p, 64, size) != 0) {
        emptyCache();
        if (posix_memalign(&p, 64, size) != 0) p = nullptr;
      }
      TORCH_CHECK_WITH(OutOfMemoryError, p,
                       "evrt: out of memory allocating ", n, " bytes on device ",
                       static_cast<int>(d));
      b = new Block;
      b->ptr = p;
      b->size = size;
      b->device = d;
      b->stream = s;
      b->requested = n;
      std::lock_guard<std::mutex> lock(mu_);
      auto& pool = pools()[d];
      stat_add(pool.stats.reserved_bytes, static_cast<int64_t>(size));
      stat_add(pool.stats.segment, 1);
      pool.stats.num_device_alloc++;
      account_alloc(pool, b);
      live_.emplace(p, b);
    }
    if (check_on()) check_alloc(b);
    return c10::DataPtr(b->ptr, b, &free_block, dev);
  }

  c10::DeleterFnPtr raw_deleter() const override { return nullptr; }

  void copy_data(void* dst, const void* src, size_t count) const override {
    // Storage copies outside stream order (clone of a storage): synchronize
    // first, as a device's blocking memcpy would.
    {
      Unobserved quiet;
      synchronize_device(-1);
    }
    std::memcpy(dst, src, count);
  }

  bool initialized() override { return true; }

  void emptyCache(c10::MempoolId_t = {0, 0}) override {
    Unobserved quiet;  // the allocator's own waits: they order nothing
    for (c10::DeviceIndex d = 0; d < device_count(); d++)
      check(evrt_device_synchronize(d), "empty_cache synchronize");
    std::lock_guard<std::mutex> lock(mu_);
    for (c10::DeviceIndex d = 0; d < device_count(); d++) {
      auto& pool = pools()[d];
      poll_pending(pool);
      for (auto it = pool.free.begin(); it != pool.free.end();) {
        Block* b = it->second;
        // Freed after the synchronize above: its checker free may not have
        // run yet, and it still names the block.
        if (!b->freed_seen.load(std::memory_order_acquire)) {
          ++it;
          continue;
        }
        it = pool.free.erase(it);
        stat_add(pool.stats.reserved_bytes, -static_cast<int64_t>(b->size));
        stat_add(pool.stats.segment, -1);
        pool.stats.num_device_free++;
        live_.erase(b->ptr);
        // The memory goes back to the system, where untracked host memory
        // (a CPU tensor, a copy's destination) may reuse it: the checker
        // forgets its freed state (an allocation that no one declares).
        if (check_on()) evrt_check_alloc(b->ptr, b->size);
        std::free(b->ptr);
        delete b;
      }
    }
  }

  void recordStream(const c10::DataPtr& p, c10::Stream s) override {
    if (!p.get() || p.get_deleter() != &free_block) return;
    auto* b = static_cast<Block*>(p.get_context());
    evrt_stream_t ns = native_stream(s);
    if (ns == b->stream) return;
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& u : b->uses)
      if (u == s) return;
    b->uses.push_back(s);
  }

  DeviceStats getDeviceStats(c10::DeviceIndex d) override {
    check_device_index(d);
    std::lock_guard<std::mutex> lock(mu_);
    return pools()[d].stats;
  }
  void resetAccumulatedStats(c10::DeviceIndex d) override {
    check_device_index(d);
    std::lock_guard<std::mutex> lock(mu_);
    auto& st = pools()[d].stats;
    for (auto* a : {&st.allocation, &st.segment, &st.active, &st.allocated_bytes,
                    &st.reserved_bytes, &st.active_bytes, &st.requested_bytes})
      for (auto& s : *a) s.reset_accumulated();
    st.num_device_alloc = st.num_device_free = 0;
  }
  void resetPeakStats(c10::DeviceIndex d) override {
    check_device_index(d);
    std::lock_guard<std::mutex> lock(mu_);
    auto& st = pools()[d].stats;
    for (auto* a : {&st.allocation, &st.segment, &st.active, &st.allocated_bytes,
                    &st.reserved_bytes, &st.active_bytes, &st.requested_bytes})
      for (auto& s : *a) s.reset_peak();
  }
  std::pair<size_t, size_t> getMemoryInfo(c10::DeviceIndex d) override {
    check_device_index(d);
    std::lock_guard<std::mutex> lock(mu_);
    auto& st = pools()[d].stats;
    size_t used = static_cast<size_t>(
        st.reserved_bytes[static_cast<size_t>(StatType::AGGREGATE)].current);
    size_t total = size_t(64) << 30;  // nominal: host memory backs it
    return {total > used ? total - used : 0, total};
  }

  // Called by the DataPtr's deleter (the last storage reference went away,
  // on whichever thread dropped it).
  void release(Block* b) {
    // Events first, outside the lock: a record is a non-blocking evrt call.
    for (auto& u : b->uses) {
      evrt_event_t e = nullptr;
      if (evrt_event_create(&e, EVRT_EVENT_NO_LIMIT) != EVRT_SUCCESS) continue;
      evrt_stream_t ns = nullptr;
      try {
        ns = native_stream(u);
      } catch (...) {
      }
      if (!ns || evrt_event_record(e, ns) != EVRT_SUCCESS) {
        evrt_event_destroy(e);
        continue;
      }
      b->events.push_back(e);
    }
    b->uses.clear();
    if (check_on()) {
      UserSite site;  // where the last reference went (a del, a rebind)
      enqueue_check_free(b);
    }
    std::lock_guard<std::mutex> lock(mu_);
    auto& pool = pools()[b->device];
    stat_add(pool.stats.allocated_bytes, -static_cast<int64_t>(b->size));
    stat_add(pool.stats.requested_bytes, -static_cast<int64_t>(b->requested));
    stat_add(pool.stats.allocation, -1);
    stat_add(pool.stats.active, -1);
    stat_add(pool.stats.active_bytes, -static_cast<int64_t>(b->size));
    if (b->events.empty())
      pool.free.emplace(std::make_pair(b->stream, b->size), b);
    else
      pool.pending.push_back(b);
  }

  int device_of(const void* ptr) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = live_.upper_bound(const_cast<void*>(ptr));
    if (it == live_.begin()) return -1;
    --it;
    auto* b = it->second;
    auto* base = static_cast<const char*>(b->ptr);
    if (static_cast<const char*>(ptr) < base + b->size) return b->device;
    return -1;
  }

 private:
  std::vector<DevicePool>& pools() {
    if (pools_.empty()) pools_.resize(std::max<int>(device_count(), 1));
    return pools_;
  }

  // Under mu_.
  void account_alloc(DevicePool& pool, Block* b) {
    stat_add(pool.stats.allocated_bytes, static_cast<int64_t>(b->size));
    stat_add(pool.stats.requested_bytes, static_cast<int64_t>(b->requested));
    stat_add(pool.stats.allocation, 1);
    stat_add(pool.stats.active, 1);
    stat_add(pool.stats.active_bytes, static_cast<int64_t>(b->size));
  }

  // Under mu_: move the pending blocks whose events all completed to the
  // free lists (evrt_event_query never blocks).
  void poll_pending(DevicePool& pool) {
    Unobserved quiet;  // a "complete" answer here orders nothing of the program's
    for (auto it = pool.pending.begin(); it != pool.pending.end();) {
      Block* b = *it;
      bool done = true;
      for (auto e : b->events)
        if (evrt_event_query(e) == EVRT_NOT_READY) done = false;
      // With the checker on, also its free task (on the free stream, just
      // behind these events): reused on its stream before that free ran,
      // its new life would start before the old one ended.  A short wait
      // (1 ms at most; the task is usually about to run), else later.
      for (int spin = 0; done && spin < 1000 &&
                         !b->freed_seen.load(std::memory_order_acquire);
           spin++)
        std::this_thread::sleep_for(std::chrono::microseconds(1));
      if (done && !b->freed_seen.load(std::memory_order_acquire)) done = false;
      if (!done) {
        ++it;
        continue;
      }
      for (auto e : b->events) evrt_event_destroy(e);
      b->events.clear();
      pool.free.emplace(std::make_pair(b->stream, b->size), b);
      it = pool.pending.erase(it);
    }
  }

  // A cached block of this stream of at least size bytes (and at most twice
  // it, so that a small tensor does not pin a large block).
  Block* take(c10::DeviceIndex d, evrt_stream_t s, size_t size, size_t n) {
    std::lock_guard<std::mutex> lock(mu_);
    auto& pool = pools()[d];
    poll_pending(pool);
    auto it = pool.free.lower_bound(std::make_pair(s, size));
    if (it == pool.free.end() || it->first.first != s ||
        it->first.second > 2 * size)
      return nullptr;
    Block* b = it->second;
    pool.free.erase(it);
    b->requested = n;
    account_alloc(pool, b);
    return b;
  }

  std::mutex mu_;  // guards pools_, live_ and the blocks' uses lists
  std::vector<DevicePool> pools_;
  std::map<void*, Block*> live_;  // every block, by address
};

EvrtAllocator* g_alloc() {
  static EvrtAllocator* a = new EvrtAllocator();  // leaked: see emptyCache
  return a;
}

void free_block(void* ctx) {
  if (ctx) g_alloc()->release(static_cast<Block*>(ctx));
}

struct RegisterAllocator {
  RegisterAllocator() {
    c10::SetAllocator(c10::DeviceType::PrivateUse1, g_alloc());
  }
} g_register_allocator;

}  // namespace

c10::DeviceAllocator* device_allocator() { return g_alloc(); }
int block_device(const void* ptr) { return g_alloc()->device_of(ptr); }

// ================================================================ hooks

namespace {

struct EvrtHooks final : public at::PrivateUse1HooksInterface {
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return device_count() > 0; }
  bool hasPrimaryContext(c10::DeviceIndex) const override {
    int init = 0;
    evrt_is_initialized(&init);
    return init != 0;
  }
  void init() const override { check(evrt_init(), "init"); }
  c10::DeviceIndex deviceCount() const override { return device_count(); }
  void setCurrentDevice(c10::DeviceIndex d) const override { set_device(d); }
  c10::DeviceIndex getCurrentDevice() const override { return current_device(); }
  c10::DeviceIndex exchangeDevice(c10::DeviceIndex d) const override {
    c10::DeviceIndex old = current_device();
    if (d != old) set_device(d);
    return old;
  }
  c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex d) const override {
    return exchangeDevice(d);
  }
  // A CPU generator per device: the kernels are CPU kernels.
  const at::Generator& getDefaultGenerator(c10::DeviceIndex d) const override {
    static std::vector<at::Generator>* gens = [] {
      auto* v = new std::vector<at::Generator>();
      for (c10::DeviceIndex i = 0; i < std::max<int>(device_count(), 1); i++)
        v->push_back(at::detail::createCPUGenerator());
      return v;
    }();
    if (d < 0) d = current_device();
    check_device_index(d);
    return (*gens)[d];
  }
  at::Generator getNewGenerator(c10::DeviceIndex) const override {
    return at::detail::createCPUGenerator();
  }
  c10::Device getDeviceFromPtr(void* p) const override {
    int d = block_device(p);
    return c10::Device(c10::DeviceType::PrivateUse1,
                       static_cast<c10::DeviceIndex>(d < 0 ? 0 : d));
  }
  bool isPinnedPtr(const void*) const override { return false; }
  // No pinned memory yet: pin_memory() gives ordinary (pageable) memory,
  // and copies treat it as pageable (staged H2D, synchronous D2H).
  c10::Allocator* getPinnedMemoryAllocator() const override {
    return c10::GetCPUAllocator();
  }
  void resizePrivateUse1Bytes(const c10::Storage& storage,
                              size_t newsize) const override;
};

void EvrtHooks::resizePrivateUse1Bytes(const c10::Storage& storage,
                                       size_t newsize) const {
  TORCH_CHECK(storage.resizable(), "Trying to resize storage that is not resizable");
  size_t old = storage.nbytes();
  c10::DataPtr fresh = storage.allocator()->allocate(newsize);
  size_t n = std::min(old, newsize);
  if (n) {
    // In stream order on the current stream; the old block, freed below,
    // is reused on that stream only after the copy.
    check(evrt_memcpy_async(native_stream(current_stream(-1)), fresh.get(),
                            storage.data(), n),
          "resize copy");
  }
  const_cast<c10::Storage&>(storage).set_data_ptr_noswap(std::move(fresh));
  const_cast<c10::Storage&>(storage).set_nbytes(newsize);
}

struct RegisterHooks {
  RegisterHooks() { at::RegisterPrivateUse1HooksInterface(new EvrtHooks()); }
} g_register_hooks;

}  // namespace

}  // namespace evrt_torch
