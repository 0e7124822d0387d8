/*
 * badabi.c - libevrt-backend-badabi.so.0 (and, built with
 * BADABI_SIZE, libevrt-backend-badsize.so.0): a backend built against
 * another interface, which init must refuse with a clear error before
 * any of its hooks runs.  Its hooks are the cpu backend's; its version (or
 * its table size) is wrong.
 */
#include "backend.h"

static struct evrt__backend_ops ops;

__attribute__((visibility("default"))) const struct evrt__backend_ops *
evrt_backend_entry_v1(uint32_t core_version,
                      const struct evrt__backend_ops *builtin) {
  (void)core_version;
  ops = *builtin;
  ops.name = "badabi";
#ifdef BADABI_SIZE
  ops.size = (uint32_t)sizeof ops - 8; /* built with a shorter table */
#else
  ops.version = EVRT__BACKEND_VERSION + 1;
#endif
  return &ops;
}
