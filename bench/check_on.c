/*
 * check_on.c - evrt-bench-check-on: what EVRT_CHECK=1 costs (issue 15's
 * bounds: at most 3x on the demo, at most 10x on host-function throughput).
 *
 *  - host-function throughput: libevrt.so initialized with EVRT_CHECK=1 and
 *    a copy of the core built without the checker (EVRT_NO_CHECK) are both
 *    loaded with dlopen(RTLD_LOCAL) and measured interleaved, in both load
 *    orders (the second in a forked child), as evrt-bench-tracing does; the
 *    ratio judged is the geometric mean of the two orders.
 *  - the demo: examples/evrt-demo run alternately with and without
 *    EVRT_CHECK=1 (wall time of each run), once as shipped (its 48 ms of
 *    stream delays dominate) and once with --no-delay (the pipeline's work
 *    alone, the checker's worst case on it).
 *  - a copy of a 4 MiB table after 200,000 small reads of it by the same
 *    stream, against a copy of the table fresh (issue 23, item 7: the
 *    shadow kept every small read's interval, and each copy walked them):
 *    the first copy after the reads pays once for the intervals they left,
 *    the next ones (fastest of 5, as the fresh one) cost what a fresh one
 *    does.
 *
 *   evrt-bench-check-on [--json]
 */
#include "bench.h"

#include "evrt.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

void bench_die(const char *file, int line, const char *call, int st) {
  fprintf(stderr, "%s:%d: %s failed: status %d\n", file, line, call, st);
  exit(2);
}

struct api {
  void *dl;
  evrt_status_t (*stream_create)(evrt_stream_t *, int, int, unsigned);
  evrt_status_t (*stream_synchronize)(evrt_stream_t);
  evrt_status_t (*launch_host_func)(evrt_stream_t, evrt_host_fn, void *);
  int (*check_enabled)(void);
  evrt_status_t (*memcpy_async)(evrt_stream_t, void *, const void *, size_t);
  evrt_status_t (*check_access)(const void *, size_t, unsigned);
  evrt_stream_t s;
};

static void empty_fn(void *arg) { (void)arg; }

/* Load a copy and initialize it with EVRT_CHECK set to `check`. */
static const char *load(struct api *x, const char *path, bool check) {
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
  SYM(stream_synchronize, "evrt_stream_synchronize");
  SYM(launch_host_func, "evrt_launch_host_func");
  SYM(check_enabled, "evrt_check_enabled");
  SYM(memcpy_async, "evrt_memcpy_async");
  SYM(check_access, "evrt_check_access");
#undef SYM
  if (check)
    setenv("EVRT_CHECK", "1", 1);
  BENCH_CHECK(x->stream_create(&x->s, 0, 0, 0)); /* initializes the copy */
  unsetenv("EVRT_CHECK");
  if (x->check_enabled() != (int)check)
    return "the checker is not in the state asked for";
  /* warm up: the checker's first call site loads its unwinder (dlopen) */
  for (int i = 0; i < 2000; i++)
    BENCH_CHECK(x->launch_host_func(x->s, empty_fn, NULL));
  BENCH_CHECK(x->stream_synchronize(x->s));
  return NULL;
}

static double hostfunc(void *ctx, long iters) {
  struct api *x = ctx;
  uint64_t t0 = bench_now_ns();
  for (long i = 0; i < iters; i++)
    BENCH_CHECK(x->launch_host_func(x->s, empty_fn, NULL));
  BENCH_CHECK(x->stream_synchronize(x->s));
  return (double)(bench_now_ns() - t0) / (double)iters;
}

/* ns of the fastest of `times` copies of the whole table on x->s, each
 * synchronized (a single copy of ~150 us is at the mercy of this shared
 * VM's scheduler). */
static double table_copy(struct api *x, void *dst, const void *table,
                         size_t n, int times) {
  double best = 0;
  for (int i = 0; i < times; i++) {
    uint64_t t0 = bench_now_ns();
    BENCH_CHECK(x->memcpy_async(x->s, dst, table, n));
    BENCH_CHECK(x->stream_synchronize(x->s));
    double t = (double)(bench_now_ns() - t0);
    if (i == 0 || t < best)
      best = t;
  }
  return best;
}

/* The copy after many small reads, against a fresh one (checked copy). */
static void copy_after_reads(struct api *x) {
  enum { TABLE = 4 << 20, SMALL = 16, READS = 200000 };
  unsigned char *table = calloc(1, TABLE), *dst = malloc(TABLE), small[SMALL];
  if (!table || !dst) {
    bench_skip("check_on", "no memory for the table");
    free(table);
    free(dst);
    return;
  }
  struct bench_case fresh = {.name = "table copy, fresh shadow", .iters = 1,
                             .nsamples = bench_reps},
                    first = {.name = "table copy, first after 200k reads",
                             .iters = 1, .nsamples = bench_reps},
                    next = {.name = "table copy, later after 200k reads",
                            .iters = 1, .nsamples = bench_reps};
  uint32_t r = 1;
  for (int k = 0; k < bench_reps; k++) {
    /* the host writes the table: one interval again (after a synchronize,
     * so that the write is ordered after the stream's reads) */
    BENCH_CHECK(x->stream_synchronize(x->s));
    BENCH_CHECK(x->check_access(table, TABLE, EVRT_CHECK_WRITE));
    fresh.s[k] = table_copy(x, dst, table, TABLE, 5) / 1e3;
    for (int i = 0; i < READS; i++) {
      r = r * 1103515245u + 12345u;
      BENCH_CHECK(x->memcpy_async(x->s, small,
                                  table + (r >> 8) % (TABLE / SMALL) * SMALL,
                                  SMALL));
    }
    BENCH_CHECK(x->stream_synchronize(x->s));
    first.s[k] = table_copy(x, dst, table, TABLE, 1) / 1e3;
    next.s[k] = table_copy(x, dst, table, TABLE, 5) / 1e3;
  }
  bench_stats(&fresh);
  bench_stats(&first);
  bench_stats(&next);
  bench_note("copy of a 4 MiB table under EVRT_CHECK=1:");
  bench_print_case(&fresh, "us");
  bench_print_case(&first, "us");
  bench_print_case(&next, "us");
  bench_note("first copy after the reads / fresh = %.3gx (it frees the "
             "intervals the reads left)", first.median / fresh.median);
  bench_compare_values("check_on", "table_copy_after_200k_reads",
                       "later_copy_after_reads", next.median, "fresh_copy",
                       fresh.median,
                       (struct bench_target){BT_RATIO_LE, 2.0,
                                             "a copy costs what a fresh one "
                                             "does once the reads are "
                                             "covered"},
                       ", \"method\": \"alternated in each repetition\"");
  free(table);
  free(dst);
}

/* Wall time (ns) of one run of the demo; check: with EVRT_CHECK=1. */
static double demo_run(const char *extra, bool check) {
  char *argv[] = {(char *)EVRT_BENCH_DEMO, (char *)extra, NULL};
  if (!extra)
    argv[1] = NULL;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  if (check)
    setenv("EVRT_CHECK", "1", 1);
  uint64_t t0 = bench_now_ns();
  pid_t pid;
  int rc = posix_spawn(&pid, EVRT_BENCH_DEMO, &fa, NULL, argv, environ);
  unsetenv("EVRT_CHECK");
  posix_spawn_file_actions_destroy(&fa);
  int st = 0;
  if (rc != 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
      WEXITSTATUS(st) != 0)
    return -1;
  return (double)(bench_now_ns() - t0);
}

static void demo(const char *variant, const char *extra) {
  double on[BENCH_MAX_REPS], off[BENCH_MAX_REPS];
  for (int r = 0; r < bench_reps; r++) {
    off[r] = demo_run(extra, false);
    on[r] = demo_run(extra, true);
    if (on[r] < 0 || off[r] < 0) {
      bench_skip("check_on", "the demo (%s) failed to run or reported "
                             "something", EVRT_BENCH_DEMO);
      return;
    }
  }
  struct bench_case c_on = {.name = "demo, EVRT_CHECK=1", .iters = 1,
                            .nsamples = bench_reps},
                    c_off = {.name = "demo, checker off", .iters = 1,
                             .nsamples = bench_reps};
  for (int i = 0; i < bench_reps; i++) {
    c_on.s[i] = on[i] / 1e6; /* ms */
    c_off.s[i] = off[i] / 1e6;
  }
  bench_stats(&c_on);
  bench_stats(&c_off);
  bench_note("demo %s:", variant);
  bench_print_case(&c_on, "ms");
  bench_print_case(&c_off, "ms");
  bench_compare_values("check_on", variant, "EVRT_CHECK=1", c_on.median,
                       "checker_off", c_off.median,
                       (struct bench_target){BT_RATIO_LE, 3.0,
                                             "at most 3x on the demo"},
                       ", \"method\": \"alternated whole runs\"");
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "--json") == 0)
      bench_json = true;
  const char *v = getenv("EVRT_BENCH_REPS");
  if (v && atoi(v) >= 5)
    bench_reps = atoi(v) < BENCH_MAX_REPS ? atoi(v) : BENCH_MAX_REPS;
  v = getenv("EVRT_BENCH_SAMPLE_MS");
  if (v && atof(v) > 0)
    bench_sample_ms = atof(v);
  unsetenv("EVRT_CHECK");
  /* host functions: the other load order in a forked child */
  double child[4];
  int fds[2];
  if (pipe(fds) != 0) {
    bench_skip("check_on", "pipe: %s", strerror(errno));
    return 0;
  }
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) {
    bench_skip("check_on", "fork: %s", strerror(errno));
    return 0;
  }
  static struct api on, off;
  const char *err;
  /* A fixed batch per sample (no calibration): one slow first call on a
   * loaded machine made the calibration pick one item, and the sample then
   * measured a synchronize's wake-up instead of throughput. */
  struct bench_case cs[2] = {
      {.name = "hostfunc_throughput, EVRT_CHECK=1", .fn = hostfunc, .ctx = &on,
       .iters = 20000},
      {.name = "hostfunc_throughput, no checker", .fn = hostfunc, .ctx = &off,
       .iters = 20000}};
  if (pid == 0) {
    close(fds[0]);
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0)
      dup2(null, STDOUT_FILENO);
    if ((err = load(&off, EVRT_BENCH_LIB_NOCHECK, false)) ||
        (err = load(&on, EVRT_BENCH_LIB_CHECK, true)))
      _exit(3);
    bench_run(cs, 2, "ns");
    double out[4] = {cs[0].median, cs[1].median, cs[0].min, cs[1].min};
    ssize_t w = write(fds[1], out, sizeof out);
    _exit(w == (ssize_t)sizeof out ? 0 : 4);
  }
  close(fds[1]);
  ssize_t n = read(fds[0], child, sizeof child);
  close(fds[0]);
  int st = 0;
  if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) ||
      n != (ssize_t)sizeof child) {
    bench_skip("check_on", "the child run (no-checker copy loaded first) "
                           "failed");
    return 0;
  }
  if ((err = load(&on, EVRT_BENCH_LIB_CHECK, true)) ||
      (err = load(&off, EVRT_BENCH_LIB_NOCHECK, false))) {
    bench_skip("check_on", "cannot load both library copies: %s", err);
    return 0;
  }
  bench_title("check_on", "what EVRT_CHECK=1 costs: host functions (two "
                          "library copies, interleaved, both load orders) "
                          "and the demo (alternated runs)");
  bench_note("EVRT_CHECK=1 copy loaded first:");
  bench_run(cs, 2, "ns");
  bench_note("hostfunc_throughput: no-checker copy loaded first (a forked "
             "child): EVRT_CHECK=1 %.1f ns, no checker %.1f ns per item",
             child[0], child[1]);
  bench_note("hostfunc_throughput: EVRT_CHECK=1 / no checker = %.3gx checked "
             "first, %.3gx unchecked first",
             cs[0].median / cs[1].median, child[0] / child[1]);
  bench_compare_values("check_on", "hostfunc_throughput", cs[0].name,
                       sqrt(cs[0].median * child[0]), "no_checker",
                       sqrt(cs[1].median * child[1]),
                       (struct bench_target){BT_RATIO_LE, 10.0,
                                             "at most 10x on host functions"},
                       ", \"method\": \"geometric mean of both load orders\"");
  copy_after_reads(&on);
  demo("demo", NULL);
  demo("demo_no_delay", "--no-delay");
  return 0;
}
