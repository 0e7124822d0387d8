/*
 * opencl_pocl.c - the OpenCL peer on PoCL (Debian's pocl-opencl-icd), in
 * the same shapes as evrt's scenarios, interleaved with evrt in one run:
 *
 *   record_idle          clEnqueueMarkerWithWaitList on an idle queue (each
 *                        call timed alone, clFinish untimed between calls)
 *   query_complete       clGetEventInfo(CL_EVENT_COMMAND_EXECUTION_STATUS)
 *                        of a completed marker
 *   record_sync_idle     marker + clWaitForEvents on an idle queue
 *   event_create_destroy clCreateUserEvent + clReleaseEvent
 *   pingpong_streams     queues A and B, markers with cross-queue wait lists
 *                        alternating A -> B -> A, N round trips behind a user
 *                        event gate, one clWaitForEvents at the end
 *   hostfunc_throughput  a burst of empty markers on one queue + clFinish
 *                        (PoCL's cheapest "launch"), per item
 *   fanout_fanin         1,000 queues each with a marker waiting on one user
 *                        event, then clWaitForEvents on all 1,000
 *
 * Skipped with a printed reason when the headers or the ICD loader were
 * missing at build time, or when no PoCL platform is found at run time.
 */
#include "bench.h"

#include "evrt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef EVRT_BENCH_HAVE_OPENCL

int scenario_opencl_pocl(void) {
  bench_skip("opencl_pocl",
             "built without OpenCL (install pocl-opencl-icd "
             "ocl-icd-opencl-dev opencl-headers and reconfigure)");
  return 0;
}

#else

#include <CL/cl.h>

static cl_context ctx;
static cl_command_queue qa, qb;
static cl_command_queue qf[BENCH_FANOUT_STREAMS];
static char platform_name[128];

#define CL_CHECK(call)                                                         \
  do {                                                                         \
    cl_int cl_err_ = (call);                                                   \
    if (cl_err_ != CL_SUCCESS) {                                               \
      fprintf(stderr, "%s:%d: %s failed: OpenCL error %d\n", __FILE__,         \
              __LINE__, #call, (int)cl_err_);                                  \
      exit(2);                                                                 \
    }                                                                          \
  } while (0)

static cl_command_queue new_queue(cl_device_id dev) {
  cl_int err;
  /* clCreateCommandQueue is the OpenCL 1.2 call PoCL 3 still accepts; the
   * in-order queue matches an evrt stream. */
  cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
  CL_CHECK(err);
  return q;
}

/* Returns NULL on success, else why PoCL cannot be used. */
static const char *pocl_open(void) {
  cl_uint np = 0;
  if (clGetPlatformIDs(0, NULL, &np) != CL_SUCCESS || np == 0)
    return "no OpenCL platform (is pocl-opencl-icd installed?)";
  cl_platform_id ps[16];
  if (np > 16)
    np = 16;
  CL_CHECK(clGetPlatformIDs(np, ps, NULL));
  cl_platform_id pocl = NULL;
  for (cl_uint i = 0; i < np && !pocl; i++) {
    char name[128] = "";
    clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
    if (strstr(name, "Portable Computing Language") || strstr(name, "pocl")) {
      pocl = ps[i];
      snprintf(platform_name, sizeof platform_name, "%s", name);
    }
  }
  if (!pocl)
    return "no PoCL platform among the installed OpenCL platforms";
  cl_device_id dev;
  if (clGetDeviceIDs(pocl, CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS)
    return "the PoCL platform has no device";
  cl_int err;
  ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
  if (err != CL_SUCCESS)
    return "clCreateContext failed on PoCL";
  qa = new_queue(dev);
  qb = new_queue(dev);
  for (int i = 0; i < BENCH_FANOUT_STREAMS; i++)
    qf[i] = new_queue(dev);
  return NULL;
}

static double pocl_record_idle(void *c, long iters) {
  (void)c;
  uint64_t sum = 0;
  for (long i = 0; i < iters; i++) {
    cl_event ev;
    uint64_t t0 = bench_now_ns();
    CL_CHECK(clEnqueueMarkerWithWaitList(qa, 0, NULL, &ev));
    sum += bench_now_ns() - t0;
    clReleaseEvent(ev);
    clFinish(qa); /* untimed: the next marker meets an idle queue again */
  }
  return (double)sum / (double)iters;
}

static double pocl_query_complete(void *c, long iters) {
  static cl_event ev;
  (void)c;
  if (!ev) {
    CL_CHECK(clEnqueueMarkerWithWaitList(qa, 0, NULL, &ev));
    CL_CHECK(clWaitForEvents(1, &ev));
  }
  cl_int st;
  uint64_t t0 = bench_now_ns();
  for (long i = 0; i < iters; i++)
    CL_CHECK(clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st,
                            &st, NULL));
  return (double)(bench_now_ns() - t0) / (double)iters;
}

static double pocl_record_sync_idle(void *c, long iters) {
  (void)c;
  uint64_t t0 = bench_now_ns();
  for (long i = 0; i < iters; i++) {
    cl_event ev;
    CL_CHECK(clEnqueueMarkerWithWaitList(qa, 0, NULL, &ev));
    CL_CHECK(clWaitForEvents(1, &ev));
    clReleaseEvent(ev);
  }
  return (double)(bench_now_ns() - t0) / (double)iters;
}

static double pocl_event_create_destroy(void *c, long iters) {
  (void)c;
  uint64_t t0 = bench_now_ns();
  for (long i = 0; i < iters; i++) {
    cl_int err;
    cl_event ev = clCreateUserEvent(ctx, &err);
    CL_CHECK(err);
    clReleaseEvent(ev);
  }
  return (double)(bench_now_ns() - t0) / (double)iters;
}

static double pocl_pingpong(void *c, long iters) {
  (void)c;
  cl_int err;
  cl_event gate = clCreateUserEvent(ctx, &err);
  CL_CHECK(err);
  cl_event prev = gate;
  clRetainEvent(gate);
  for (long i = 0; i < iters; i++) {
    cl_event ea, eb;
    CL_CHECK(clEnqueueMarkerWithWaitList(qa, 1, &prev, &ea));
    CL_CHECK(clEnqueueMarkerWithWaitList(qb, 1, &ea, &eb));
    /* the queues keep what their commands depend on alive */
    clReleaseEvent(prev);
    clReleaseEvent(ea);
    prev = eb;
  }
  clFlush(qa);
  clFlush(qb);
  uint64_t t0 = bench_now_ns();
  CL_CHECK(clSetUserEventStatus(gate, CL_COMPLETE));
  CL_CHECK(clWaitForEvents(1, &prev));
  uint64_t t1 = bench_now_ns();
  clReleaseEvent(prev);
  clReleaseEvent(gate);
  return (double)(t1 - t0) / (double)iters;
}

static double pocl_launches(void *c, long iters) {
  (void)c;
  uint64_t t0 = bench_now_ns();
  for (long i = 0; i < iters; i++)
    CL_CHECK(clEnqueueMarkerWithWaitList(qa, 0, NULL, NULL));
  CL_CHECK(clFinish(qa));
  return (double)(bench_now_ns() - t0) / (double)iters;
}

static double pocl_fanout(void *c, long iters) {
  (void)c;
  static cl_event evs[BENCH_FANOUT_STREAMS];
  double sum = 0;
  for (long k = 0; k < iters; k++) {
    cl_int err;
    cl_event gate = clCreateUserEvent(ctx, &err);
    CL_CHECK(err);
    for (int i = 0; i < BENCH_FANOUT_STREAMS; i++)
      CL_CHECK(clEnqueueMarkerWithWaitList(qf[i], 1, &gate, &evs[i]));
    for (int i = 0; i < BENCH_FANOUT_STREAMS; i++)
      clFlush(qf[i]);
    uint64_t t0 = bench_now_ns();
    CL_CHECK(clSetUserEventStatus(gate, CL_COMPLETE));
    CL_CHECK(clWaitForEvents(BENCH_FANOUT_STREAMS, evs));
    sum += (double)(bench_now_ns() - t0);
    for (int i = 0; i < BENCH_FANOUT_STREAMS; i++)
      clReleaseEvent(evs[i]);
    clReleaseEvent(gate);
  }
  return sum / (double)iters;
}

/* The floor of any evrt call from here: a call of an exported function
 * that does nothing (evrt_version returns a constant), through the PLT as
 * every evrt call in this file. */
static double evrt_empty_call(void *c, long iters) {
  (void)c;
  unsigned sum = 0;
  uint64_t t0 = bench_now_ns();
  for (long i = 0; i < iters; i++)
    sum += evrt_version();
  double r = (double)(bench_now_ns() - t0) / (double)iters;
  __asm__ __volatile__("" ::"r"(sum));
  return r;
}

int scenario_opencl_pocl(void) {
  const char *why = pocl_open();
  if (why) {
    bench_skip("opencl_pocl", "%s", why);
    return 0;
  }
  char title[200];
  snprintf(title, sizeof title,
           "evrt beside OpenCL on %s, same shapes, interleaved",
           platform_name);
  bench_title("opencl_pocl", title);
  struct bench_case cs[] = {
      {.name = "evrt record_idle", .fn = evrt_case_record_idle},
      {.name = "pocl_marker_idle", .fn = pocl_record_idle},
      {.name = "evrt query_complete", .fn = evrt_case_query_complete},
      {.name = "pocl_get_event_info", .fn = pocl_query_complete},
      {.name = "evrt record_sync_idle", .fn = evrt_case_record_sync_idle},
      {.name = "pocl_marker_wait_idle", .fn = pocl_record_sync_idle},
      {.name = "evrt event_create_destroy",
       .fn = evrt_case_event_create_destroy},
      {.name = "pocl_user_event_create_release",
       .fn = pocl_event_create_destroy},
      {.name = "evrt pingpong_streams (per round trip)",
       .fn = evrt_case_pingpong, .max_iters = 20000},
      {.name = "pocl_cross_queue_pingpong", .fn = pocl_pingpong,
       .max_iters = 20000},
      {.name = "evrt hostfunc_throughput (per item)",
       .fn = evrt_case_hostfunc_one},
      {.name = "pocl_marker_burst", .fn = pocl_launches, .max_iters = 200000},
      {.name = "evrt fanout_fanin (1000 streams)", .fn = evrt_case_fanout},
      {.name = "pocl_fanout_1000_queues", .fn = pocl_fanout},
      {.name = "evrt empty exported call (floor)", .fn = evrt_empty_call},
  };
  bench_run(cs, 15, "ns");
  struct bench_target ten = {BT_RATIO_LE, 0.1, ">= 10x ahead of PoCL"};
  bench_compare("opencl_pocl", "record_idle", &cs[0], &cs[1], ten, NULL);
  bench_compare("opencl_pocl", "query_complete", &cs[2], &cs[3], ten, NULL);
  bench_compare("opencl_pocl", "record_sync_idle", &cs[4], &cs[5],
                (struct bench_target){BT_RATIO_LE, 1.0 / 25,
                                      ">= 25x ahead of PoCL"},
                NULL);
  bench_compare("opencl_pocl", "event_create_destroy", &cs[6], &cs[7], ten,
                NULL);
  bench_compare("opencl_pocl", "pingpong_streams", &cs[8], &cs[9], ten, NULL);
  bench_compare("opencl_pocl", "hostfunc_throughput", &cs[10], &cs[11],
                (struct bench_target){BT_NONE, 0, NULL}, NULL);
  bench_compare("opencl_pocl", "fanout_fanin", &cs[12], &cs[13], ten, NULL);
  bench_note("hostfunc_throughput is a rate, not a latency: judged by its own "
             "target in hostfunc_throughput");
  double floor = cs[14].median, bound = cs[3].median / 10;
  bench_note("an empty exported evrt call costs %.2f ns here; 10x ahead of "
             "pocl_get_event_info means <= %.2f ns per query%s",
             floor, bound,
             floor > bound ? ", less than the call alone" : "");
  return 0;
}

#endif
