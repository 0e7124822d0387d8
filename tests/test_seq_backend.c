/* The seq backend (EVRT_BACKEND=seq, src/seq/): all stream work on one
 * thread, the next stream drawn from EVRT_SEQ_SEED.  Each run is a child
 * process (the seed is read at init), so this process never initializes
 * evrt itself.  A run: four streams held behind one event (recorded on a
 * gate stream that waits for a value the host writes once everything is
 * enqueued), eight host functions each that log "stream, item, thread";
 * one of them enqueues a ninth host function on another stream. */
#include "test.h"

#include <pthread.h>

#define NS 4
#define PER 8
#define LOGMAX (NS * PER + 1)

static char order_log[2 * LOGMAX + 1];
static atomic_int nlog;
static uint64_t thread_of[LOGMAX];
static evrt_stream_t streams[NS];

struct tag {
  int s, k;
};
static struct tag tags[NS][PER];
static struct tag extra_tag = {3, 'x' - 'a'};

static void note(void *p) {
  const struct tag *t = p;
  int i = atomic_fetch_add(&nlog, 1);
  if (i >= LOGMAX)
    return;
  order_log[2 * i] = (char)('0' + t->s);
  order_log[2 * i + 1] = (char)('a' + t->k);
  thread_of[i] = evrt_thread_id();
}

/* Stream 0's fourth host function enqueues more work on stream 3. */
static void note_and_enqueue(void *p) {
  note(p);
  if (evrt_launch_host_func(streams[3], note, &extra_tag) != EVRT_SUCCESS)
    order_log[0] = '!';
}

/* The child's body: 0 = ran, with the log in order_log; else a code. */
static int run_schedule(void) {
  static uint64_t gate;
  evrt_stream_t g;
  evrt_event_t e;
  if (evrt_stream_create(&g, 0, 0, 0) || evrt_event_create(&e, 0))
    return 10;
  for (int i = 0; i < NS; i++)
    if (evrt_stream_create(&streams[i], 0, 0, 0))
      return 11;
  if (evrt_stream_wait_value64(g, &gate, 1, EVRT_VALUE_WAIT_GEQ) ||
      evrt_event_record(e, g))
    return 12;
  for (int i = 0; i < NS; i++) {
    if (evrt_stream_wait_event(streams[i], e))
      return 13;
    for (int k = 0; k < PER; k++) {
      tags[i][k] = (struct tag){i, k};
      evrt_host_fn fn = (i == 0 && k == 3) ? note_and_enqueue : note;
      if (evrt_launch_host_func(streams[i], fn, &tags[i][k]))
        return 14;
    }
  }
  /* Nothing has run yet: the gate holds every host function. */
  if (atomic_load(&nlog) != 0)
    return 15;
  if (evrt_value_write64(&gate, 1) || evrt_device_synchronize(0))
    return 16;
  if (atomic_load(&nlog) != LOGMAX || order_log[0] == '!')
    return 17;
  /* One thread ran every host function, and it is not this one. */
  for (int i = 0; i < LOGMAX; i++)
    if (thread_of[i] != thread_of[0] || thread_of[i] == evrt_thread_id())
      return 18;
  return 0;
}

/* Run the schedule in a child under EVRT_BACKEND=seq and `seed`; its log
 * in out (2 * LOGMAX chars).  False (with a message) if the child failed. */
static bool schedule(unsigned long long seed, char *out) {
  int fd[2];
  if (pipe(fd))
    return false;
  pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    char sd[32];
    snprintf(sd, sizeof sd, "%llu", seed);
    setenv("EVRT_BACKEND", "seq", 1);
    setenv("EVRT_SEQ_SEED", sd, 1);
    int rc = run_schedule();
    if (rc == 0 && write(fd[1], order_log, 2 * LOGMAX) != 2 * LOGMAX)
      rc = 19;
    if (rc)
      fprintf(stderr, "  seed %llu: child failed at step %d (%s)\n", seed, rc,
              evrt_last_error_message());
    _exit(rc);
  }
  close(fd[1]);
  size_t got = 0;
  while (pid > 0 && got < 2 * LOGMAX) {
    ssize_t r = read(fd[0], out + got, 2 * LOGMAX - got);
    if (r <= 0)
      break;
    got += (size_t)r;
  }
  close(fd[0]);
  int st = 0;
  if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
      WEXITSTATUS(st) != 0 || got != 2 * LOGMAX) {
    fprintf(stderr, "  seed %llu: child status %#x, %zu bytes\n", seed, st,
            got);
    return false;
  }
  out[2 * LOGMAX] = '\0';
  return true;
}

TEST(same_seed_same_cross_stream_order) {
  for (unsigned long long seed = 7; seed < 10; seed++) {
    char a[2 * LOGMAX + 1], b[2 * LOGMAX + 1];
    ASSERT(schedule(seed, a));
    ASSERT(schedule(seed, b));
    if (strcmp(a, b) != 0)
      FAIL_("seed %llu gave two orders:\n  %s\n  %s", seed, a, b);
  }
}

TEST(seeds_give_different_orders) {
  char seen[20][2 * LOGMAX + 1];
  int distinct = 0;
  for (int i = 0; i < 20; i++) {
    ASSERT(schedule(1000 + (unsigned long long)i, seen[i]));
    /* every stream's own items in stream order: a..h, and x after 0d */
    for (int s = 0; s < NS; s++) {
      char next = 'a';
      for (int j = 0; j < LOGMAX; j++)
        if (seen[i][2 * j] == '0' + s && seen[i][2 * j + 1] != 'x') {
          ASSERT_EQ(seen[i][2 * j + 1], next);
          next++;
        }
      ASSERT_EQ(next, 'a' + PER);
    }
    const char *x = strstr(seen[i], "3x"), *d = strstr(seen[i], "0d");
    ASSERT(x && d && (x - seen[i]) % 2 == 0 && x > d);
    bool dup = false;
    for (int j = 0; j < i; j++)
      dup = dup || strcmp(seen[i], seen[j]) == 0;
    distinct += !dup;
  }
  if (distinct < 2)
    FAIL_("20 seeds gave %d distinct order(s): %s", distinct, seen[0]);
  printf("  20 seeds: %d distinct cross-stream orders\n", distinct);
}

/* Rule 4 with one thread: a stream parked on a wait or a delay parks the
 * stream, never the thread; and a host function that waits for work not
 * yet done is refused (it would wait for ever: that work needs its
 * thread), while a wait for done work succeeds. */
static evrt_status_t hf_wait_other, hf_wait_done;
static evrt_stream_t other, done_s;
static void waits_in_host_fn(void *p) {
  (void)p;
  hf_wait_other = evrt_stream_synchronize(other);
  hf_wait_done = evrt_stream_synchronize(done_s);
}
static atomic_int flag;
static void set_flag(void *p) { atomic_store((atomic_int *)p, 1); }
static void check_flag(void *p) {
  if (atomic_load(&flag) != 1)
    *(int *)p = 1;
}

static int run_rules(void) {
  evrt_stream_t a, b, c;
  evrt_event_t e;
  int bad = 0;
  if (evrt_stream_create(&a, 0, 0, 0) || evrt_stream_create(&b, 0, 0, 0) ||
      evrt_stream_create(&c, 0, 0, 0) || evrt_stream_create(&other, 0, 0, 0) ||
      evrt_stream_create(&done_s, 0, 0, 0) || evrt_event_create(&e, 0))
    return 20;
  /* a waits for b's record: a's host function runs after b's. */
  if (evrt_launch_host_func(b, set_flag, &flag) || evrt_event_record(e, b) ||
      evrt_stream_wait_event(a, e) || evrt_launch_host_func(a, check_flag, &bad))
    return 22;
  /* c sleeps an hour: the one thread must not. */
  if (evrt_stream_delay(c, 3600ull * 1000000000ull))
    return 23;
  static atomic_int ran;
  if (evrt_launch_host_func(done_s, set_flag, &ran) ||
      evrt_stream_synchronize(done_s))
    return 24;
  if (evrt_stream_delay(other, 3600ull * 1000000000ull) ||
      evrt_launch_host_func(b, waits_in_host_fn, NULL))
    return 25;
  if (evrt_stream_synchronize(a) || evrt_stream_synchronize(b) || bad)
    return 26;
  if (hf_wait_other != EVRT_ERROR_WOULD_DEADLOCK || hf_wait_done != EVRT_SUCCESS)
    return 27;
  if (evrt_stream_query(c) != EVRT_NOT_READY)
    return 28;
  return 0;
}

TEST(parked_streams_never_block_the_thread) {
  pid_t pid = fork();
  if (pid == 0) {
    setenv("EVRT_BACKEND", "seq", 1);
    unsetenv("EVRT_SEQ_SEED"); /* drawn and printed */
    int rc = run_rules();
    if (rc)
      fprintf(stderr, "  child failed at step %d (%s)\n", rc,
              evrt_last_error_message());
    _exit(rc);
  }
  ASSERT(pid > 0);
  int st = 0;
  ASSERT_EQ(waitpid(pid, &st, 0), pid);
  ASSERT(WIFEXITED(st));
  ASSERT_EQ(WEXITSTATUS(st), 0);
}
