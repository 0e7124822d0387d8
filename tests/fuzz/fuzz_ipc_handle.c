/*
 * fuzz_ipc_handle.c - libFuzzer target for the interprocess handle parser.
 *
 * The first 64 bytes of an input are an evrt_ipc_event_handle_t given to
 * evrt_event_ipc_open; the rest, if any, mutate a handle this process
 * exported itself (same-process import must be refused; a corrupted one must
 * be refused or, if it names a live shared event, open to a usable event).
 * Every call must return a documented status and never crash; an opened
 * event must answer query / get_info and be destroyed cleanly.
 */
#include <evrt.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int documented(evrt_status_t st) {
  switch (st) {
#define XX(name, value, msg) case EVRT_##name:
    EVRT_ERRNO_MAP(XX)
#undef XX
    return 1;
  }
  return 0;
}

static void check(evrt_status_t st, const char *what) {
  if (!documented(st)) {
    fprintf(stderr, "fuzz_ipc_handle: %s returned undocumented status %d\n",
            what, (int)st);
    abort();
  }
}

static void use_and_close(evrt_event_t e) {
  evrt_event_info_t info = {.struct_size = sizeof info};
  check(evrt_event_query(e), "query of an opened event");
  check(evrt_event_get_info(e, &info), "get_info of an opened event");
  evrt_ipc_event_handle_t again;
  /* an imported event cannot be re-exported */
  evrt_status_t st = evrt_event_ipc_handle(e, &again);
  if (st == EVRT_SUCCESS) {
    fprintf(stderr, "fuzz_ipc_handle: an imported event was re-exported\n");
    abort();
  }
  if (evrt_event_destroy(e) != EVRT_SUCCESS) {
    fprintf(stderr, "fuzz_ipc_handle: cannot destroy an opened event\n");
    abort();
  }
}

static evrt_event_t exported;
static evrt_ipc_event_handle_t exported_h;
static evrt_status_t export_st;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  if (evrt_event_create(&exported, EVRT_EVENT_INTERPROCESS) != EVRT_SUCCESS)
    abort();
  export_st = evrt_event_ipc_handle(exported, &exported_h);
  check(export_st, "export");
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  evrt_ipc_event_handle_t h;
  memset(&h, 0, sizeof h);
  memcpy(h.reserved, data, size < sizeof h.reserved ? size : sizeof h.reserved);
  evrt_event_t e = NULL;
  evrt_status_t st = evrt_event_ipc_open(&e, &h);
  check(st, "ipc_open of arbitrary bytes");
  if (st == EVRT_SUCCESS)
    use_and_close(e);
  check(evrt_event_ipc_open(NULL, &h), "ipc_open(NULL, h)");
  check(evrt_event_ipc_open(&e, NULL), "ipc_open(&e, NULL)");

  if (export_st == EVRT_SUCCESS) {
    evrt_ipc_event_handle_t m = exported_h;
    st = evrt_event_ipc_open(&e, &m);
    if (st != EVRT_ERROR_IPC_SAME_PROCESS) {
      fprintf(stderr, "fuzz_ipc_handle: own handle opened: %s\n",
              evrt_err_name(st));
      abort();
    }
    for (size_t i = sizeof h.reserved; i + 1 < size; i += 2)
      m.reserved[data[i] % EVRT_IPC_HANDLE_SIZE] ^= data[i + 1];
    st = evrt_event_ipc_open(&e, &m);
    check(st, "ipc_open of a corrupted own handle");
    if (st == EVRT_SUCCESS)
      use_and_close(e);
  }
  return 0;
}
