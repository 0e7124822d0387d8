/*
 * test_backend_load.c - EVRT_BACKEND at init (src/backend_load.c): a
 * backend loaded with dlopen runs the streams through its own table; one
 * built against another interface version or table size, a name with no
 * library, and a name that is a path are refused at init with
 * EVRT_ERROR_NOT_SUPPORTED and a message that says why, leaving the
 * library uninitialized (a later init with the cpu backend works).  Each
 * test runs in a fresh image of this binary (init runs once per process);
 * LD_LIBRARY_PATH points at the test backends (CMakeLists.txt).
 */
#include "test.h"

#include <dlfcn.h>

static atomic_int gate;
static void wait_gate(void *u) {
  (void)u;
  while (!atomic_load(&gate))
    sleep_ms(1);
}
static void *open_gate(void *u) {
  (void)u;
  sleep_ms(20);
  atomic_store(&gate, 1);
  return NULL;
}

typedef void (*counts_fn)(unsigned long *, unsigned long *, unsigned long *);

#define IN_FRESH(test, value)                                                  \
  if (!HARNESS_IN_FRESH_IMAGE()) {                                             \
    ASSERT_EQ(harness_run_fresh(test, "EVRT_BACKEND", value), 0);              \
    return;                                                                    \
  }

TEST(loaded_backend_runs_the_streams) {
  IN_FRESH("loaded_backend_runs_the_streams", "counting");
  evrt_stream_t s;
  ASSERT_OK(evrt_stream_create(&s, 0, 0, 0));
  void *h = dlopen("libevrt-backend-counting.so.0", RTLD_NOW | RTLD_NOLOAD);
  ASSERT(h != NULL); /* evrt loaded it */
  counts_fn counts = (counts_fn)(uintptr_t)dlsym(h, "evrt_test_backend_counts");
  ASSERT(counts != NULL);
  unsigned long sub0, cp0, w0, sub, cp, w;
  counts(&sub0, &cp0, &w0);
  char src[64] = "through the counting backend", dst[64] = {0};
  ASSERT_OK(evrt_memcpy_async(s, dst, src, sizeof src));
  ASSERT_OK(evrt_stream_synchronize(s));
  ASSERT(strcmp(dst, src) == 0);
  counts(&sub, &cp, &w);
  ASSERT(sub > sub0); /* the enqueue's submit went through its table */
  ASSERT_EQ(cp - cp0, 1); /* the copy executed through its copy hook */
  /* A synchronize that must wait goes through its host_wait: a host
   * function held by a gate that another thread opens later.  (Retried: a
   * stalled main thread may reach the synchronize after the gate opened.) */
  for (int i = 0; i < 50 && w == w0; i++) {
    atomic_store(&gate, 0);
    ASSERT_OK(evrt_launch_host_func(s, wait_gate, NULL));
    pthread_t t;
    ASSERT(pthread_create(&t, NULL, open_gate, NULL) == 0);
    ASSERT_OK(evrt_stream_synchronize(s));
    pthread_join(t, NULL);
    counts(&sub, &cp, &w);
  }
  ASSERT(w > w0);
  ASSERT_OK(evrt_stream_destroy(s));
  dlclose(h);
}

/* init refuses the named backend with a message containing each of want;
 * then, without EVRT_BACKEND, init uses the cpu backend. */
static void refused(const char *want1, const char *want2) {
  ASSERT_ST(evrt_init(), EVRT_ERROR_NOT_SUPPORTED);
  const char *m = evrt_last_error_message();
  if (!strstr(m, want1) || (want2 && !strstr(m, want2)))
    FAIL_("message '%s' lacks '%s' / '%s'", m, want1, want2 ? want2 : "");
  evrt_stream_t s;
  ASSERT_ST(evrt_stream_create(&s, 0, 0, 0), EVRT_ERROR_NOT_SUPPORTED);
  unsetenv("EVRT_BACKEND");
  ASSERT_OK(evrt_stream_create(&s, 0, 0, 0));
  ASSERT_OK(evrt_launch_host_func(s, wait_gate, NULL));
  atomic_store(&gate, 1);
  ASSERT_OK(evrt_stream_synchronize(s));
  ASSERT_OK(evrt_stream_destroy(s));
}

TEST(other_interface_version_is_refused) {
  IN_FRESH("other_interface_version_is_refused", "badabi");
  refused("interface version 2", "needs version 1");
}

TEST(other_table_size_is_refused) {
  IN_FRESH("other_table_size_is_refused", "badsize");
  refused("libevrt-backend-badsize.so.0", "bytes");
}

TEST(unknown_backend_names_the_library) {
  IN_FRESH("unknown_backend_names_the_library", "nosuch");
  refused("libevrt-backend-nosuch.so.0", "\"cpu\"");
}

TEST(a_path_is_not_a_backend_name) {
  IN_FRESH("a_path_is_not_a_backend_name", "../../tmp/x");
  refused("not a backend name", NULL);
}

TEST(cpu_is_built_in) {
  IN_FRESH("cpu_is_built_in", "cpu");
  evrt_stream_t s;
  ASSERT_OK(evrt_stream_create(&s, 0, 0, 0));
  ASSERT(dlopen("libevrt-backend-cpu.so.0", RTLD_NOW | RTLD_NOLOAD) == NULL);
  ASSERT_OK(evrt_stream_destroy(s));
}
