/*
 * bench.c - timing, statistics, output and OS primitives shared by every
 * scenario (see bench.h for the method).
 */
#include "bench.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

bool bench_json;
int bench_reps = 7;
double bench_sample_ms = 20.0;
int bench_missed, bench_met;

uint64_t bench_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void bench_spin_ns(uint64_t ns) {
  uint64_t t0 = bench_now_ns();
  while (bench_now_ns() - t0 < ns)
    bench_relax();
}

int bench_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

double bench_median(double *v, int n) {
  if (n <= 0)
    return 0;
  qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void bench_title(const char *scenario, const char *what) {
  if (bench_json)
    return;
  printf("\n== %s: %s\n", scenario, what);
  printf("   %-40s %12s %12s %12s %10s\n", "case", "median", "min", "max",
         "iters");
  fflush(stdout);
}

void bench_note(const char *fmt, ...) {
  if (bench_json)
    return;
  va_list ap;
  va_start(ap, fmt);
  printf("   ");
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
  fflush(stdout);
}

void bench_skip(const char *scenario, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  FILE *f = bench_json ? stderr : stdout;
  fprintf(f, "   %s: skipped: ", scenario);
  vfprintf(f, fmt, ap);
  fprintf(f, "\n");
  va_end(ap);
  fflush(f);
}

void bench_stats(struct bench_case *c) {
  double v[BENCH_MAX_REPS];
  memcpy(v, c->s, sizeof(double) * (size_t)c->nsamples);
  c->median = bench_median(v, c->nsamples);
  c->min = v[0];
  c->max = v[c->nsamples - 1];
}

static void fmt_ns(char *buf, size_t n, double x, const char *unit) {
  if (strcmp(unit, "ns") != 0) {
    snprintf(buf, n, "%.4g %s", x, unit);
  } else if (x >= 1e6) {
    snprintf(buf, n, "%.3f ms", x / 1e6);
  } else if (x >= 1e4) {
    snprintf(buf, n, "%.2f us", x / 1e3);
  } else if (x >= 100) {
    snprintf(buf, n, "%.0f ns", x);
  } else {
    snprintf(buf, n, "%.2f ns", x);
  }
}

void bench_print_case(const struct bench_case *c, const char *unit) {
  if (bench_json)
    return;
  char a[32], b[32], d[32];
  fmt_ns(a, sizeof a, c->median, unit);
  fmt_ns(b, sizeof b, c->min, unit);
  fmt_ns(d, sizeof d, c->max, unit);
  printf("   %-40s %12s %12s %12s %10ld\n", c->name, a, b, d, c->iters);
  fflush(stdout);
}

/* Grow iters until one sample takes the sample duration.  The first runs
 * double as the warm-up (page faults, lazy initialization, thread starts). */
static void calibrate(struct bench_case *c) {
  if (c->iters > 0)
    return;
  double target = bench_sample_ms * 1e6;
  long it = 1;
  for (;;) {
    double per = c->fn(c->ctx, it);
    double total = per * (double)it;
    if (c->max_iters && it >= c->max_iters) {
      c->iters = c->max_iters;
      return;
    }
    if (total >= target / 4 || it >= (1L << 30)) {
      double want = per > 0 ? target / per : (double)it;
      long n = (long)want;
      if (n < 1)
        n = 1;
      if (c->max_iters && n > c->max_iters)
        n = c->max_iters;
      c->iters = n;
      return;
    }
    long grow = total > 0 ? (long)(target / 4 / total * 1.5) : 16;
    if (grow < 2)
      grow = 2;
    if (grow > 64)
      grow = 64;
    it *= grow;
    if (c->max_iters && it > c->max_iters)
      it = c->max_iters;
  }
}

void bench_run(struct bench_case *cases, int ncases, const char *unit) {
  for (int i = 0; i < ncases; i++) {
    calibrate(&cases[i]);
    cases[i].nsamples = 0;
  }
  int reps = bench_reps < BENCH_MAX_REPS ? bench_reps : BENCH_MAX_REPS;
  for (int r = 0; r < reps; r++) {
    /* Rotate the order so no case always runs right after the same one
     * (a case that leaves a worker spinning would otherwise always help or
     * hurt the same neighbour). */
    for (int k = 0; k < ncases; k++) {
      struct bench_case *c = &cases[(k + r) % ncases];
      c->s[c->nsamples++] = c->fn(c->ctx, c->iters);
    }
  }
  for (int i = 0; i < ncases; i++) {
    bench_stats(&cases[i]);
    bench_print_case(&cases[i], unit);
  }
}

static bool judge(struct bench_target t, double evrt, double ratio) {
  switch (t.kind) {
  case BT_NONE:
    return true;
  case BT_RATIO_LE:
    return ratio <= t.value;
  case BT_RATIO_GE:
    return ratio >= t.value;
  case BT_ABS_LE:
    return evrt <= t.value;
  case BT_ABS_LT:
    return evrt < t.value;
  }
  return false;
}

static void json_str(const char *s) {
  putchar('"');
  for (; *s; s++) {
    if (*s == '"' || *s == '\\')
      putchar('\\');
    putchar(*s);
  }
  putchar('"');
}

bool bench_compare_values(const char *scenario, const char *variant,
                          const char *evrt_name, double evrt_ns,
                          const char *base_name, double base_ns,
                          struct bench_target t, const char *extra) {
  double ratio = base_ns > 0 ? evrt_ns / base_ns : 0;
  bool met = judge(t, evrt_ns, ratio);
  if (t.kind != BT_NONE) {
    if (met)
      bench_met++;
    else
      bench_missed++;
  }
  if (bench_json) {
    printf("{\"scenario\": ");
    json_str(scenario);
    printf(", \"median_ns\": %.3f, \"baseline\": ", evrt_ns);
    json_str(base_name);
    printf(", \"baseline_median_ns\": %.3f, \"ratio\": %.4f", base_ns, ratio);
    if (variant) {
      printf(", \"variant\": ");
      json_str(variant);
    }
    if (t.kind != BT_NONE) {
      printf(", \"target\": ");
      json_str(t.text);
      printf(", \"met\": %s", met ? "true" : "false");
    }
    if (extra)
      fputs(extra, stdout);
    printf("}\n");
  } else {
    printf("   -> %s / %s = %.3gx", evrt_name, base_name, ratio);
    if (t.kind != BT_NONE)
      printf("   target %s: %s", t.text, met ? "met" : "MISSED");
    printf("\n");
  }
  fflush(stdout);
  return met;
}

bool bench_compare(const char *scenario, const char *variant,
                   const struct bench_case *evrt, const struct bench_case *base,
                   struct bench_target t, const char *extra) {
  return bench_compare_values(scenario, variant, evrt->name, evrt->median,
                              base->name, base->median, t, extra);
}

/* ------------------------------------------------------------ /proc */

static long status_field(const char *key) {
  FILE *f = fopen("/proc/self/status", "r");
  if (!f)
    return -1;
  char line[256];
  size_t kl = strlen(key);
  long v = -1;
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, key, kl) == 0 && line[kl] == ':') {
      v = strtol(line + kl + 1, NULL, 10);
      break;
    }
  }
  fclose(f);
  return v;
}

long bench_rss_bytes(void) {
  long kb = status_field("VmRSS");
  return kb < 0 ? -1 : kb * 1024;
}

int bench_threads(void) { return (int)status_field("Threads"); }

uint64_t bench_proc_cpu_ns(void) {
  /* Fields 14 and 15 of /proc/self/stat (utime, stime) in clock ticks.  The
   * command name (field 2) may hold spaces: parse after its closing ')'. */
  FILE *f = fopen("/proc/self/stat", "r");
  if (!f)
    return 0;
  char buf[1024];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  char *p = strrchr(buf, ')');
  if (!p)
    return 0;
  p += 2; /* field 3 */
  unsigned long long ut = 0, st = 0;
  for (int field = 3; field <= 15 && *p; field++) {
    char *end;
    unsigned long long v = strtoull(p, &end, 10);
    if (field == 14)
      ut = v;
    if (field == 15)
      st = v;
    p = end;
    while (*p == ' ')
      p++;
    if (field > 3 && end == p)
      break;
  }
  long hz = sysconf(_SC_CLK_TCK);
  if (hz <= 0)
    hz = 100;
  return (ut + st) * (1000000000ull / (unsigned long long)hz);
}

uint64_t bench_thread_cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int bench_ncpu(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}

/* ------------------------------------------------------------ futex */

int bench_futex_wait(atomic_uint *w, unsigned expected, int shared) {
  long r = syscall(SYS_futex, (unsigned *)w,
                   shared ? FUTEX_WAIT : FUTEX_WAIT_PRIVATE, expected, NULL,
                   NULL, 0);
  return r == 0 ? 0 : errno;
}

void bench_futex_wake(atomic_uint *w, int n, int shared) {
  syscall(SYS_futex, (unsigned *)w, shared ? FUTEX_WAKE : FUTEX_WAKE_PRIVATE,
          n, NULL, NULL, 0);
}

unsigned bench_wait_change(atomic_uint *w, unsigned old, uint64_t spin_ns,
                           atomic_uint *nw, int shared) {
  unsigned v;
  if (spin_ns) {
    uint64_t t0 = bench_now_ns();
    for (unsigned i = 1;; i++) {
      /* acquire: what the poster wrote before its store is visible */
      v = atomic_load_explicit(w, memory_order_acquire);
      if (v != old)
        return v;
      bench_relax();
      if ((i & 15) == 0 && bench_now_ns() - t0 > spin_ns)
        break;
    }
  }
  /* seq_cst pair with bench_post: either the poster sees nw != 0 and wakes,
   * or we see the new value before sleeping. */
  atomic_fetch_add_explicit(nw, 1, memory_order_seq_cst);
  while ((v = atomic_load_explicit(w, memory_order_seq_cst)) == old)
    bench_futex_wait(w, old, shared);
  atomic_fetch_sub_explicit(nw, 1, memory_order_relaxed);
  return v;
}

void bench_post(atomic_uint *w, unsigned v, atomic_uint *nw, int shared) {
  atomic_store_explicit(w, v, memory_order_seq_cst);
  if (atomic_load_explicit(nw, memory_order_seq_cst))
    bench_futex_wake(w, INT_MAX, shared);
}

uint64_t bench_spin_budget_ns(void) {
  const char *v = getenv("EVRT_SPIN_NS");
  long x = v ? strtol(v, NULL, 10) : 4000;
  if (x < 0 || x > 20000)
    x = 4000;
  return (uint64_t)x;
}
