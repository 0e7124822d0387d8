/*
 * check_graph.c - racy and correct programs that replay captured graphs
 * under EVRT_CHECK: accesses inside a replayed graph are checked like any
 * other (docs/capture.md, "Observability"; scenario.h says how they are
 * run and judged).
 */
#include "scenario.h"

#include <evrt.h>

#define OK(call)                                                               \
  do {                                                                         \
    evrt_status_t st_ = (call);                                                \
    if (st_ != EVRT_SUCCESS) {                                                 \
      fprintf(stderr, "scenario: %s failed: %s (%s)\n", #call,                 \
              evrt_err_name(st_), evrt_last_error_message());                  \
      exit(3);                                                                 \
    }                                                                          \
  } while (0)

static char buf[256], out1[256], out2[256];

static evrt_stream_t stream(void) {
  evrt_stream_t s;
  OK(evrt_stream_create(&s, 0, 0, 0));
  return s;
}
static evrt_event_t event(void) {
  evrt_event_t e;
  OK(evrt_event_create(&e, 0));
  return e;
}

/* Capture on a, with b forked off it; `body` enqueues the work. */
static evrt_graph_t capture_graph(void (*body)(evrt_stream_t a,
                                               evrt_stream_t b)) {
  evrt_stream_t a = stream(), b = stream();
  evrt_event_t fork = event(), join = event();
  OK(evrt_stream_begin_capture(a, EVRT_CAPTURE_MODE_RELAXED));
  OK(evrt_event_record(fork, a));
  OK(evrt_stream_wait_event(b, fork));
  body(a, b);
  OK(evrt_event_record(join, b));
  OK(evrt_stream_wait_event(a, join));
  evrt_graph_t g;
  OK(evrt_stream_end_capture(a, &g));
  return g;
}
static evrt_graph_exec_t capture(void (*body)(evrt_stream_t a,
                                              evrt_stream_t b)) {
  evrt_graph_t g = capture_graph(body);
  evrt_graph_exec_t x;
  OK(evrt_graph_instantiate(&x, g));
  OK(evrt_graph_destroy(g));
  return x;
}

static void hostfn_write(void *p) {
  evrt_check_access(p, 64, EVRT_CHECK_WRITE);
  memset(p, 1, 64);
}
static void hostfn_read(void *p) {
  evrt_check_access(p, 64, EVRT_CHECK_READ);
}

/* ------------------------------------------------------------ racy ones */

/* Two branches of the graph: one fills buf, the other copies it, with no
 * dependency between them. */
static void branches_unordered(evrt_stream_t a, evrt_stream_t b) {
  OK(evrt_memset_async(a, buf, 1, sizeof buf));
  OK(evrt_memcpy_async(b, out1, buf, sizeof buf));
}
SCENARIO(graph_branches_race, "data race") {
  evrt_graph_exec_t x = capture(branches_unordered);
  evrt_stream_t s = stream();
  OK(evrt_graph_launch(x, s));
  OK(evrt_stream_synchronize(s));
}

/* The same with host function nodes that declare their accesses. */
static void hostfns_unordered(evrt_stream_t a, evrt_stream_t b) {
  OK(evrt_launch_host_func(a, hostfn_write, buf));
  OK(evrt_launch_host_func(b, hostfn_read, buf));
}
/* Both nodes are one launch's: the fix is the capture's missing edge. */
REPORT_LINES(graph_hostfns_race,
             "|    in the graph launched on stream * by evrt_graph_launch at *",
             "  fix: the captured graph does not order these two nodes: while "
             "capturing, record an event on the first's stream after it and "
             "make the second's stream wait on it (evrt_stream_wait_event) "
             "before it")
SCENARIO(graph_hostfns_race, "data race") {
  evrt_graph_exec_t x = capture(hostfns_unordered);
  evrt_stream_t s = stream();
  OK(evrt_graph_launch(x, s));
  OK(evrt_stream_synchronize(s));
}

/* The host reads what the graph writes without waiting for the launch. */
static void writes_buf(evrt_stream_t a, evrt_stream_t b) {
  OK(evrt_memset_async(b, buf, 2, sizeof buf));
  (void)a;
}
SCENARIO(graph_host_read_unsynchronized, "unsynchronized host access") {
  evrt_graph_exec_t x = capture(writes_buf);
  evrt_stream_t s = stream();
  OK(evrt_graph_launch(x, s));
  OK(evrt_stream_delay(s, 1000000));
  OK(evrt_check_access(buf, sizeof buf, EVRT_CHECK_READ));
  OK(evrt_stream_synchronize(s));
}

/* Another stream reads what the graph writes, ordered with nothing. */
SCENARIO(graph_other_stream_race, "data race") {
  evrt_graph_exec_t x = capture(writes_buf);
  evrt_stream_t s = stream(), t = stream();
  OK(evrt_graph_launch(x, s));
  OK(evrt_memcpy_async(t, out1, buf, sizeof buf));
  OK(evrt_device_synchronize(0));
}

/* Two executable graphs of one capture (each fills buf from a host
 * function), launched on two streams with nothing ordering the launches:
 * both sides have the same capture site and annotation, so the report
 * tells them apart by their launches (the evrt_graph_launch call, named
 * here with evrt_check_site, and the stream), not only by the lanes. */
static void hostfn_writes(evrt_stream_t a, evrt_stream_t b) {
  OK(evrt_check_site("fill (step.c:5)"));
  OK(evrt_launch_host_func(b, hostfn_write, buf));
  OK(evrt_check_site(NULL));
  (void)a;
}
REPORT_LINES(graph_two_launches_race,
             "evrt-check: data race on [0x*, 0x*) (64 bytes)",
             "|  access: write by host function of [0x*, 0x*) (64 bytes)",
             "|  earlier access: write by host function of [0x*, 0x*) (64 "
             "bytes)",
             "|    in the graph launched on stream * \"left\" by "
             "evrt_graph_launch at first launch (step.c:10)",
             "|    in the graph launched on stream * \"right\" by "
             "evrt_graph_launch at second launch (step.c:11)",
             "|    captured at fill (step.c:5)",
             "  fix: record an event on stream [67] after its work (for a "
             "graph: after its evrt_graph_launch) and make stream [67] wait on "
             "it (evrt_stream_wait_event) before its work, or synchronize in "
             "between")
SCENARIO(graph_two_launches_race, "data race") {
  evrt_graph_t g = capture_graph(hostfn_writes);
  evrt_graph_exec_t x1, x2;
  OK(evrt_graph_instantiate(&x1, g));
  OK(evrt_graph_instantiate(&x2, g));
  OK(evrt_graph_destroy(g));
  evrt_stream_t left = stream(), right = stream();
  OK(evrt_stream_set_name(left, "left"));
  OK(evrt_stream_set_name(right, "right"));
  OK(evrt_check_site("first launch (step.c:10)"));
  OK(evrt_graph_launch(x1, left));
  OK(evrt_check_site("second launch (step.c:11)"));
  OK(evrt_graph_launch(x2, right));
  OK(evrt_check_site(NULL));
  OK(evrt_device_synchronize(0));
}

/* ---------------------------------------------------------- correct ones */

/* Fork, fill, join, copy: ordered inside the graph, replayed back to back
 * (a launch's nodes follow the previous launch's). */
static void ordered_body(evrt_stream_t a, evrt_stream_t b) {
  evrt_event_t e = event();
  OK(evrt_memset_async(b, buf, 3, sizeof buf));
  OK(evrt_launch_host_func(b, hostfn_write, out2 + 128));
  OK(evrt_event_record(e, b));
  OK(evrt_stream_wait_event(a, e));
  OK(evrt_memcpy_async(a, out1, buf, sizeof buf));
  OK(evrt_launch_host_func(a, hostfn_read, out2 + 128));
}
SCENARIO(graph_fork_join_orders, CLEAN) {
  evrt_graph_exec_t x = capture(ordered_body);
  evrt_stream_t s = stream();
  for (int i = 0; i < 4; i++)
    OK(evrt_graph_launch(x, s));
  OK(evrt_stream_synchronize(s));
  OK(evrt_check_access(out1, sizeof out1, EVRT_CHECK_READ));
}

/* The host writes, then launches a graph that reads: the launch orders. */
static void reads_buf(evrt_stream_t a, evrt_stream_t b) {
  OK(evrt_memcpy_async(b, out1, buf, sizeof buf));
  (void)a;
}
SCENARIO(graph_launch_orders_host_writes, CLEAN) {
  evrt_graph_exec_t x = capture(reads_buf);
  evrt_stream_t s = stream();
  OK(evrt_check_access(buf, sizeof buf, EVRT_CHECK_WRITE));
  OK(evrt_graph_launch(x, s));
  OK(evrt_stream_synchronize(s));
  OK(evrt_check_access(buf, sizeof buf, EVRT_CHECK_WRITE));
}

/* Work after the launch on its stream, and a stream that waits on an
 * event recorded after it, follow the whole graph. */
SCENARIO(graph_launch_orders_later_work, CLEAN) {
  evrt_graph_exec_t x = capture(writes_buf);
  evrt_stream_t s = stream(), t = stream();
  evrt_event_t e = event();
  OK(evrt_graph_launch(x, s));
  OK(evrt_memcpy_async(s, out1, buf, sizeof buf));
  OK(evrt_event_record(e, s));
  OK(evrt_stream_wait_event(t, e));
  OK(evrt_memcpy_async(t, out2, buf, sizeof buf));
  OK(evrt_device_synchronize(0));
}

/* An external record node inside the graph orders a waiting stream after
 * the nodes before it. */
static evrt_event_t ext;
static void record_external(evrt_stream_t a, evrt_stream_t b) {
  OK(evrt_memset_async(b, buf, 4, sizeof buf));
  OK(evrt_event_record_with_flags(ext, b, EVRT_EVENT_RECORD_EXTERNAL));
  (void)a;
}
SCENARIO(graph_external_record_orders, CLEAN) {
  ext = event();
  evrt_graph_exec_t x = capture(record_external);
  evrt_stream_t s = stream(), t = stream();
  OK(evrt_graph_launch(x, s));
  OK(evrt_stream_wait_event(t, ext));
  OK(evrt_memcpy_async(t, out1, buf, sizeof buf));
  OK(evrt_device_synchronize(0));
}
