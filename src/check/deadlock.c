/*
 * deadlock.c - cycles of waits.  Under EVRT_CHECK a host thread that must
 * block until a stream reaches a seq (stream, event or device synchronize:
 * wait.c) waits in slices; after each slice it follows the waits: the
 * stream it needs is parked on a wait bound to another stream's seq, which
 * is parked on a wait bound to ..., until it finds a stream that can still
 * progress (no deadlock) or comes back to one it has seen: a cycle, in
 * which no member can ever pass its wait.  The cycle is reported (with each
 * wait's call site) and the synchronize returns EVRT_ERROR_DEADLOCK instead
 * of hanging.
 *
 * Such cycles need waits that bind later than their enqueue: a legacy
 * next-record wait whose record was enqueued behind a wait on the waiter
 * (a wait bound at its call can only name work enqueued before it).  A
 * wait still waiting for a record that nobody has made is not a cycle: a
 * host thread may still make it.
 *
 * What the walk reads: each stream's parked wait as its worker noted it
 * (model.c, under the stream's check lock) and the streams' done_seq.  A
 * member of a real cycle never changes either; a wait that passed has its
 * source's done_seq at its target, which ends the walk.  The cycle is
 * confirmed by a second walk before it is reported.
 */
#include "cimpl.h"

#include <string.h>

_Thread_local int evrt__check_tls_waiting;

#define MAX_WALK 64

struct step {
  struct evrt__stream *s;
  struct evrt__cycle_member m;
};

/* Walk from (s, target): the number of members of the cycle found (their
 * steps from *first on), 0 if some stream on the way can progress. */
static int walk(struct evrt__stream *s, uint64_t target, struct step *st,
                int *first) {
  int n = 0;
  for (;;) {
    if (evrt__done(s) >= target || n == MAX_WALK)
      return 0;
    struct evrt__cstream *cs = s->check;
    if (!cs)
      return 0;
    for (int i = 0; i < n; i++)
      if (st[i].s == s) {
        *first = i;
        return n - i;
      }
    evrt__spin_lock(&cs->lock);
    bool parked = cs->wstate == CW_STREAM;
    struct evrt__stream *src = cs->w_src;
    st[n].s = s;
    st[n].m.stream_id = cs->id;
    st[n].m.seq = cs->w_seq;
    st[n].m.target = cs->w_target;
    st[n].m.ev = cs->w_ev;
    st[n].m.gen = cs->w_gen;
    st[n].m.site = cs->w_site;
    st[n].m.device = cs->device;
    evrt__spin_unlock(&cs->lock);
    if (!parked || st[n].m.seq > target || evrt__done(s) + 1 != st[n].m.seq)
      return 0; /* running, or parked on something else than a stream */
    struct evrt__cstream *scs = src->check;
    st[n].m.src_id = 0;
    if (scs) {
      evrt__spin_lock(&scs->lock);
      st[n].m.src_id = scs->id;
      evrt__spin_unlock(&scs->lock);
    }
    target = st[n].m.target;
    s = src;
    n++;
  }
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
  evrt__check_tls_waiting = 1;
  uint64_t start = evrt__now_ns();
  uint64_t deadline = timeout_ns >= 0 ? start + (uint64_t)timeout_ns : 0;
  int64_t slice = 20000000; /* 20 ms, then longer */
  evrt_status_t r;
  struct step a[MAX_WALK], b[MAX_WALK];
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
    int fa = 0, fb = 0;
    int na = walk(s, target, a, &fa);
    if (!na)
      continue;
    evrt__sleep_ns(10000000); /* confirm: a real cycle does not move */
    int nb = walk(s, target, b, &fb);
    if (!nb || !same_cycle(a + fa, na, b + fb, nb))
      continue;
    struct evrt__cycle_member m[MAX_WALK];
    for (int i = 0; i < nb; i++)
      m[i] = b[fb + i].m;
    evrt__report_cycle(m, nb, evrt__site_capture());
    r = EVRT_ERROR_DEADLOCK;
    break;
  }
  evrt__check_tls_waiting = 0;
  if (r == EVRT_ERROR_DEADLOCK)
    return evrt__fail(r, "the streams this call waits for wait on each other "
                         "(a cycle of waits: see the evrt-check report)");
  return r;
}
