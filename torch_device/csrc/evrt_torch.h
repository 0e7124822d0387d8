// The evrt PrivateUse1 device for PyTorch: what the three translation units
// share.  runtime.cpp holds the streams, the guard, the hooks, the caching
// allocator and the task-failure table; ops.cpp the kernels and the boxed
// fallback that enqueues every other op on the current evrt stream;
// module.cpp the Python entry points.  Only the public include/evrt.h is
// used.
#pragma once

#include <c10/core/Allocator.h>
#include <c10/core/CachingDeviceAllocator.h>
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>
#include <c10/core/Stream.h>
#include <c10/util/ArrayRef.h>
#include <evrt.h>

#include <cstdint>
#include <map>
#include <string>

namespace evrt_torch {

// ---------------------------------------------------------------- errors
// Raise a failed evrt call as torch does a device error (RuntimeError).  A
// pending task failure (EVRT_ERROR_TASK_FAILED / ABORTED) is raised with
// the message its task left (the op's name and its exception), and cleared,
// so that it is reported once, at the first synchronization that sees it.
void check(evrt_status_t st, const char* what);

// A task failed: keep its message for the synchronization that reports it
// (called on a worker thread; takes a short mutex, calls no Python).
void record_task_failure(uint64_t stream_id, std::string msg);

// --------------------------------------------------------------- devices
c10::DeviceIndex device_count() noexcept;
c10::DeviceIndex current_device();
// Torch's error type (RuntimeError, "Invalid device ...") for an index out
// of range; changes nothing then.
void check_device_index(c10::DeviceIndex d);
void set_device(c10::DeviceIndex d);

// --------------------------------------------------------------- streams
// Stream ids follow torch's CUDA packing: 0 is the default stream; a pool
// stream is (index << 4) | (priority class << 1) | 1, with 32 streams per
// priority class (0: normal, 1: high) handed out round-robin.
constexpr int kStreamsPerPool = 32;
constexpr int kPriorityClasses = 2;
evrt_stream_t native_stream(const c10::Stream& s);
c10::Stream current_stream(c10::DeviceIndex d);  // d < 0: current device
c10::Stream exchange_stream(const c10::Stream& s);
c10::Stream default_stream(c10::DeviceIndex d);
c10::Stream pool_stream(c10::DeviceIndex d, bool high_priority);
void synchronize_stream(const c10::Stream& s);
void synchronize_device(c10::DeviceIndex d);

// -------------------------------------------------------------- allocator
c10::DeviceAllocator* device_allocator();
// Device of the block holding ptr, or -1.
int block_device(const void* ptr);

// ------------------------------------------------------------------ ops
// EVRT_TORCH_LAUNCH_BLOCKING=1: each op synchronizes its stream.
bool launch_blocking();
// A fallback that had to synchronize the host (counted per op name;
// EVRT_TORCH_SYNC_REPORT=1 prints the counts at exit).
void count_sync(const std::string& op);
std::map<std::string, uint64_t> sync_counts();
void reset_sync_counts();

// ---------------------------------------------------------------- checker
// (check.cpp; docs/check.md, "Torch programs")
bool check_on();  // evrt_check_enabled()
// The calling thread's waits while one lives are the layer's own: they
// order nothing for EVRT_CHECK (evrt_check_unobserved_begin/end).
struct Unobserved {
  Unobserved();
  ~Unobserved();
  Unobserved(const Unobserved&) = delete;
  Unobserved& operator=(const Unobserved&) = delete;
};
// "prog.py:12 (<module>)": the innermost Python frame of the program on
// the calling thread, or "" (the checker off, no Python state).  Takes the
// GIL: call it with no lock of this layer held.
std::string user_frame();
// While one lives, the calling thread's evrt calls are named in reports by
// the innermost Python frame of the program (file:line (function)), when
// the checker is on and the thread holds the GIL; else by the C stack.
struct UserSite {
  UserSite();
  ~UserSite();
  UserSite(const UserSite&) = delete;
  UserSite& operator=(const UserSite&) = delete;

 private:
  bool set_ = false;
};
// Declare the elements of a strided tensor (base: its storage's data;
// offset in elements) as an access of the calling work item: one range per
// contiguous run, or the [min, max] span past kMaxRuns runs.
void declare_tensor(const char* base, int64_t offset, c10::IntArrayRef sizes,
                    c10::IntArrayRef strides, size_t itemsize, unsigned mode);
// "aten::add_.Tensor self: Float[4, 4]", the site a report names.
std::string describe_tensor(const std::string& op, const char* arg,
                            c10::ScalarType dtype, c10::IntArrayRef sizes);

}  // namespace evrt_torch
