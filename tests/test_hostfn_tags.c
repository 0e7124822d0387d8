/* The host-function tags of include/evrt.h hold: from inside a host function,
 * every [hostfn] function works (valid arguments: its ordinary status, never
 * EVRT_ERROR_WOULD_DEADLOCK, never a hang), a [hostfn*] function works on
 * other streams and devices and returns EVRT_ERROR_WOULD_DEADLOCK for its
 * own, and the [!hostfn] one (evrt_shutdown) returns
 * EVRT_ERROR_WOULD_DEADLOCK. */
#include "test.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

__attribute__((constructor)) static void two_devices(void) {
  setenv("EVRT_CPU_DEVICES", "2", 1);
}

#define MAXCALLS 80
struct call {
  const char *what;
  evrt_status_t st;
  evrt_status_t want, or_want; /* accepted statuses */
};
struct ctx {
  evrt_stream_t self, other, dev1;
  evrt_event_t t0, t1, ipc, ahead;
  char trace_path[64];
  struct call calls[MAXCALLS];
  int n;
};

static void noop(void *p) { (void)p; }

#define CALL2(expr, w1, w2)                                                    \
  do {                                                                         \
    if (c->n < MAXCALLS)                                                       \
      c->calls[c->n++] = (struct call){#expr, (expr), (w1), (w2)};            \
  } while (0)
#define CALL(expr) CALL2(expr, EVRT_SUCCESS, EVRT_SUCCESS)
#define QUERY(expr) CALL2(expr, EVRT_SUCCESS, EVRT_NOT_READY)
#define DEADLOCK(expr)                                                         \
  CALL2(expr, EVRT_ERROR_WOULD_DEADLOCK, EVRT_ERROR_WOULD_DEADLOCK)

static void inside(void *p) {
  struct ctx *c = p;
  int n, dev;
  uint32_t lim, avail;
  uint64_t id, ns, count;
  float ms;
  evrt_stream_t s2, def;
  evrt_event_t e2, opened;
  evrt_event_info_t info = {.struct_size = sizeof info};
  evrt_ipc_event_handle_t h;
  static char src[64] = "abc", dst[64];

  /* [ts] [nb] [hostfn] */
  CALL(evrt_init());
  CALL(evrt_device_count(&n));
  CALL(evrt_get_device(&dev));
  CALL(evrt_set_device(dev));
  CALL(evrt_device_get_event_limit(0, &lim));
  CALL(evrt_device_set_event_limit(0, lim));
  CALL(evrt_device_event_available(0, &avail));
  CALL(evrt_stream_create(&s2, 0, 0, 0));
  CALL(evrt_stream_default(0, &def));
  CALL(evrt_stream_set_name(s2, "from a host function"));
  CALL(evrt_stream_get_device(s2, &dev));
  CALL(evrt_stream_get_priority(s2, &n));
  CALL(evrt_stream_get_id(s2, &id));
  CALL(evrt_launch_host_func(s2, noop, NULL));
  CALL(evrt_launch_host_func_labeled(s2, noop, NULL, "label"));
  CALL(evrt_memcpy_async(s2, dst, src, sizeof src));
  CALL(evrt_memset_async(s2, dst, 0, sizeof dst));
  CALL(evrt_stream_delay(s2, 1000));
  CALL(evrt_event_create(&e2, EVRT_EVENT_DEFAULT));
  CALL(evrt_event_record(e2, s2));
  CALL(evrt_event_record(c->ahead, c->self)); /* after this very function */
  QUERY(evrt_event_query(e2));
  QUERY(evrt_stream_query(s2));
  CALL(evrt_stream_wait_event(c->other, e2));
  CALL(evrt_stream_wait_event_timeout(c->other, e2, 60000000000LL));
  CALL(evrt_stream_wait_failures(c->other, &count));
  CALL(evrt_event_elapsed_time(&ms, c->t0, c->t1));
  CALL(evrt_event_timestamp(c->t0, &ns));
  CALL(evrt_event_get_info(c->t0, &info));
  CALL(evrt_event_get_device(c->t0, &dev));
  CALL(evrt_event_get_id(c->t0, &id));
  CALL(evrt_event_ipc_handle(c->ipc, &h));
  CALL2(evrt_event_ipc_open(&opened, &h), EVRT_ERROR_IPC_SAME_PROCESS,
        EVRT_ERROR_IPC_SAME_PROCESS); /* its ordinary answer in-process */
  CALL(evrt_thread_id() != 0 ? EVRT_SUCCESS : EVRT_ERROR_INTERNAL);
  CALL(evrt_trace_dropped() == 0 ? EVRT_SUCCESS : EVRT_ERROR_INTERNAL);
  CALL(evrt_version() == EVRT_VERSION_HEX ? EVRT_SUCCESS : EVRT_ERROR_INTERNAL);
  CALL(evrt_version_string()[0] ? EVRT_SUCCESS : EVRT_ERROR_INTERNAL);
  CALL(evrt_strerror(EVRT_SUCCESS)[0] ? EVRT_SUCCESS : EVRT_ERROR_INTERNAL);
  CALL(evrt_err_name(EVRT_SUCCESS)[0] ? EVRT_SUCCESS : EVRT_ERROR_INTERNAL);
  /* [ts] [blocks] [hostfn] */
  CALL(evrt_trace_start(c->trace_path));
  CALL(evrt_trace_stop());
  /* [ts] [blocks] [hostfn*]: other streams and devices wait... */
  CALL(evrt_stream_synchronize(s2));
  CALL(evrt_stream_synchronize_timeout(s2, 60000000000LL));
  CALL(evrt_event_synchronize(e2));
  CALL(evrt_event_synchronize_timeout(e2, 60000000000LL));
  CALL(evrt_device_synchronize(1));
  CALL(evrt_device_synchronize_timeout(1, 60000000000LL));
  /* ...waiting on this function's own stream is refused */
  DEADLOCK(evrt_stream_synchronize(c->self));
  DEADLOCK(evrt_stream_synchronize_timeout(c->self, 60000000000LL));
  DEADLOCK(evrt_event_synchronize(c->ahead));
  DEADLOCK(evrt_event_synchronize_timeout(c->ahead, 60000000000LL));
  DEADLOCK(evrt_device_synchronize(0));
  DEADLOCK(evrt_device_synchronize_timeout(0, 60000000000LL));
  /* [!ts] [blocks] [!hostfn] */
  DEADLOCK(evrt_shutdown());
  /* and the rest of the [hostfn] ones */
  CALL(evrt_last_error() == EVRT_ERROR_WOULD_DEADLOCK ? EVRT_SUCCESS
                                                       : EVRT_ERROR_INTERNAL);
  CALL(evrt_last_error_message()[0] ? EVRT_SUCCESS : EVRT_ERROR_INTERNAL);
  evrt_clear_last_error();
  CALL(evrt_last_error());
  CALL(evrt_event_reset(e2, s2));
  QUERY(evrt_event_wait_status(e2));
  CALL(evrt_event_destroy(e2));
  CALL(evrt_stream_destroy(s2));
}

TEST(hostfn_tags_hold_from_inside_a_host_function) {
  struct ctx *c = calloc(1, sizeof *c);
  ASSERT(c != NULL);
  snprintf(c->trace_path, sizeof c->trace_path, "/tmp/evrt-hostfn-%d.json",
           (int)getpid());
  ASSERT_OK(evrt_stream_create(&c->self, 0, 0, 0));
  ASSERT_OK(evrt_stream_create(&c->other, 0, 0, 0));
  ASSERT_OK(evrt_stream_create(&c->dev1, 1, 0, 0));
  ASSERT_OK(evrt_event_create(&c->t0, EVRT_EVENT_TIMING));
  ASSERT_OK(evrt_event_create(&c->t1, EVRT_EVENT_TIMING));
  ASSERT_OK(evrt_event_create(&c->ahead, EVRT_EVENT_DEFAULT));
  ASSERT_OK(evrt_event_create(&c->ipc, EVRT_EVENT_INTERPROCESS));
  ASSERT_OK(evrt_event_record(c->t0, c->other));
  ASSERT_OK(evrt_event_record(c->t1, c->other));
  ASSERT_OK(evrt_stream_delay(c->dev1, 1000)); /* device 1 has work */
  ASSERT_OK(evrt_event_synchronize(c->t1));
  ASSERT_OK(evrt_launch_host_func(c->self, inside, c));
  ASSERT_OK(evrt_stream_synchronize(c->self));
  ASSERT_OK(evrt_stream_synchronize(c->other));
  ASSERT(c->n > 50 && c->n < MAXCALLS);
  for (int i = 0; i < c->n; i++) {
    const struct call *k = &c->calls[i];
    if (k->st != k->want && k->st != k->or_want)
      FAIL_("from a host function, %s returned %s, want %s", k->what,
            evrt_err_name(k->st), evrt_err_name(k->want));
  }
  ASSERT_OK(evrt_event_query(c->ahead));
  unlink(c->trace_path);
  evrt_event_destroy(c->t0);
  evrt_event_destroy(c->t1);
  evrt_event_destroy(c->ahead);
  evrt_event_destroy(c->ipc);
  evrt_stream_destroy(c->self);
  evrt_stream_destroy(c->other);
  evrt_stream_destroy(c->dev1);
  free(c);
}
