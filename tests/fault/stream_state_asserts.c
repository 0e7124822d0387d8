/*
 * stream_state_asserts.c - the stream state machine asserts its
 * transitions (src/cpu/cpu.h; white-box: links evrt_static, where
 * EVRT__ASSERTS is on).  A transition applied to a state it does not start
 * from aborts with a message naming the transition and the state found,
 * instead of corrupting the scheduler silently.  Each case runs in a child
 * (this process never initializes evrt, so the child may).
 */
#include "test.h"

#include "cpu/cpu.h"

/* Run fn on a fresh idle stream in a child; returns its wait status (-1:
 * it hung) and its stderr in buf. */
static int run_child(void (*fn)(struct evrt__stream *), char *buf,
                     size_t cap) {
  int p[2];
  if (pipe(p) != 0)
    return -1;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(p[1], 2);
    close(p[0]);
    evrt_stream_t h;
    if (evrt_stream_create(&h, 0, 0, 0) != EVRT_SUCCESS)
      _exit(3);
    fn(evrt__stream_get(h));
    _exit(0); /* not reached when the transition asserts */
  }
  close(p[1]);
  size_t n = 0;
  ssize_t r;
  while (n + 1 < cap && (r = read(p[0], buf + n, cap - 1 - n)) > 0)
    n += (size_t)r;
  buf[n] = 0;
  close(p[0]);
  return harness_wait_child(pid, 60000);
}

static void run_idle(struct evrt__stream *s) { evrt__st_run(s); }
static void idle_idle(struct evrt__stream *s) {
  (void)evrt__st_idle(s, memory_order_seq_cst);
}
static void park_idle(struct evrt__stream *s) { (void)evrt__st_try_park(s); }
static void requeue_idle(struct evrt__stream *s) {
  evrt__st_requeue(s, memory_order_relaxed);
}
static void take_unparked(struct evrt__stream *s) {
  (void)evrt__st_try_take_parked(s, evrt__st_load(s));
}

TEST(wrong_source_states_abort_with_the_transition_named) {
  static const struct {
    void (*fn)(struct evrt__stream *);
    const char *name;
  } cases[] = {{run_idle, "'run'"},
               {idle_idle, "'idle'"},
               {park_idle, "'park'"},
               {requeue_idle, "'requeue'"},
               {take_unparked, "'take parked'"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char err[512];
    int st = run_child(cases[i].fn, err, sizeof err);
    bool aborted = st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT;
    if (!aborted || !strstr(err, cases[i].name) ||
        !strstr(err, "found state 0"))
      FAIL_("transition %s on an IDLE stream: aborted=%d, stderr '%s'",
            cases[i].name, aborted, err);
  }
}

/* The legal path through the same functions does not trip them: an idle
 * stream queued by a producer, run, and let go idle. */
static void legal(struct evrt__stream *s) {
  /* (the stream is not pushed: this thread plays the worker) */
  if (!evrt__st_try_queue_idle(s))
    _exit(4);
  evrt__st_run(s);
  unsigned mine = evrt__st_idle(s, memory_order_seq_cst);
  if (EVRT__ST(mine) != EVRT__S_IDLE)
    _exit(5);
  _exit(0);
}

TEST(legal_transitions_pass) {
  char err[512];
  int st = run_child(legal, err, sizeof err);
  if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
    FAIL_("legal transitions: status %d, stderr '%s'", st, err);
}
