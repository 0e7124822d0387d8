/*
 * backend_load.c - choosing the backend at init (EVRT_BACKEND): the
 * built-in cpu one, or one loaded with dlopen from a versioned shared
 * object libevrt-backend-<name>.so.0 (the ordinary library search path,
 * then the folder libevrt.so.0 was loaded from: an installed backend lies
 * next to it, in a prefix of its own too), whose entry
 * EVRT_BACKEND_ENTRY returns its ops table.  "seq" (src/seq/) is built in
 * too.  The table is checked before
 * any hook runs: interface version, table size, every hook present; a
 * mismatch fails init with EVRT_ERROR_NOT_SUPPORTED and says which.
 *
 * Called by the initializing thread (init.c), no lock held.  A loaded
 * library is never closed: its table is in use until the process exits
 * (after evrt_shutdown too, whose calls still dispatch through it).
 */
#include "internal.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct evrt__backend_ops *evrt__backend = &evrt__cpu_backend;

/* A name is what may stand between "libevrt-backend-" and ".so.0": no
 * path, so EVRT_BACKEND cannot load a file from an arbitrary place. */
static bool valid_name(const char *n) {
  size_t len = strlen(n);
  if (len == 0 || len > 32)
    return false;
  for (const char *p = n; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_' ||
          *p == '-'))
      return false;
  return true;
}

/* The first hook the table lacks, or NULL. */
static const char *missing_hook(const struct evrt__backend_ops *o) {
#define EVRT__HOOK(h)                                                          \
  if (!o->h)                                                                   \
    return #h;
  EVRT__HOOK(name) EVRT__HOOK(device_count) EVRT__HOOK(init)
  EVRT__HOOK(wake_hosts) EVRT__HOOK(shutdown) EVRT__HOOK(stream_init)
  EVRT__HOOK(stream_release) EVRT__HOOK(stream_destroyed) EVRT__HOOK(submit)
  EVRT__HOOK(stream_resume) EVRT__HOOK(host_wait) EVRT__HOOK(wait_register)
  EVRT__HOOK(wait_cancel) EVRT__HOOK(timer_arm) EVRT__HOOK(timer_cancel)
  EVRT__HOOK(spin_budget_ns) EVRT__HOOK(on_own_thread) EVRT__HOOK(run_item)
  EVRT__HOOK(timestamp) EVRT__HOOK(elapsed_ns) EVRT__HOOK(copy)
  EVRT__HOOK(fill)
#undef EVRT__HOOK
  return NULL;
}

/* dlopen of lib in the folder of the object that holds this code
 * (libevrt.so.0, or the program a static copy is linked into): the library
 * path of a program using a prefix of its own does not name that folder.
 * NULL if it cannot be found or opened there. */
static void *open_next_to_self(const char *lib) {
  Dl_info di;
  if (!dladdr((void *)(uintptr_t)&evrt__backend_select, &di) || !di.dli_fname)
    return NULL;
  const char *slash = strrchr(di.dli_fname, '/');
  if (!slash)
    return NULL;
  char path[4096];
  int n = snprintf(path, sizeof path, "%.*s/%s",
                   (int)(slash - di.dli_fname), di.dli_fname, lib);
  if (n < 0 || (size_t)n >= sizeof path)
    return NULL;
  return dlopen(path, RTLD_NOW | RTLD_LOCAL);
}

evrt_status_t evrt__backend_select(void) {
  const char *want = evrt__env_path("EVRT_BACKEND");
  if (!want || !*want || strcmp(want, evrt__cpu_backend.name) == 0) {
    evrt__backend = &evrt__cpu_backend;
    return EVRT_SUCCESS;
  }
  if (strcmp(want, evrt__seq_backend.name) == 0) {
    evrt__backend = &evrt__seq_backend;
    return EVRT_SUCCESS;
  }
  if (!valid_name(want))
    return evrt__fail(EVRT_ERROR_NOT_SUPPORTED,
                      "EVRT_BACKEND=%.64s: not a backend name (1-32 of "
                      "a-z 0-9 _ -; the built-in backends are \"cpu\" and "
                      "\"seq\")",
                      want);
  char lib[64];
  snprintf(lib, sizeof lib, "libevrt-backend-%s.so.0", want);
  void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    /* kept: the first error says more than "no such file" next to us */
    char why[160];
    const char *e = dlerror();
    snprintf(why, sizeof why, "%s", e ? e : "not found");
    h = open_next_to_self(lib);
    if (!h)
      return evrt__fail(EVRT_ERROR_NOT_SUPPORTED,
                        "EVRT_BACKEND=%s: no such backend (the built-in ones "
                        "are \"cpu\" and \"seq\"; %s: %.120s)",
                        want, lib, why);
  }
  evrt__backend_entry_fn entry;
  /* POSIX: a function pointer converts from dlsym's void * this way */
  *(void **)&entry = dlsym(h, EVRT_BACKEND_ENTRY);
  if (!entry) {
    dlclose(h);
    return evrt__fail(EVRT_ERROR_NOT_SUPPORTED,
                      "EVRT_BACKEND=%s: %s exports no " EVRT_BACKEND_ENTRY
                      " (not an evrt backend)",
                      want, lib);
  }
  const struct evrt__backend_ops *o =
      entry(EVRT__BACKEND_VERSION, &evrt__cpu_backend);
  const char *hole = NULL;
  if (!o || o->version != EVRT__BACKEND_VERSION ||
      o->size != sizeof(struct evrt__backend_ops) ||
      (hole = missing_hook(o)) != NULL) {
    evrt_status_t st;
    if (!o)
      st = evrt__fail(EVRT_ERROR_NOT_SUPPORTED,
                      "EVRT_BACKEND=%s: %s refused to load", want, lib);
    else if (hole)
      st = evrt__fail(EVRT_ERROR_NOT_SUPPORTED,
                      "EVRT_BACKEND=%s: %s lacks the hook %s", want, lib, hole);
    else
      st = evrt__fail(EVRT_ERROR_NOT_SUPPORTED,
                      "EVRT_BACKEND=%s: %s has backend interface version %u "
                      "(table of %u bytes); this evrt needs version %u (%zu "
                      "bytes)",
                      want, lib, o->version, o->size, EVRT__BACKEND_VERSION,
                      sizeof(struct evrt__backend_ops));
    dlclose(h);
    return st;
  }
  evrt__backend = o;
  return EVRT_SUCCESS;
}
