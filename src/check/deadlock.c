/*
 * deadlock.c - cycles of waits.  Under EVRT_CHECK a host thread that must
 * block until a stream reaches a seq (stream, event or device synchronize:
 * wait.c) waits in slices; after each slice it asks whether that stream is
 * stuck: parked on a wait that can never pass, because what it waits for
 * is itself stuck, and so on until the walk comes back to a stream it has
 * already taken as stuck.  The streams found so (a cycle, and the streams
 * stuck behind it) are reported with each wait's call site, and the
 * synchronize returns EVRT_ERROR_DEADLOCK instead of hanging.
 *
 * A stream parked at its head item is stuck when that item is
 *  - a wait bound to stream u's item t (an event generation, a stream
 *    position: CW_STREAM) and u is stuck before t;
 *  - a stream-ordered value wait (CW_VALUE: evrt_stream_wait_value64, ACL
 *    notify waits) on word w, at least one value write of w is queued on
 *    some stream, and every stream with a queued item that may write
 *    memory (a value write, a copy, a fill, a host function, a graph run:
 *    q_writers) is stuck.  Any of those could satisfy the wait; none will.
 * and has no timeout (it will pass) and is no polled value wait (another
 * process may write the word).
 *
 * Such cycles need waits that bind or are satisfied later than their
 * enqueue: a legacy next-record wait whose record was enqueued behind a
 * wait on the waiter, a value wait whose write is queued behind a wait on
 * the waiter (a wait bound at its call can only name work enqueued before
 * it).  A wait still waiting for a record that nobody has made, or for a
 * value no queued work writes, is not stuck: a host thread may still make
 * it.  A value wait whose queued writers are all stuck is taken as stuck
 * even though another host thread could still store the word
 * (evrt_value_write64): docs/check.md says so.
 *
 * The search is a depth-first walk that takes a stream it has already
 * reached as stuck (the largest set of streams that wait only on each
 * other), bounded in members and steps (past the bound: not stuck).  What
 * it reads: each stream's parked wait as its worker noted it (model.c,
 * under the stream's check lock), the streams' done_seq and q_writers, the
 * table of queued value writes.  A member of a real deadlock changes none
 * of them; the result is confirmed by a second walk 10 ms later before it
 * is reported.
 */
#include "cimpl.h"

#include <string.h>

_Thread_local int evrt__check_tls_waiting;

#define MAX_WALK 64
#define MAX_STEPS 4096

struct step {
  struct evrt__stream *s;
  struct evrt__cycle_member m;
};

struct walk {
  struct step st[MAX_WALK]; /* streams taken as stuck, in walk order */
  int n;
  int steps; /* left before the walk gives up */
};

static bool stuck(struct walk *w, struct evrt__stream *s, uint64_t target);

/* The value wait of member `me` can never pass: a queued value write of
 * its word exists, and every stream that may write memory is stuck. */
static bool value_stuck(struct walk *w, int me) {
  struct evrt__stream *prod[EVRT__CYC_PRODUCERS];
  int np = evrt__check_value_writers(w->st[me].m.addr, prod,
                                     EVRT__CYC_PRODUCERS);
  if (np == 0)
    return false; /* nobody queued a write: the host may still make one */
  w->st[me].m.nprod = np;
  for (int i = 0; i < np && i < EVRT__CYC_PRODUCERS; i++) {
    struct evrt__cstream *pcs = prod[i]->check;
    evrt__spin_lock(&pcs->lock);
    w->st[me].m.prod[i] = pcs->id;
    evrt__spin_unlock(&pcs->lock);
  }
  /* Every stream with a queued writer (the value writes among them) */
  struct evrt__table *tb = &evrt__streams;
  uint32_t n = atomic_load_explicit(&tb->next_unused, memory_order_acquire);
  for (uint32_t i = 0; i < n; i++) {
    struct evrt__stream *t = (struct evrt__stream *)evrt__table_at(tb, i);
    struct evrt__cstream *tcs = t ? t->check : NULL;
    if (!tcs ||
        !atomic_load_explicit(&tcs->q_writers, memory_order_relaxed))
      continue;
    /* its head can never run: past it lie the writers */
    if (!stuck(w, t, evrt__done(t) + 1))
      return false;
  }
  return true;
}

/* Can stream s never reach target?  Members found stuck stay in w->st. */
static bool stuck(struct walk *w, struct evrt__stream *s, uint64_t target) {
  if (--w->steps < 0 || evrt__done(s) >= target)
    return false;
  struct evrt__cstream *cs = s->check;
  if (!cs)
    return false;
  for (int i = 0; i < w->n; i++)
    if (w->st[i].s == s)
      return true; /* on the walk (a cycle), or found stuck already */
  if (w->n == MAX_WALK)
    return false;
  int me = w->n;
  struct step *st = &w->st[me];
  memset(st, 0, sizeof *st);
  evrt__spin_lock(&cs->lock);
  uint8_t state = cs->wstate;
  bool timed = cs->w_timed;
  struct evrt__stream *src = cs->w_src;
  st->s = s;
  st->m.stream_id = cs->id;
  st->m.seq = cs->w_seq;
  st->m.target = cs->w_target;
  st->m.ev = cs->w_ev;
  st->m.gen = cs->w_gen;
  st->m.site = cs->w_site;
  st->m.device = cs->device;
  st->m.value = state == CW_VALUE;
  st->m.addr = cs->w_addr;
  st->m.want = cs->w_value;
  st->m.flags = cs->w_flags;
  evrt__spin_unlock(&cs->lock);
  if ((state != CW_STREAM && state != CW_VALUE) || timed ||
      st->m.seq > target || evrt__done(s) + 1 != st->m.seq)
    return false; /* running, or parked on something that may pass */
  if (state == CW_VALUE && (st->m.flags & EVRT_VALUE_WAIT_POLL))
    return false; /* polled: another process may write the word */
  w->n++;
  bool r;
  if (state == CW_STREAM) {
    struct evrt__cstream *scs = src->check;
    if (scs) {
      evrt__spin_lock(&scs->lock);
      st->m.src_id = scs->id;
      evrt__spin_unlock(&scs->lock);
    }
    r = stuck(w, src, st->m.target);
  } else {
    r = value_stuck(w, me);
  }
  if (!r)
    w->n = me; /* it and what was found below it go */
  return r;
}

/* The stuck members from (s, target), or 0. */
static int walk(struct walk *w, struct evrt__stream *s, uint64_t target) {
  w->n = 0;
  w->steps = MAX_STEPS;
  return stuck(w, s, target) ? w->n : 0;
}

static bool same_cycle(const struct step *a, int na, const struct step *b,
                       int nb) {
  if (na != nb)
    return false;
  for (int i = 0; i < na; i++) {
    bool found = false;
    for (int j = 0; j < nb; j++)
      found |= a[i].s == b[j].s && a[i].m.seq == b[j].m.seq;
    if (!found)
      return false;
  }
  return true;
}

evrt_status_t evrt__check_wait_seq(struct evrt__stream *s, uint64_t target,
                                   int64_t timeout_ns, bool blocking) {
  /* 2: the caller's wait is untimed; its slices still say that this host
   * function (if it is one) is blocked (wait.c, evrt__stream_blocked_on) */
  evrt__check_tls_waiting = timeout_ns < 0 ? 2 : 1;
  uint64_t start = evrt__now_ns();
  uint64_t deadline = timeout_ns >= 0 ? start + (uint64_t)timeout_ns : 0;
  int64_t slice = 20000000; /* 20 ms, then longer */
  evrt_status_t r;
  /* two walks of up to MAX_WALK members each: off the worker-sized stack */
  struct walk *a = malloc(sizeof *a), *b = malloc(sizeof *b);
  for (;;) {
    int64_t sl = slice;
    if (deadline) {
      uint64_t now = evrt__now_ns();
      if (now >= deadline) {
        r = EVRT_ERROR_TIMEOUT;
        break;
      }
      if ((int64_t)(deadline - now) < sl)
        sl = (int64_t)(deadline - now);
    }
    r = evrt__be_host_wait(s, target, sl, blocking);
    if (r != EVRT_ERROR_TIMEOUT)
      break;
    if (slice < 500000000)
      slice *= 2;
    if (!a || !b)
      continue; /* no memory to look: wait on */
    int na = walk(a, s, target);
    if (!na)
      continue;
    evrt__sleep_ns(10000000); /* confirm: a real cycle does not move */
    int nb = walk(b, s, target);
    if (!nb || !same_cycle(a->st, na, b->st, nb))
      continue;
    struct evrt__cycle_member m[MAX_WALK];
    for (int i = 0; i < nb; i++)
      m[i] = b->st[i].m;
    evrt__report_cycle(m, nb, evrt__site_capture());
    r = EVRT_ERROR_DEADLOCK;
    break;
  }
  free(a);
  free(b);
  evrt__check_tls_waiting = 0;
  if (r == EVRT_ERROR_DEADLOCK)
    return evrt__fail(r, "the streams this call waits for wait on each other "
                         "(a cycle of waits: see the evrt-check report)");
  return r;
}
