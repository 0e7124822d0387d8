/*
 * ipc_peer.c - the other process of the interprocess-event tests, started
 * with posix_spawn by test_ipc.c.  It prints one line per observation on
 * stdout ("KEY value..."), with CLOCK_MONOTONIC times in ns (the clock is
 * system-wide, so times compare across processes).
 *
 *   ipc_peer sync HEX [blocking]     open, synchronize, print "synced T ST"
 *   ipc_peer record HEX DELAY_MS [DEVICE]
 *                                    open, record after a delay on its own
 *                                    stream (of DEVICE, default 0), print
 *                                    "marked T" just before the record
 *                                    executes and "recorded" after
 *   ipc_peer streamwait HEX          a stream waits on the event; print
 *                                    "passed T FAILURES" when it passed
 *   ipc_peer export DELAY_MS         export an event recorded after a delay,
 *                                    print "handle HEX", then sleep
 *   ipc_peer hold HEX DELAY_MS       record with a long delay, print "held",
 *                                    then sleep (to be killed)
 *   ipc_peer query HEX               print "query ST"
 *   ipc_peer reexport HEX            print "reexport ST"
 */
#define _GNU_SOURCE
#include "ipc_common.h"

#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static uint64_t now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void die(const char *what, evrt_status_t st) {
  printf("error %s %s %s\n", what, evrt_err_name(st), evrt_last_error_message());
  exit(2);
}

static evrt_event_t open_hex(const char *hex) {
  evrt_ipc_event_handle_t h;
  evrt_event_t e;
  if (hex_to_handle(hex, &h))
    die("hex", EVRT_ERROR_INVALID_VALUE);
  evrt_status_t st = evrt_event_ipc_open(&e, &h);
  if (st)
    die("open", st);
  return e;
}

static void mark(void *p) {
  (void)p;
  printf("marked %llu\n", (unsigned long long)now());
}

static void passed(void *p) {
  uint64_t fails = 0;
  evrt_stream_wait_failures(*(evrt_stream_t *)p, &fails);
  printf("passed %llu %llu\n", (unsigned long long)now(),
         (unsigned long long)fails);
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IONBF, 0);
  if (argc < 3)
    return 2;
  const char *cmd = argv[1];
  evrt_stream_t s;
  evrt_status_t st;
  if (!strcmp(cmd, "sync")) {
    evrt_event_t e = open_hex(argv[2]);
    st = evrt_event_synchronize(e);
    printf("synced %llu %s\n", (unsigned long long)now(), evrt_err_name(st));
    evrt_event_destroy(e);
  } else if (!strcmp(cmd, "record") && argc > 3) {
    evrt_event_t e = open_hex(argv[2]);
    if ((st = evrt_stream_create(&s, argc > 4 ? atoi(argv[4]) : 0, 0, 0)))
      die("stream", st);
    evrt_stream_delay(s, (uint64_t)atoi(argv[3]) * 1000000u);
    evrt_launch_host_func(s, mark, NULL);
    if ((st = evrt_event_record(e, s)))
      die("record", st);
    evrt_stream_synchronize(s);
    printf("recorded\n");
    evrt_event_destroy(e);
    evrt_stream_destroy(s);
  } else if (!strcmp(cmd, "streamwait")) {
    evrt_event_t e = open_hex(argv[2]);
    evrt_stream_create(&s, 0, 0, 0);
    if ((st = evrt_stream_wait_event(s, e)))
      die("wait", st);
    evrt_launch_host_func(s, passed, &s);
    printf("waiting\n");
    evrt_stream_synchronize(s);
    evrt_event_destroy(e);
    evrt_stream_destroy(s);
  } else if (!strcmp(cmd, "export")) {
    evrt_event_t e;
    evrt_ipc_event_handle_t h;
    char hex[2 * EVRT_IPC_HANDLE_SIZE + 1];
    evrt_event_create(&e, EVRT_EVENT_INTERPROCESS);
    evrt_stream_create(&s, 0, 0, 0);
    evrt_stream_delay(s, (uint64_t)atoi(argv[2]) * 1000000u);
    if ((st = evrt_event_record(e, s)) || (st = evrt_event_ipc_handle(e, &h)))
      die("export", st);
    handle_to_hex(&h, hex);
    printf("handle %s\n", hex);
    sleep(60);
  } else if (!strcmp(cmd, "hold") && argc > 3) {
    evrt_event_t e = open_hex(argv[2]);
    evrt_stream_create(&s, 0, 0, 0);
    evrt_stream_delay(s, (uint64_t)atoi(argv[3]) * 1000000u);
    if ((st = evrt_event_record(e, s)))
      die("record", st);
    printf("held\n");
    sleep(60);
  } else if (!strcmp(cmd, "query")) {
    evrt_event_t e = open_hex(argv[2]);
    printf("query %s\n", evrt_err_name(evrt_event_query(e)));
  } else if (!strcmp(cmd, "reexport")) {
    evrt_event_t e = open_hex(argv[2]);
    evrt_ipc_event_handle_t h;
    printf("reexport %s\n", evrt_err_name(evrt_event_ipc_handle(e, &h)));
  } else {
    return 2;
  }
  return 0;
}
