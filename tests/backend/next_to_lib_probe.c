/*
 * next_to_lib_probe.c LIBEVRT - what next_to_lib.sh runs: loads the
 * libevrt.so.0 it is given (an installed copy in a prefix of its own, off
 * the library path), creates a stream under the EVRT_BACKEND of the
 * environment and prints where the backend library it loaded lies.
 */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <evrt.h>
#include <stdint.h>
#include <stdio.h>

int main(int argc, char **argv) {
  if (argc != 2)
    return 2;
  void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    printf("cannot load %s: %s\n", argv[1], dlerror());
    return 1;
  }
  evrt_status_t (*create)(evrt_stream_t *, int, int, unsigned);
  const char *(*message)(void);
  *(void **)&create = dlsym(lib, "evrt_stream_create");
  *(void **)&message = dlsym(lib, "evrt_last_error_message");
  if (!create || !message)
    return 1;
  evrt_stream_t s;
  if (create(&s, 0, 0, 0) != EVRT_SUCCESS) {
    printf("stream create failed: %s\n", message());
    return 1;
  }
  void *be = dlopen("libevrt-backend-counting.so.0", RTLD_NOW | RTLD_NOLOAD);
  void *sym = be ? dlsym(be, "evrt_test_backend_counts") : NULL;
  Dl_info di;
  if (!sym || !dladdr(sym, &di) || !di.dli_fname) {
    printf("the counting backend is not loaded\n");
    return 1;
  }
  printf("backend %s\n", di.dli_fname);
  return 0;
}
