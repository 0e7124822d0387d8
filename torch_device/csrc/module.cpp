// Python entry points of evrt_torch._C (what torch.evrt needs beyond the
// guard, which torch.Stream, torch.Event and torch.accelerator reach).
#include "evrt_torch.h"

#include <torch/extension.h>

#include <deque>
#include <mutex>

namespace {

// Waits in slices of 20 ms with the GIL released (tasks never need it;
// other Python threads run), checking for a signal between slices, so that
// Ctrl-C during torch.evrt.synchronize() raises KeyboardInterrupt at once
// instead of after the device's work.
void py_synchronize(int64_t device) {
  c10::DeviceIndex d = static_cast<c10::DeviceIndex>(device);
  if (d < 0) d = evrt_torch::current_device();
  evrt_torch::check_device_index(d);
  for (;;) {
    evrt_status_t st;
    {
      pybind11::gil_scoped_release nogil;
      st = evrt_device_synchronize_timeout(d, 20 * 1000 * 1000);
    }
    if (st != EVRT_ERROR_TIMEOUT) {
      evrt_torch::check(st, "device synchronize");
      return;
    }
    if (PyErr_CheckSignals() != 0) throw pybind11::error_already_set();
  }
}

// Test gates: a stream parks on a word (evrt_stream_wait_value64, holding
// no worker) until the test opens it, the stand-in for a long kernel that
// makes an order-dependent test deterministic.  Words live in a deque
// (stable addresses) and are never freed.
std::mutex g_gate_mu;  // guards g_gates
std::deque<uint64_t>* g_gates = new std::deque<uint64_t>();

uint64_t* gate_word(size_t gate) {
  std::lock_guard<std::mutex> lock(g_gate_mu);
  TORCH_CHECK(gate < g_gates->size(), "no such gate");
  return &(*g_gates)[gate];
}

c10::Stream torch_stream(int64_t stream_id, int64_t device) {
  return c10::Stream(c10::Stream::UNSAFE,
                     c10::Device(c10::DeviceType::PrivateUse1,
                                 static_cast<c10::DeviceIndex>(device)),
                     stream_id);
}

}  // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "evrt torch device (C++ part)";
  m.def("device_count", [] { return static_cast<int>(evrt_torch::device_count()); });
  m.def("current_device", [] { return static_cast<int>(evrt_torch::current_device()); });
  m.def("set_device", [](int64_t d) {
    evrt_torch::set_device(static_cast<c10::DeviceIndex>(d));
  });
  m.def("synchronize", &py_synchronize, pybind11::arg("device") = -1);
  m.def("empty_cache", [] { evrt_torch::device_allocator()->emptyCache(); });
  m.def("sync_counts", [] { return evrt_torch::sync_counts(); });
  m.def("reset_sync_counts", [] { evrt_torch::reset_sync_counts(); });
  m.def("launch_blocking", [] { return evrt_torch::launch_blocking(); });
  m.def("init", [] { evrt_torch::check(evrt_init(), "init"); });
  m.def("is_initialized", [] {
    int init = 0;
    evrt_is_initialized(&init);
    return init != 0;
  });
  m.def("_gate_new", [] {
    std::lock_guard<std::mutex> lock(g_gate_mu);
    g_gates->push_back(0);
    return g_gates->size() - 1;
  });
  m.def("_gate_wait", [](int64_t stream_id, int64_t device, size_t gate) {
    evrt_torch::check(
        evrt_stream_wait_value64(evrt_torch::native_stream(torch_stream(stream_id, device)),
                                 gate_word(gate), 1, EVRT_VALUE_WAIT_GEQ | EVRT_VALUE_WAIT_EXPLICIT),
        "gate wait");
  });
  m.def("_gate_open", [](size_t gate) {
    evrt_torch::check(evrt_value_write64(gate_word(gate), 1), "gate open");
  });
  // The evrt stream id (evrt_stream_get_id) behind a torch stream: for
  // tests and traces.
  m.def("native_stream_id", [](int64_t stream_id, int64_t device) {
    c10::Stream s(c10::Stream::UNSAFE,
                  c10::Device(c10::DeviceType::PrivateUse1,
                              static_cast<c10::DeviceIndex>(device)),
                  stream_id);
    uint64_t id = 0;
    evrt_stream_get_id(evrt_torch::native_stream(s), &id);
    return id;
  });
}
