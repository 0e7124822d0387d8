/*
 * tracing_off.c - evrt-bench-tracing: does tracing cost anything when it is
 * off?  The normal library (trace hooks compiled in, tracing not started)
 * and a copy of the same core built with EVRT_NO_TRACE (hooks compiled out)
 * are both loaded into this process with dlopen(RTLD_LOCAL): each keeps its
 * own globals and worker pool, and the two are measured interleaved, shape
 * by shape.  The ratio is traced / compiled-out; "nothing measurable" is
 * judged as a ratio <= 1.05 (the spread between repetitions on this machine
 * is of that order).
 *
 * Load order biases the figures: two byte-identical copies of one library
 * differ by up to 10% on record_idle and 2x on the host-function shape,
 * depending on which was loaded first.  So the comparison runs twice, in a
 * forked child with the compiled-out copy loaded first and here with the
 * traced copy first, and the ratio judged is the geometric mean of the two
 * (a factor that favours the first-loaded copy cancels out).
 *
 *   evrt-bench-tracing [--json]
 *
 * The same comparison serves the checker's hooks (EVRT_CHECK off vs
 * compiled out with EVRT_NO_CHECK): evrt-bench-check is this file built
 * with the HOOKS_* macros below set for it (bench/CMakeLists.txt).
 *
 * And the A/B of two library builds (bench/README.md, "Method"): with
 * --ab NEW OLD it loads those two libevrt.so files instead, adds the
 * create/destroy shapes, and reports NEW / OLD per shape (the geometric
 * mean of both load orders), with no target:
 *
 *   evrt-bench-tracing --ab build-bench/libevrt.so /tmp/old/libevrt.so
 */
#include "bench.h"

#include "evrt.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* What is compared (defaults: the trace hooks). */
#ifndef HOOKS_SCENARIO
#define HOOKS_SCENARIO "tracing_off"
#define HOOKS_ON "traced"           /* the copy with the hooks, off */
#define HOOKS_ROW "tracing off"
#define HOOKS_BASELINE "tracing_compiled_out"
#define HOOKS_TITLE                                                            \
  "trace hooks compiled in but off vs compiled out (EVRT_NO_TRACE), "          \
  "interleaved, in both load orders"
#define HOOKS_ENV "EVRT_TRACE"
#define HOOKS_ENV_WHY "EVRT_TRACE is set: tracing would be on"
#endif

void bench_die(const char *file, int line, const char *call, int st) {
  fprintf(stderr, "%s:%d: %s failed: status %d\n", file, line, call, st);
  exit(2);
}

/* The calls the shapes use, resolved in one library copy. */
struct api {
  const char *name;
  void *dl;
  evrt_status_t (*stream_create)(evrt_stream_t *, int, int, unsigned);
  evrt_status_t (*stream_destroy)(evrt_stream_t);
  evrt_status_t (*event_destroy)(evrt_event_t);
  evrt_status_t (*stream_synchronize)(evrt_stream_t);
  evrt_status_t (*event_create)(evrt_event_t *, unsigned);
  evrt_status_t (*event_record)(evrt_event_t, evrt_stream_t);
  evrt_status_t (*event_query)(evrt_event_t);
  evrt_status_t (*event_synchronize)(evrt_event_t);
  evrt_status_t (*stream_wait_event)(evrt_stream_t, evrt_event_t);
  evrt_status_t (*launch_host_func)(evrt_stream_t, evrt_host_fn, void *);
  evrt_stream_t s, a, b;
  evrt_event_t e, ea, eb;
};

static const char *load(struct api *x, const char *path) {
  x->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!x->dl)
    return dlerror();
#define SYM(field, sym)                                                        \
  do {                                                                         \
    void *p_ = dlsym(x->dl, sym);                                              \
    if (!p_)                                                                   \
      return sym;                                                              \
    memcpy(&x->field, &p_, sizeof p_);                                         \
  } while (0)
  SYM(stream_create, "evrt_stream_create");
  SYM(stream_destroy, "evrt_stream_destroy");
  SYM(event_destroy, "evrt_event_destroy");
  SYM(stream_synchronize, "evrt_stream_synchronize");
  SYM(event_create, "evrt_event_create");
  SYM(event_record, "evrt_event_record");
  SYM(event_query, "evrt_event_query");
  SYM(event_synchronize, "evrt_event_synchronize");
  SYM(stream_wait_event, "evrt_stream_wait_event");
  SYM(launch_host_func, "evrt_launch_host_func");
#undef SYM
  BENCH_CHECK(x->stream_create(&x->s, 0, 0, 0));
  BENCH_CHECK(x->stream_create(&x->a, 0, 0, 0));
  BENCH_CHECK(x->stream_create(&x->b, 0, 0, 0));
  BENCH_CHECK(x->event_create(&x->e, 0));
  BENCH_CHECK(x->event_create(&x->ea, 0));
  BENCH_CHECK(x->event_create(&x->eb, 0));
  return NULL;
}

static double record_idle(void *ctx, long iters) {
  struct api *x = ctx;
  uint64_t t0 = bench_now_ns();
  for (long i = 0; i < iters; i++)
    BENCH_CHECK(x->event_record(x->e, x->s));
  return (double)(bench_now_ns() - t0) / (double)iters;
}

static double query_complete(void *ctx, long iters) {
  struct api *x = ctx;
  BENCH_CHECK(x->event_record(x->e, x->s));
  BENCH_CHECK(x->event_synchronize(x->e));
  uint64_t t0 = bench_now_ns();
  for (long i = 0; i < iters; i++)
    BENCH_CHECK(x->event_query(x->e));
  return (double)(bench_now_ns() - t0) / (double)iters;
}

static double record_sync_idle(void *ctx, long iters) {
  struct api *x = ctx;
  uint64_t t0 = bench_now_ns();
  for (long i = 0; i < iters; i++) {
    BENCH_CHECK(x->event_record(x->e, x->s));
    BENCH_CHECK(x->event_synchronize(x->e));
  }
  return (double)(bench_now_ns() - t0) / (double)iters;
}

static void empty_fn(void *arg) { (void)arg; }

static double hostfunc(void *ctx, long iters) {
  struct api *x = ctx;
  uint64_t t0 = bench_now_ns();
  for (long i = 0; i < iters; i++)
    BENCH_CHECK(x->launch_host_func(x->s, empty_fn, NULL));
  BENCH_CHECK(x->stream_synchronize(x->s));
  return (double)(bench_now_ns() - t0) / (double)iters;
}

static double event_create_destroy(void *ctx, long iters) {
  struct api *x = ctx;
  evrt_event_t e;
  uint64_t t0 = bench_now_ns();
  for (long i = 0; i < iters; i++) {
    BENCH_CHECK(x->event_create(&e, 0));
    BENCH_CHECK(x->event_destroy(e));
  }
  return (double)(bench_now_ns() - t0) / (double)iters;
}

static double stream_create_destroy(void *ctx, long iters) {
  struct api *x = ctx;
  evrt_stream_t s;
  uint64_t t0 = bench_now_ns();
  for (long i = 0; i < iters; i++) {
    BENCH_CHECK(x->stream_create(&s, 0, 0, 0));
    BENCH_CHECK(x->stream_destroy(s));
  }
  return (double)(bench_now_ns() - t0) / (double)iters;
}

static atomic_uint gate, gate_nw;
static atomic_uint_least64_t gate_t0;
static void gate_fn(void *arg) {
  (void)arg;
  bench_wait_change(&gate, 0, 0, &gate_nw, 0);
  atomic_store_explicit(&gate_t0, bench_now_ns(), memory_order_relaxed);
}

static double pingpong(void *ctx, long iters) {
  struct api *x = ctx;
  atomic_store(&gate, 0);
  BENCH_CHECK(x->launch_host_func(x->a, gate_fn, NULL));
  for (long i = 0; i < iters; i++) {
    BENCH_CHECK(x->event_record(x->ea, x->a));
    BENCH_CHECK(x->stream_wait_event(x->b, x->ea));
    BENCH_CHECK(x->event_record(x->eb, x->b));
    BENCH_CHECK(x->stream_wait_event(x->a, x->eb));
  }
  bench_post(&gate, 1, &gate_nw, 0);
  BENCH_CHECK(x->stream_synchronize(x->a));
  return (double)(bench_now_ns() -
                  atomic_load_explicit(&gate_t0, memory_order_relaxed)) /
         (double)iters;
}

int main(int argc, char **argv) {
  /* the two copies: hooks on and compiled out, or NEW and OLD (--ab) */
  const char *lib_a = EVRT_BENCH_LIB_TRACED, *lib_b = EVRT_BENCH_LIB_NOTRACE;
  bool ab = false;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--json") == 0) {
      bench_json = true;
    } else if (strcmp(argv[i], "--ab") == 0 && i + 2 < argc) {
      ab = true;
      lib_a = argv[++i];
      lib_b = argv[++i];
    }
  }
  const char *scen = ab ? "ab" : HOOKS_SCENARIO;
  const char *la = ab ? "new" : HOOKS_ON, *lb = ab ? "old" : "compiled out";
  const char *row_a = ab ? "new" : HOOKS_ROW;
  const char *v = getenv("EVRT_BENCH_REPS");
  if (v && atoi(v) >= 5)
    bench_reps = atoi(v) < BENCH_MAX_REPS ? atoi(v) : BENCH_MAX_REPS;
  v = getenv("EVRT_BENCH_SAMPLE_MS");
  if (v && atof(v) > 0)
    bench_sample_ms = atof(v);
#ifdef EVRT_BENCH_TRACE_OFF_BUILD
  if (!ab) {
    bench_skip(HOOKS_SCENARIO, "this build has EVRT_TRACE_COMPILED=OFF: "
                               "both copies have tracing compiled out");
    return 0;
  }
#endif
  if (getenv(HOOKS_ENV)) {
    bench_skip(scen, HOOKS_ENV_WHY);
    return 0;
  }
  struct {
    const char *variant;
    bench_fn fn;
    long max_iters;
  } shapes[] = {
      {"record_idle", record_idle, 0},
      {"query_complete", query_complete, 0},
      {"record_sync_idle", record_sync_idle, 0},
      {"hostfunc_throughput", hostfunc, 0},
      {"pingpong_streams", pingpong, 200000},
      {"event_create_destroy", event_create_destroy, 0},
      {"stream_create_destroy", stream_create_destroy, 0},
  };
  /* the create/destroy shapes in the A/B only (no hook on those paths) */
  enum { NS_ALL = sizeof shapes / sizeof shapes[0] };
  const int NS = ab ? NS_ALL : NS_ALL - 2;
  /* the child's median, min, max and iterations, case by case */
  double child_figures[2 * NS_ALL][4];
  const size_t figures_size = (size_t)(2 * NS) * sizeof child_figures[0];
  /* child: the other load order, figures sent back through a pipe */
  int fds[2];
  if (pipe(fds) != 0) {
    bench_skip(scen, "pipe: %s", strerror(errno));
    return 0;
  }
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) {
    bench_skip(scen, "fork: %s", strerror(errno));
    return 0;
  }
  bool child = pid == 0;
  static struct api on, off; /* lib_a, lib_b */
  on.name = la;
  off.name = lb;
  const char *err;
  if (child) {
    close(fds[0]);
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0)
      dup2(null, STDOUT_FILENO); /* the parent prints */
    if ((err = load(&off, lib_b)) || (err = load(&on, lib_a)))
      _exit(3);
  } else {
    close(fds[1]);
    int st = 0;
    ssize_t n = read(fds[0], child_figures, figures_size);
    close(fds[0]);
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
        WEXITSTATUS(st) != 0 || n != (ssize_t)figures_size) {
      bench_skip(scen, "the child run (%s copy loaded first) failed", lb);
      return 0;
    }
    if ((err = load(&on, lib_a)) || (err = load(&off, lib_b))) {
      bench_skip(scen, "cannot load both library copies: %s", err);
      return 0;
    }
  }
  if (!child)
    bench_title(scen, ab ? "library NEW vs OLD, interleaved, in both load "
                           "orders"
                         : HOOKS_TITLE);
  struct bench_case cs[2 * NS_ALL];
  static char names[2 * NS_ALL][80];
  for (int k = 0; k < NS; k++) {
    snprintf(names[2 * k], 80, "%s, %s", shapes[k].variant, row_a);
    snprintf(names[2 * k + 1], 80, "%s, %s", shapes[k].variant, lb);
    cs[2 * k] = (struct bench_case){.name = names[2 * k], .fn = shapes[k].fn,
                                    .ctx = &on,
                                    .max_iters = shapes[k].max_iters};
    cs[2 * k + 1] = (struct bench_case){.name = names[2 * k + 1],
                                        .fn = shapes[k].fn, .ctx = &off,
                                        .max_iters = shapes[k].max_iters};
  }
  if (!child)
    bench_note("%s copy loaded first:", la);
  bench_run(cs, 2 * NS, "ns");
  if (child) {
    double out[2 * NS_ALL][4];
    for (int i = 0; i < 2 * NS; i++) {
      out[i][0] = cs[i].median;
      out[i][1] = cs[i].min;
      out[i][2] = cs[i].max;
      out[i][3] = (double)cs[i].iters;
    }
    ssize_t w = write(fds[1], out, figures_size);
    _exit(w == (ssize_t)figures_size ? 0 : 4);
  }
  /* the child's figures, then the ratio in each order and their mean */
  bench_note("%s copy loaded first (a forked child):", lb);
  struct bench_case other[2 * NS_ALL];
  for (int i = 0; i < 2 * NS; i++) {
    other[i] = (struct bench_case){.name = names[i],
                                   .median = child_figures[i][0],
                                   .min = child_figures[i][1],
                                   .max = child_figures[i][2],
                                   .iters = (long)child_figures[i][3],
                                   .nsamples = bench_reps};
    bench_print_case(&other[i], "ns");
  }
  for (int k = 0; k < NS; k++) {
    const struct bench_case *t1 = &cs[2 * k], *n1 = &cs[2 * k + 1];
    const struct bench_case *t2 = &other[2 * k], *n2 = &other[2 * k + 1];
    bench_note("%s: %s / %s = %.3gx %s first, %.3gx %s first",
               shapes[k].variant, la, lb, t1->median / n1->median, la,
               t2->median / n2->median, lb);
    if (ab) {
      bench_compare_values(
          "ab", shapes[k].variant, names[2 * k], sqrt(t1->median * t2->median),
          "old", sqrt(n1->median * n2->median),
          (struct bench_target){BT_NONE, 0, NULL},
          ", \"method\": \"geometric mean of both load orders\"");
      continue;
    }
    bench_compare_values(
        HOOKS_SCENARIO, shapes[k].variant, names[2 * k],
        sqrt(t1->median * t2->median), HOOKS_BASELINE,
        sqrt(n1->median * n2->median),
        (struct bench_target){BT_RATIO_LE, 1.05,
                              "costs nothing measurable (<= 1.05x)"},
        ", \"method\": \"geometric mean of both load orders\"");
  }
  return 0;
}
