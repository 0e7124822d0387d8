/* evrt.h is self-contained and compiles as C11 -pedantic (evrt_header_c)
 * and, through header_check.cpp, as C++11 -pedantic (evrt_header_cxx); the
 * program runs so that the link against libevrt.so is checked too. */
#include <evrt.h>

#include <stdio.h>
#include <string.h>

int main(void) {
  char v[32];
  evrt_event_t e;
  evrt_ipc_event_handle_t h;
  snprintf(v, sizeof v, "%d.%d.%d", EVRT_VERSION_MAJOR, EVRT_VERSION_MINOR,
           EVRT_VERSION_PATCH);
  int ok = sizeof h.reserved == EVRT_IPC_HANDLE_SIZE && EVRT_SUCCESS == 0 &&
           EVRT_NOT_READY == 1 && evrt_version() == EVRT_VERSION_HEX &&
           strcmp(evrt_version_string(), v) == 0 &&
           evrt_event_create(&e, EVRT_EVENT_DEFAULT) == EVRT_SUCCESS &&
           evrt_event_query(e) == EVRT_SUCCESS &&
           evrt_event_destroy(e) == EVRT_SUCCESS;
  printf("%s\n", ok ? "header ok" : "header WRONG");
  return ok ? 0 : 1;
}
