/*
 * setuid_probe.c - the program tests/setuid_env.sh runs set-user-ID root
 * as another user: it initializes evrt (EVRT_TRACE, EVRT_CHECK_REPORT and
 * EVRT_BACKEND are read then), runs a copy, and leaves through exit (the
 * trace and the report are written by exit handlers).  Linked with the
 * static copy of the core, so that the set-user-ID program needs no library
 * from a path the secure-execution loader would not search.
 */
#include <evrt.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void) {
  /* first, before evrt: whether the set-user-ID bit took effect (it does
   * not under no_new_privs), for the script to tell a skip from a failure */
  printf("euid=%d\n", (int)geteuid());
  fflush(stdout);
  evrt_stream_t s;
  char src[32] = "probe", dst[32] = {0};
  if (evrt_stream_create(&s, 0, 0, 0) ||
      evrt_memcpy_async(s, dst, src, sizeof src) ||
      evrt_stream_synchronize(s) || strcmp(dst, src) != 0) {
    printf("probe failed: %s\n", evrt_last_error_message());
    return 1;
  }
  printf("probe ran\n");
  return 0;
}
