/* Compiled against the installed header, as C and as C++ (run.sh). */
#include <evrt.h>
#include <stdio.h>

static void hello(void *p) { *(int *)p = 42; }

int main(void) {
  evrt_stream_t s;
  evrt_event_t e;
  int v = 0;
  if (evrt_stream_create(&s, 0, 0, 0) || evrt_event_create(&e, EVRT_EVENT_TIMING) ||
      evrt_launch_host_func(s, hello, &v) || evrt_event_record(e, s) ||
      evrt_event_synchronize(e) || v != 42 ||
      evrt_version() != EVRT_VERSION_HEX) { /* header and library agree */
    printf("FAILED: %s\n", evrt_last_error_message());
    return 1;
  }
  evrt_event_destroy(e);
  evrt_stream_destroy(s);
  printf("installed evrt %s works\n", evrt_version_string());
  return 0;
}
