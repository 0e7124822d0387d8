/*
 * bench.h - the shared helper of evrt's benchmark suite: timing, statistics,
 * the table and JSON output, targets, /proc readers and the thread/futex
 * primitives the baselines are built from.
 *
 * Method (why the numbers hold on a noisy 2-core VM): every scenario builds a
 * list of cases (evrt and its baselines), calibrates each to a sample of
 * about EVRT_BENCH_SAMPLE_MS milliseconds, then runs EVRT_BENCH_REPS (>= 5)
 * repetitions in which all cases run one sample each, in an order that
 * rotates between repetitions.  A drift of the machine (another agent taking
 * a core) therefore hits evrt and its baseline alike, and the ratio of the
 * medians is what the targets are checked against.
 */
#ifndef EVRT_BENCH_H
#define EVRT_BENCH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BENCH_MAX_REPS 64
#define BENCH_MAX_CASES 16

/* One sample of a case: run `iters` operations, return nanoseconds per
 * operation (the case decides what one operation is; latency cases that time
 * each operation on its own return the median of those). */
typedef double (*bench_fn)(void *ctx, long iters);

struct bench_case {
  const char *name;
  bench_fn fn;
  void *ctx;
  long iters;     /* 0: calibrate to the sample duration */
  long max_iters; /* calibration cap (0: none) */
  int nsamples;
  double s[BENCH_MAX_REPS];
  double median, min, max;
};

/* Options (from the command line and the environment). */
extern bool bench_json;     /* --json: only JSON lines on stdout */
extern int bench_reps;      /* EVRT_BENCH_REPS, default 7, at least 5 */
extern double bench_sample_ms; /* EVRT_BENCH_SAMPLE_MS, default 20 */

uint64_t bench_now_ns(void);
/* Busy-wait for ns nanoseconds (used to hold a stream or a thread busy). */
void bench_spin_ns(uint64_t ns);

/* Heading and free-text lines of a scenario's table (suppressed by --json). */
void bench_title(const char *scenario, const char *what);
void bench_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A scenario that cannot run here: the reason goes to stderr in JSON mode
 * and into the table otherwise. */
void bench_skip(const char *scenario, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Calibrate, run the interleaved repetitions, compute the statistics and
 * print one table row per case (unit: "ns" per operation). */
void bench_run(struct bench_case *cases, int ncases, const char *unit);
void bench_stats(struct bench_case *c); /* median/min/max of c->s */
void bench_print_case(const struct bench_case *c, const char *unit);

/* Targets: how a comparison is judged. */
enum bench_target_kind {
  BT_NONE = 0,    /* printed for information */
  BT_RATIO_LE,    /* ratio evrt/baseline <= value */
  BT_RATIO_GE,    /* ratio evrt/baseline >= value */
  BT_ABS_LE,      /* evrt median (in the row's unit) <= value */
  BT_ABS_LT       /* evrt median < value */
};
struct bench_target {
  enum bench_target_kind kind;
  double value;
  const char *text; /* the target as the issue words it */
};

/* Print "ratio" line with the target verdict and, with --json, the JSON
 * object {"scenario", "median_ns", "baseline", "baseline_median_ns",
 * "ratio", then "variant", "target", "met"}.  Extra is appended raw to the
 * JSON object when not NULL (",\"key\": value" pairs).  Returns met (true
 * for BT_NONE). */
bool bench_compare(const char *scenario, const char *variant,
                   const struct bench_case *evrt, const struct bench_case *base,
                   struct bench_target t, const char *extra);
/* Same with plain numbers (for figures that are not bench_case samples). */
bool bench_compare_values(const char *scenario, const char *variant,
                          const char *evrt_name, double evrt_ns,
                          const char *base_name, double base_ns,
                          struct bench_target t, const char *extra);
/* Number of targets missed so far (the exit status stays 0: benchmarks
 * print figures, they are not tests). */
extern int bench_missed, bench_met;

/* /proc readers */
long bench_rss_bytes(void);      /* VmRSS of this process */
int bench_threads(void);         /* Threads: of this process */
uint64_t bench_proc_cpu_ns(void); /* utime+stime of this process */
uint64_t bench_thread_cpu_ns(void); /* CLOCK_THREAD_CPUTIME_ID */
int bench_ncpu(void);

/* futex on a private or shared word */
int bench_futex_wait(atomic_uint *w, unsigned expected, int shared);
void bench_futex_wake(atomic_uint *w, int n, int shared);
/* Spin for at most spin_ns until *w != old (then return its value); then
 * wait on the futex.  spin_ns 0: pure futex.  The waiter count *nw lets the
 * waker skip the system call when nobody sleeps. */
unsigned bench_wait_change(atomic_uint *w, unsigned old, uint64_t spin_ns,
                           atomic_uint *nw, int shared);
/* Store v to *w and wake a sleeper if *nw says there is one. */
void bench_post(atomic_uint *w, unsigned v, atomic_uint *nw, int shared);
static inline void bench_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}
/* The spin budget the spin-then-futex baselines use: the same as evrt's
 * default (EVRT_SPIN_NS or 4000 ns), so both spin equally long. */
uint64_t bench_spin_budget_ns(void);

int bench_cmp_double(const void *a, const void *b);
double bench_median(double *v, int n); /* sorts v */

/* evrt side of the shapes that several scenarios share (opencl_pocl
 * compares them with PoCL).  ctx is ignored; each keeps its own objects. */
double evrt_case_record_idle(void *ctx, long iters);
double evrt_case_record_sync_idle(void *ctx, long iters);
double evrt_case_query_complete(void *ctx, long iters);
double evrt_case_event_create_destroy(void *ctx, long iters);
double evrt_case_pingpong(void *ctx, long iters); /* per round trip */
double evrt_case_hostfunc_one(void *ctx, long iters); /* per item */
double evrt_case_fanout(void *ctx, long iters); /* per fan-out/fan-in */
#define BENCH_FANOUT_STREAMS 1000

/* Scenario entry points (main.c dispatches by name). */
int scenario_record_idle(void);
int scenario_record_sync_idle(void);
int scenario_query_complete(void);
int scenario_query_pending(void);
int scenario_event_create_destroy(void);
int scenario_stream_create_destroy(void);
int scenario_sync_wake(void);
int scenario_pingpong_streams(void);
int scenario_hostfunc_throughput(void);
int scenario_fanout_fanin(void);
int scenario_streams_scale(void);
int scenario_opencl_pocl(void);
int scenario_ipc_pingpong(void);
int scenario_device_after(void);
int scenario_graph_replay(void);

/* Abort with a message when an evrt call fails: a benchmark that measured a
 * failing call would print a meaningless figure. */
#define BENCH_CHECK(call)                                                      \
  do {                                                                         \
    int bench_st_ = (int)(call);                                               \
    if (bench_st_ != 0)                                                        \
      bench_die(__FILE__, __LINE__, #call, bench_st_);                         \
  } while (0)
void bench_die(const char *file, int line, const char *call, int st)
    __attribute__((noreturn));

#endif
