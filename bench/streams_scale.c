/*
 * streams_scale.c - 1k, 10k and 100k streams: creation time, RSS per
 * stream, thread count, one work item on each, idle CPU, destruction.
 *
 * Each size runs in a child process forked before this process touches evrt
 * (a child of an initialized process gets EVRT_ERROR_FORKED by design), so
 * that RSS and thread counts start from a fresh library every time.
 *
 * Per repetition: create n streams (timed), launch one empty host function
 * on each and synchronize them all (timed, per item), destroy them all
 * (timed); the baseline, interleaved, creates and joins 200 threads (what a
 * thread-per-stream design pays per stream).  The first repetition is cold
 * (fresh table chunks, page faults): its creation time is the one judged,
 * and RSS per stream, thread counts and idle CPU are taken in it:
 *   RSS per stream  = (VmRSS after creating n) - (VmRSS before), / n
 *   threads         = Threads: of /proc/self/status with n idle streams,
 *                     and after the burst of n items
 *   idle CPU        = utime+stime of /proc/self/stat over 1 s of sleep with
 *                     n idle streams, after the burst.
 */
#include "bench.h"

#include "evrt.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BASE_THREADS 200
#define SLACK_THREADS 4 /* threads allowed beyond the cores when idle */

static void empty_fn(void *arg) { (void)arg; }
static void *nothing(void *arg) { return arg; }

static double thread_per_stream(void) {
  uint64_t t0 = bench_now_ns();
  for (int i = 0; i < BASE_THREADS; i++) {
    pthread_t th;
    pthread_create(&th, NULL, nothing, NULL);
    pthread_join(th, NULL);
  }
  return (double)(bench_now_ns() - t0) / BASE_THREADS;
}

static void sleep_1s(void) {
  struct timespec ts = {1, 0};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

static void run_size(long n, const char *label) {
  BENCH_CHECK(evrt_init());
  evrt_stream_t *s = malloc(sizeof *s * (size_t)n);
  for (long i = 0; i < n; i++)
    s[i] = NULL; /* touch the array now: its pages are not the streams' */
  int reps = bench_reps < BENCH_MAX_REPS ? bench_reps : BENCH_MAX_REPS;
  struct bench_case create = {.name = "evrt stream create", .iters = n};
  struct bench_case item = {.name = "evrt one host func per stream",
                            .iters = n};
  struct bench_case destroy = {.name = "evrt stream destroy", .iters = n};
  struct bench_case base = {.name = "thread_create_join",
                            .iters = BASE_THREADS};
  double rss_per = 0, cold_create = 0, idle_cpu = 0;
  int thr_idle = 0, thr_burst = 0, thr_after = 0;
  for (int r = 0; r < reps; r++) {
    long rss0 = bench_rss_bytes();
    uint64_t t0 = bench_now_ns();
    for (long i = 0; i < n; i++)
      BENCH_CHECK(evrt_stream_create(&s[i], 0, 0, 0));
    create.s[r] = (double)(bench_now_ns() - t0) / (double)n;
    if (r == 0) {
      cold_create = create.s[0];
      rss_per = (double)(bench_rss_bytes() - rss0) / (double)n;
      thr_idle = bench_threads();
    }
    t0 = bench_now_ns();
    for (long i = 0; i < n; i++)
      BENCH_CHECK(evrt_launch_host_func(s[i], empty_fn, NULL));
    for (long i = 0; i < n; i++)
      BENCH_CHECK(evrt_stream_synchronize(s[i]));
    item.s[r] = (double)(bench_now_ns() - t0) / (double)n;
    if (r == 0) {
      thr_burst = bench_threads();
      uint64_t c0 = bench_proc_cpu_ns();
      sleep_1s();
      idle_cpu = (double)(bench_proc_cpu_ns() - c0);
      thr_after = bench_threads();
    }
    t0 = bench_now_ns();
    for (long i = 0; i < n; i++)
      BENCH_CHECK(evrt_stream_destroy(s[i]));
    destroy.s[r] = (double)(bench_now_ns() - t0) / (double)n;
    base.s[r] = thread_per_stream();
  }
  create.nsamples = item.nsamples = destroy.nsamples = base.nsamples = reps;
  bench_stats(&create);
  bench_stats(&item);
  bench_stats(&destroy);
  bench_stats(&base);
  char title[64];
  snprintf(title, sizeof title, "%s streams (n = %ld)", label, n);
  bench_title("streams_scale", title);
  bench_print_case(&create, "ns");
  bench_print_case(&item, "ns");
  bench_print_case(&destroy, "ns");
  bench_print_case(&base, "ns");
  int ncpu = bench_ncpu();
  bench_note("cold creation %.0f ns/stream; RSS %.0f bytes/stream; threads: "
             "%d with %ld idle streams, %d after the burst, %d after 1 s "
             "idle (%d cpus); idle CPU %.2f%% over 1 s",
             cold_create, rss_per, thr_idle, n, thr_burst, thr_after, ncpu,
             idle_cpu / 1e7);
  char extra[256];
  snprintf(extra, sizeof extra,
           ", \"n\": %ld, \"cold_create_ns\": %.1f, "
           "\"rss_bytes_per_stream\": %.1f, \"threads_idle\": %d, "
           "\"threads_after_burst\": %d, \"threads_after_idle\": %d, "
           "\"idle_cpu_pct\": %.3f",
           n, cold_create, rss_per, thr_idle, thr_burst, thr_after,
           idle_cpu / 1e7);
  char v[64];
  snprintf(v, sizeof v, "%s create", label);
  bench_compare_values("streams_scale", v, "evrt stream create (cold)",
                       cold_create, base.name, base.median,
                       (struct bench_target){BT_ABS_LT, 2000,
                                             "creation < 2 us each"},
                       extra);
  snprintf(v, sizeof v, "%s create (recycled)", label);
  bench_compare("streams_scale", v, &create, &base,
                (struct bench_target){BT_NONE, 0, NULL}, NULL);
  snprintf(v, sizeof v, "%s one item each", label);
  bench_compare("streams_scale", v, &item, &base,
                (struct bench_target){BT_NONE, 0, NULL}, NULL);
  snprintf(v, sizeof v, "%s destroy", label);
  bench_compare("streams_scale", v, &destroy, &base,
                (struct bench_target){BT_NONE, 0, NULL}, NULL);
  /* RSS and threads are not times: judged here and carried as extra keys
   * of the creation row in JSON; the rows below count them. */
  snprintf(v, sizeof v, "%s rss_per_stream", label);
  bench_compare_values("streams_scale", v, "RSS bytes per stream", rss_per,
                       "2 KiB", 2048.0,
                       (struct bench_target){BT_ABS_LT, 2048,
                                             "< 2 KiB RSS per stream"},
                       ", \"unit\": \"bytes\"");
  snprintf(v, sizeof v, "%s threads_idle", label);
  char tt[64];
  snprintf(tt, sizeof tt, "threads <= cores + %d when idle", SLACK_THREADS);
  bench_compare_values("streams_scale", v, "threads with idle streams",
                       thr_idle, "cores", (double)ncpu,
                       (struct bench_target){BT_ABS_LE,
                                             (double)(ncpu + SLACK_THREADS),
                                             tt},
                       ", \"unit\": \"threads\"");
  snprintf(v, sizeof v, "%s idle_cpu", label);
  bench_compare_values("streams_scale", v, "CPU ns over 1 s idle", idle_cpu,
                       "wall_time", 1e9,
                       (struct bench_target){BT_RATIO_LE, 0.01,
                                             "idle process burns 0% CPU "
                                             "(< 1 tick of 1 s)"},
                       NULL);
  free(s);
}

int scenario_streams_scale(void) {
  static const long sizes[] = {1000, 10000, 100000};
  static const char *labels[] = {"1k", "10k", "100k"};
  for (int k = 0; k < 3; k++) {
    fflush(stdout);
    fflush(stderr);
    pid_t p = fork();
    if (p < 0) {
      bench_skip("streams_scale", "fork failed");
      return 1;
    }
    if (p == 0) {
      run_size(sizes[k], labels[k]);
      fflush(stdout);
      /* the child's met/missed counts come back in its exit status */
      _exit(bench_missed > 0 ? 3 : 0);
    }
    int st = 0;
    waitpid(p, &st, 0);
    if (!WIFEXITED(st) || (WEXITSTATUS(st) != 0 && WEXITSTATUS(st) != 3)) {
      bench_skip("streams_scale", "child for %s streams failed (status %d)",
                 labels[k], st);
      return 1;
    }
  }
  return 0;
}
