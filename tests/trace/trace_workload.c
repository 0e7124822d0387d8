/*
 * trace_workload.c - traced workloads for check_trace.py.  Each mode runs
 * known work with tracing on and writes, next to the trace, what it
 * submitted: the number of work items of each kind per stream name, so the
 * checker can compare them with the slices in the file.
 *
 *   trace_workload pipeline TRACE.json EXPECT.json
 *       three streams, producer -> transformer -> consumer, double-buffered
 *       by events, plus a named stream that runs nothing
 *   trace_workload threads TRACE.json EXPECT.json
 *       8 host threads at once, each driving its own two streams
 *   trace_workload exit TRACE.json EXPECT.json
 *       tracing from EVRT_TRACE, never stopped: written at exit
 *   trace_workload graph TRACE.json EXPECT.json
 *       a captured graph (fork, join, external record) launched three times
 *
 * Exit 0 on success, 1 (with a message) if any call failed.
 */
#define _GNU_SOURCE
#include <evrt.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(call)                                                            \
  do {                                                                         \
    evrt_status_t st_ = (call);                                                \
    if (st_ != EVRT_SUCCESS) {                                                 \
      fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", __FILE__, __LINE__,      \
              #call, evrt_err_name(st_), evrt_last_error_message());           \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

enum { K_HOST, K_MEMCPY, K_MEMSET, K_DELAY, K_RECORD, K_WAIT, K_RESET,
       K_GRAPH, NK };
static const char *const kind_names[NK] = {"host_func", "memcpy", "memset",
                                           "delay",     "record", "wait",
                                           "reset",     "graph"};

/* What was submitted to one stream. */
struct tally {
  char name[32];
  long n[NK];
};

#define MAX_TALLIES 64
static struct tally tallies[MAX_TALLIES];
static atomic_int ntallies;

static struct tally *tally_of(const char *name) {
  int i = atomic_fetch_add(&ntallies, 1);
  if (i >= MAX_TALLIES) {
    fprintf(stderr, "too many streams\n");
    exit(1);
  }
  snprintf(tallies[i].name, sizeof tallies[i].name, "%s", name);
  return &tallies[i];
}

static struct tally *named_stream(evrt_stream_t *s, const char *name) {
  CHECK(evrt_stream_create(s, 0, 0, 0));
  CHECK(evrt_stream_set_name(*s, name));
  return tally_of(name);
}

static void write_expect(const char *path) {
  FILE *f = fopen(path, "w");
  if (!f) {
    perror(path);
    exit(1);
  }
  fputs("{\"streams\":{", f);
  for (int i = 0; i < atomic_load(&ntallies); i++) {
    fprintf(f, "%s\n\"%s\":{", i ? "," : "", tallies[i].name);
    for (int k = 0; k < NK; k++)
      fprintf(f, "%s\"%s\":%ld", k ? "," : "", kind_names[k], tallies[i].n[k]);
    fputs("}", f);
  }
  fputs("}}\n", f);
  if (fclose(f) != 0) {
    perror(path);
    exit(1);
  }
}

static void touch(void *p) { atomic_fetch_add((atomic_long *)p, 1); }

/* A gate holds a stream busy while the host submits, so every wait becomes
 * a work item: a wait on a complete generation made while its stream is
 * idle is passed at once, with no item (the core's fast path), and the
 * number of wait slices would depend on timing. */
struct gate {
  atomic_int open;
};
static void gate_fn(void *p) {
  struct gate *g = p;
  while (!atomic_load(&g->open)) {
    struct timespec ts = {0, 50000};
    nanosleep(&ts, NULL);
  }
}
static void gate(evrt_stream_t s, struct tally *t, struct gate *g) {
  CHECK(evrt_launch_host_func_labeled(s, gate_fn, g, "gate"));
  t->n[K_HOST]++;
}

/* --------------------------------------------------------------- pipeline */

#define BATCHES 12
#define SLOTS 2
#define N 512

static char raw[SLOTS][N], out[SLOTS][N];
static atomic_long ran;

static void pipeline(const char *trace, int from_env) {
  if (!from_env)
    CHECK(evrt_trace_start(trace));
  evrt_stream_t a, b, c, idle;
  struct tally *ta = named_stream(&a, "producer");
  struct tally *tb = named_stream(&b, "transformer");
  struct tally *tc = named_stream(&c, "consumer");
  named_stream(&idle, "idle"); /* runs nothing: still gets its track */
  evrt_event_t filled[SLOTS], ready[SLOTS], freed[SLOTS];
  for (int k = 0; k < SLOTS; k++) {
    CHECK(evrt_event_create(&filled[k], EVRT_EVENT_DEFAULT));
    CHECK(evrt_event_create(&ready[k], EVRT_EVENT_DEFAULT));
    CHECK(evrt_event_create(&freed[k], EVRT_EVENT_DEFAULT));
  }
  struct gate g = {0};
  gate(a, ta, &g);
  gate(b, tb, &g);
  gate(c, tc, &g);
  for (int i = 0; i < BATCHES; i++) {
    int k = i % SLOTS;
    if (i >= SLOTS) { /* freed[k] was recorded: a real dependency */
      CHECK(evrt_stream_wait_event(a, freed[k]));
      ta->n[K_WAIT]++;
    }
    CHECK(evrt_launch_host_func_labeled(a, touch, &ran, "fill"));
    ta->n[K_HOST]++;
    CHECK(evrt_memset_async(a, raw[k], i, N));
    ta->n[K_MEMSET]++;
    CHECK(evrt_event_record(filled[k], a));
    ta->n[K_RECORD]++;

    CHECK(evrt_stream_wait_event(b, filled[k]));
    tb->n[K_WAIT]++;
    CHECK(evrt_memcpy_async(b, out[k], raw[k], N));
    tb->n[K_MEMCPY]++;
    if (i % 3 == 0) {
      CHECK(evrt_stream_delay(b, 300000));
      tb->n[K_DELAY]++;
    }
    CHECK(evrt_launch_host_func(b, touch, &ran)); /* unlabeled */
    tb->n[K_HOST]++;
    CHECK(evrt_event_record(ready[k], b));
    tb->n[K_RECORD]++;

    CHECK(evrt_stream_wait_event(c, ready[k]));
    tc->n[K_WAIT]++;
    CHECK(evrt_launch_host_func_labeled(c, touch, &ran, "sum"));
    tc->n[K_HOST]++;
    CHECK(evrt_event_record(freed[k], c));
    tc->n[K_RECORD]++;
  }
  CHECK(evrt_event_reset(freed[0], c));
  tc->n[K_RESET]++;
  atomic_store(&g.open, 1);
  CHECK(evrt_stream_synchronize(c));
  CHECK(evrt_stream_synchronize(a));
  CHECK(evrt_stream_synchronize(b));
  if (!from_env) {
    CHECK(evrt_trace_stop());
    if (evrt_trace_dropped() != 0) {
      fprintf(stderr, "dropped %llu entries\n",
              (unsigned long long)evrt_trace_dropped());
      exit(1);
    }
  }
  for (int k = 0; k < SLOTS; k++) {
    CHECK(evrt_event_destroy(filled[k]));
    CHECK(evrt_event_destroy(ready[k]));
    CHECK(evrt_event_destroy(freed[k]));
  }
  CHECK(evrt_stream_destroy(a));
  CHECK(evrt_stream_destroy(b));
  CHECK(evrt_stream_destroy(c));
  CHECK(evrt_stream_destroy(idle));
  if (atomic_load(&ran) != 3 * BATCHES) {
    fprintf(stderr, "ran %ld host functions, want %d\n", atomic_load(&ran),
            3 * BATCHES);
    exit(1);
  }
}

/* ---------------------------------------------------------------- threads */

#define THREADS 8
#define ROUNDS 40

static pthread_barrier_t barrier;

static void *thread_main(void *arg) {
  int t = (int)(intptr_t)arg;
  char name[32];
  evrt_stream_t a, b;
  snprintf(name, sizeof name, "t%d.a", t);
  struct tally *ta = named_stream(&a, name);
  snprintf(name, sizeof name, "t%d.b", t);
  struct tally *tb = named_stream(&b, name);
  evrt_event_t go[2], back[2];
  for (int k = 0; k < 2; k++) {
    CHECK(evrt_event_create(&go[k], EVRT_EVENT_DEFAULT));
    CHECK(evrt_event_create(&back[k], EVRT_EVENT_DEFAULT));
  }
  static char buf[THREADS][2][64], dst[THREADS][2][64];
  atomic_long mine = 0;
  struct gate g[ROUNDS / 10 + 1];
  memset(g, 0, sizeof g);
  pthread_barrier_wait(&barrier);
  for (int i = 0; i < ROUNDS; i++) {
    int k = i % 2;
    if (i % 10 == 0) {
      gate(a, ta, &g[i / 10]);
      gate(b, tb, &g[i / 10]);
    }
    if (i >= 2) {
      CHECK(evrt_stream_wait_event(a, back[k]));
      ta->n[K_WAIT]++;
    }
    CHECK(evrt_memset_async(a, buf[t][k], i, sizeof buf[t][k]));
    ta->n[K_MEMSET]++;
    CHECK(evrt_launch_host_func_labeled(a, touch, &mine, "make"));
    ta->n[K_HOST]++;
    CHECK(evrt_event_record(go[k], a));
    ta->n[K_RECORD]++;
    CHECK(evrt_stream_wait_event(b, go[k]));
    tb->n[K_WAIT]++;
    CHECK(evrt_memcpy_async(b, dst[t][k], buf[t][k], sizeof buf[t][k]));
    tb->n[K_MEMCPY]++;
    CHECK(evrt_launch_host_func_labeled(b, touch, &mine, "take"));
    tb->n[K_HOST]++;
    CHECK(evrt_event_record(back[k], b));
    tb->n[K_RECORD]++;
    if (i % 10 == 9) { /* host waits interleaved with the work */
      atomic_store(&g[i / 10].open, 1);
      CHECK(evrt_stream_synchronize(b));
    }
  }
  CHECK(evrt_stream_synchronize(a));
  CHECK(evrt_stream_synchronize(b));
  if (atomic_load(&mine) != 2 * ROUNDS) {
    fprintf(stderr, "thread %d ran %ld host functions\n", t,
            atomic_load(&mine));
    exit(1);
  }
  for (int k = 0; k < 2; k++) {
    CHECK(evrt_event_destroy(go[k]));
    CHECK(evrt_event_destroy(back[k]));
  }
  CHECK(evrt_stream_destroy(a));
  CHECK(evrt_stream_destroy(b));
  return NULL;
}

static void threads(const char *trace) {
  pthread_t th[THREADS];
  CHECK(evrt_trace_start(trace));
  pthread_barrier_init(&barrier, NULL, THREADS);
  for (int t = 0; t < THREADS; t++)
    if (pthread_create(&th[t], NULL, thread_main, (void *)(intptr_t)t) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      exit(1);
    }
  for (int t = 0; t < THREADS; t++)
    pthread_join(th[t], NULL);
  pthread_barrier_destroy(&barrier);
  CHECK(evrt_trace_stop());
  if (evrt_trace_dropped() != 0) {
    fprintf(stderr, "dropped %llu entries\n",
            (unsigned long long)evrt_trace_dropped());
    exit(1);
  }
}

/* ------------------------------------------------------------------ graph */

/* A graph captured on two streams (fork and join through events, an
 * external record), launched three times on a third stream; an observer
 * waits on each launch's record.  The captured streams run nothing; the
 * nodes show on the lanes' tracks, "graph 1 lane 0" (the origin's) and
 * "graph 1 lane 1" (the fork's): this process's first executable graph. */
static void graph(const char *trace) {
  CHECK(evrt_trace_start(trace));
  evrt_stream_t origin, side, runner, obs;
  named_stream(&origin, "origin");
  named_stream(&side, "side");
  struct tally *tr = named_stream(&runner, "runner");
  struct tally *to = named_stream(&obs, "observer");
  struct tally *l0 = tally_of("graph 1 lane 0");
  struct tally *l1 = tally_of("graph 1 lane 1");
  evrt_event_t fork, join, done;
  CHECK(evrt_event_create(&fork, EVRT_EVENT_DEFAULT));
  CHECK(evrt_event_create(&join, EVRT_EVENT_DEFAULT));
  CHECK(evrt_event_create(&done, EVRT_EVENT_DEFAULT));
  static char src[64], dst[64];
  CHECK(evrt_stream_begin_capture(origin, EVRT_CAPTURE_MODE_GLOBAL));
  CHECK(evrt_launch_host_func_labeled(origin, touch, &ran, "a"));
  CHECK(evrt_event_record(fork, origin));
  CHECK(evrt_stream_wait_event(side, fork));
  CHECK(evrt_launch_host_func_labeled(side, touch, &ran, "b1"));
  CHECK(evrt_launch_host_func_labeled(side, touch, &ran, "b2"));
  CHECK(evrt_memcpy_async(side, dst, src, sizeof dst));
  CHECK(evrt_event_record(join, side));
  CHECK(evrt_stream_wait_event(origin, join));
  CHECK(evrt_launch_host_func_labeled(origin, touch, &ran, "c"));
  CHECK(evrt_event_record_with_flags(done, origin,
                                     EVRT_EVENT_RECORD_EXTERNAL));
  evrt_graph_t g;
  CHECK(evrt_stream_end_capture(origin, &g));
  evrt_graph_exec_t x;
  CHECK(evrt_graph_instantiate(&x, g));
  struct gate gt = {0};
  gate(obs, to, &gt);
  for (int i = 0; i < 3; i++) {
    CHECK(evrt_graph_launch(x, runner));
    /* the launch's record binds the observer's wait */
    CHECK(evrt_stream_wait_event(obs, done));
    CHECK(evrt_launch_host_func_labeled(obs, touch, &ran, "after"));
    to->n[K_WAIT]++;
    to->n[K_HOST]++;
    /* done before the next launch: no wait for the previous launch */
    CHECK(evrt_stream_synchronize(runner));
    tr->n[K_GRAPH]++;
    tr->n[K_WAIT]++; /* the wait for the graph's end */
    l0->n[K_HOST] += 2; /* a, c */
    l0->n[K_RECORD]++;  /* done */
    l0->n[K_WAIT]++;    /* the join: lane 1's last run */
    l1->n[K_WAIT]++;    /* the fork: lane 0's first run */
    l1->n[K_HOST] += 2; /* b1, b2 */
    l1->n[K_MEMCPY]++;
  }
  atomic_store(&gt.open, 1);
  CHECK(evrt_stream_synchronize(obs));
  CHECK(evrt_trace_stop());
  if (atomic_load(&ran) != 3 * 5) { /* a, b1, b2, c, after */
    fprintf(stderr, "ran %ld host functions, want 15\n", atomic_load(&ran));
    exit(1);
  }
  CHECK(evrt_graph_exec_destroy(x));
  CHECK(evrt_graph_destroy(g));
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s pipeline|threads|exit|graph TRACE.json EXPECT.json\n",
            argv[0]);
    return 2;
  }
  if (!strcmp(argv[1], "pipeline")) {
    pipeline(argv[2], 0);
    CHECK(evrt_shutdown());
  } else if (!strcmp(argv[1], "graph")) {
    graph(argv[2]);
    CHECK(evrt_shutdown());
  } else if (!strcmp(argv[1], "threads")) {
    threads(argv[2]);
    CHECK(evrt_shutdown());
  } else if (!strcmp(argv[1], "exit")) {
    const char *env = getenv("EVRT_TRACE");
    if (!env || strcmp(env, argv[2]) != 0) {
      fprintf(stderr, "exit mode wants EVRT_TRACE=%s\n", argv[2]);
      return 2;
    }
    pipeline(argv[2], 1); /* no stop, no shutdown: the exit handler writes */
  } else {
    fprintf(stderr, "unknown mode %s\n", argv[1]);
    return 2;
  }
  write_expect(argv[3]);
  return 0;
}
