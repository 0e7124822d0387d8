/* Shared by test_ipc.c and ipc_peer.c: handle <-> hex text. */
#ifndef IPC_COMMON_H
#define IPC_COMMON_H
#include <evrt.h>
#include <stdio.h>
#include <string.h>

static inline void handle_to_hex(const evrt_ipc_event_handle_t *h, char *out) {
  for (int i = 0; i < EVRT_IPC_HANDLE_SIZE; i++)
    sprintf(out + 2 * i, "%02x", h->reserved[i]);
}
static inline int hex_to_handle(const char *s, evrt_ipc_event_handle_t *h) {
  if (strlen(s) != 2 * EVRT_IPC_HANDLE_SIZE)
    return -1;
  for (int i = 0; i < EVRT_IPC_HANDLE_SIZE; i++) {
    unsigned v;
    if (sscanf(s + 2 * i, "%2x", &v) != 1)
      return -1;
    h->reserved[i] = (unsigned char)v;
  }
  return 0;
}
#endif
