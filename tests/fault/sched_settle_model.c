/*
 * sched_settle_model.c - an exhaustive interleaving model of the scheduler's
 * settle path (src/cpu/exec.c: idle_unsettled, settle_once, after_idle),
 * checked against the producer (src/stream.c enqueue + src/cpu/streams.c
 * evrt__cpu_submit), a parked host waiter (src/cpu/wait.c: wlock_lower,
 * link, wunlock, re-read done_seq) and a destroyer
 * (evrt__cpu_stream_destroyed + evrt__st_try_kill_idle).
 *
 * Why a model: ThreadSanitizer does not model fences, so the one barrier
 * that makes an unsettled idle safe (settle_once's seq_cst fence) is
 * invisible to `make check-tsan`; a bug there shows as a lost wake-up one
 * run in many.  Here every interleaving of the threads' steps is explored
 * (depth-first, each distinct state once), with a store buffer per thread
 * (x86-TSO: a store goes to the thread's FIFO buffer, a load reads the
 * thread's newest buffered store of that variable or else memory, any
 * buffered store may reach memory at any step, oldest first; a seq_cst
 * fence, a seq_cst store (xchg) and a CAS wait until the buffer is empty).
 * That is the one relaxation the protocol's Dekker pairs are about: a
 * store delayed past a later load (store buffering), which C11 allows for
 * release stores and relaxed/acquire loads and forbids between a seq_cst
 * fence and the other side's seq_cst accesses.  Release and acquire fences
 * do not order a store before a later load, so the model treats them as no
 * fence at all.  Not modelled: load-load reordering (the worker's loads
 * after the fence are each checked on their own), slot reuse and
 * incarnations (evrt__st_cas_mine's whole-word CAS; regression tests in
 * tests/stress), parking and the RESUME flag, inline resumes and nested
 * settles, more than one noted stream (the one fence covers every note
 * alike).
 *
 * Threads (one stream S; item 1 linked and run by W when the model
 * starts, state RUNNING, enq_seq 1, done_seq 0):
 *   W  the worker letting S go idle unsettled and settling it
 *      (mode "unsettled"), or going idle the settled way with seq_cst
 *      stores (mode "settled": exec.c's completion path and give_up)
 *   P  a producer linking item 2: enq_seq = 2 (seq_cst), then
 *      evrt__st_try_queue_idle (load state, CAS IDLE -> QUEUED, push)
 *   H  a host synchronizing S to seq 1: fast check of done_seq, then
 *      wlock_lower (CAS on wake_at, taking wlock), link its record,
 *      wunlock (release), re-read done_seq (seq_cst), park
 *   D  a destroyer (after P's link, as plock orders them): store
 *      destroyed (seq_cst), then
 *      evrt__st_try_kill_idle (IDLE and drained -> DEAD, free)
 *   R  the other workers: pops S from the run queue and runs it to idle
 *      in one atomic step (the settled path, under sequential
 *      consistency), freeing it if destroyed and drained
 *
 * Checked: in every reachable state, a push finds S not in the run queue
 * (never queued twice), a pop finds it QUEUED, no item runs twice, a free
 * happens once and only drained; in every final state (no step left), no
 * host is parked (lost wake-up), every linked item ran (lost work), and a
 * destroyed stream was freed (leak).
 *
 * The model can fail: `--fence=none` (no fence) and `--fence=acqrel`
 * (release/acquire fences) find the lost wake-up of the host, the item
 * left unrun and the destroyed stream never freed, and `--producer=release`
 * (the producer's enq_seq store weakened to release) finds the lost item
 * even with the fence, and `--no-recheck` (after_idle killing a
 * destroyed stream without a second look at enq_seq, as it did before
 * this model found that a producer's link and the destroy may both land
 * between its two loads) finds the item left on a freed stream.  Run with
 * no arguments (the CTest test
 * sched_settle_model) it checks every variant and exits 0 only if the
 * real protocol (fence seq_cst, producer seq_cst; and the settled mode)
 * has no counterexample and every weakened variant has one, printing a
 * counterexample trace of each weakened variant.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* shared variables */
enum { V_STATE, V_ENQ, V_DONE, V_WAKE, V_DESTR, NV };
static const char *vname[NV] = {"state", "enq_seq", "done_seq", "wake_at",
                                "destroyed"};
enum { S_IDLE, S_QUEUED, S_RUNNING, S_DEAD };
static const char *sname[] = {"IDLE", "QUEUED", "RUNNING", "DEAD"};
#define WAKE_NONE 15 /* no waiter: wake_at's target bits */
#define WLOCK 16     /* wlock: bit 63 of wake_at in the code */

enum { T_W, T_P, T_H, T_D, T_R, NT };
static const char *tname[NT] = {"W", "P", "H", "D", "R"};
#define SBMAX 4

struct st {
  uint8_t mem[NV];
  uint8_t sbv[NT][SBMAX], sbx[NT][SBMAX], sbn[NT];
  uint8_t pc[NT];
  uint8_t r[NT][3]; /* registers */
  uint8_t queued;   /* S in the run queue */
  uint8_t registered, woken;
  uint8_t ran[4];
  uint8_t freed;
};

/* ------------------------------------------------------------- variants */
static bool fence_sc;      /* settle_once's fence: seq_cst (else none) */
static bool settled_mode;  /* W goes idle with seq_cst stores, no notes */
static bool producer_sc;   /* enq_seq stored seq_cst */
static bool recheck;       /* after_idle re-reads enq_seq once destroyed */
static bool active[NT];

/* ------------------------------------------------------- memory (TSO) */
static uint8_t ld(struct st *s, int t, int v) {
  for (int i = s->sbn[t] - 1; i >= 0; i--)
    if (s->sbv[t][i] == v)
      return s->sbx[t][i];
  return s->mem[v];
}
static void st_buf(struct st *s, int t, int v, uint8_t x) {
  if (s->sbn[t] == SBMAX) {
    fprintf(stderr, "model: store buffer overflow\n");
    exit(2);
  }
  s->sbv[t][s->sbn[t]] = (uint8_t)v;
  s->sbx[t][s->sbn[t]++] = x;
}
static bool drained(const struct st *s, int t) { return s->sbn[t] == 0; }
static void flush(struct st *s, int t) {
  s->mem[s->sbv[t][0]] = s->sbx[t][0];
  memmove(s->sbv[t], s->sbv[t] + 1, SBMAX - 1);
  memmove(s->sbx[t], s->sbx[t] + 1, SBMAX - 1);
  s->sbn[t]--;
}

/* ------------------------------------------------------------ checking */
static const char *violation; /* set by a step or the final check */
static void fail(const char *what) {
  if (!violation)
    violation = what;
}

static void push(struct st *s) {
  if (s->queued)
    fail("stream pushed while already in the run queue (queued twice)");
  s->queued = 1;
}
/* evrt__stream_notify(S, seq) under wlock; called with wlock free */
static void notify(struct st *s, int seq) {
  if (s->registered && seq >= 1) {
    s->registered = 0;
    s->woken = 1;
  }
  s->mem[V_WAKE] = s->registered ? 1 : WAKE_NONE;
}
/* evrt__stream_free -> evrt__cpu_stream_release: notify, then free */
static void free_stream(struct st *s) {
  if (s->freed)
    fail("stream freed twice");
  if (s->mem[V_DONE] < s->mem[V_ENQ])
    fail("stream freed with an item not run");
  notify(s, s->mem[V_DONE]);
  s->freed = 1;
}

/* A CAS expecting IDLE (the thread's buffer drained): IDLE -> QUEUED
 * pushes, IDLE -> DEAD frees. */
static void cas_idle_to(struct st *s, int to, const char *who, char *lab,
                        size_t n) {
  if (s->mem[V_STATE] != S_IDLE) {
    snprintf(lab, n, "%s: CAS fails (state %s)", who, sname[s->mem[V_STATE]]);
    return;
  }
  s->mem[V_STATE] = (uint8_t)to;
  snprintf(lab, n, "%s: CAS IDLE->%s ok, %s", who, sname[to],
           to == S_DEAD ? "free" : "push");
  if (to == S_DEAD)
    free_stream(s);
  else
    push(s);
}

/* ------------------------------------------------------------- threads */
/* One step of thread t; false (s untouched or discarded) if it cannot
 * step now.  `lab` gets a description for traces. */
static bool step(struct st *s, int t, char *lab, size_t n) {
  uint8_t *pc = &s->pc[t], *r = s->r[t];
  switch (t) {
  case T_W:
    if (!settled_mode) {
      switch (*pc) {
      case 0: /* idle_unsettled: done_seq (release) */
        st_buf(s, t, V_DONE, 1);
        snprintf(lab, n, "store done_seq=1 (release)");
        *pc = 1;
        return true;
      case 1: /* evrt__st_idle(s, release) */
        st_buf(s, t, V_STATE, S_IDLE);
        snprintf(lab, n, "st_idle: store state=IDLE (release), noted");
        *pc = 2;
        return true;
      case 2: /* settle_once's fence */
        if (fence_sc && !drained(s, t))
          return false;
        snprintf(lab, n, fence_sc ? "settle: seq_cst fence" : "settle: (no fence)");
        *pc = 3;
        return true;
      case 3: /* evrt__wake_target(s, relaxed) <= seq: notify */
        r[0] = ld(s, t, V_WAKE) & 15;
        snprintf(lab, n, "load wake_at -> %s", r[0] == WAKE_NONE ? "none" : "1");
        *pc = r[0] <= 1 ? 4 : 5;
        return true;
      case 4: /* evrt__stream_notify: takes wlock (CAS) */
        if (!drained(s, t) || (s->mem[V_WAKE] & WLOCK))
          return false;
        notify(s, 1);
        snprintf(lab, n, "notify(1) under wlock");
        *pc = 5;
        return true;
      case 5: /* after_idle: enq_seq != last: retake QUEUED */
        r[1] = ld(s, t, V_ENQ);
        snprintf(lab, n, "load enq_seq -> %d", r[1]);
        *pc = r[1] != 1 ? 6 : 7;
        return true;
      case 6: /* st_try_retake(mine, QUEUED): CAS */
        if (!drained(s, t))
          return false;
        cas_idle_to(s, S_QUEUED, "st_try_retake", lab, n);
        *pc = 20;
        return true;
      case 7: /* load destroyed */
        r[2] = ld(s, t, V_DESTR);
        snprintf(lab, n, "load destroyed -> %d", r[2]);
        *pc = !r[2] ? 20 : recheck ? 9 : 8;
        return true;
      case 9: /* destroyed: look at enq_seq again (after_idle) */
        r[1] = ld(s, t, V_ENQ);
        snprintf(lab, n, "destroyed: load enq_seq again -> %d", r[1]);
        *pc = r[1] != 1 ? 6 : 8;
        return true;
      case 8: /* st_try_kill_mine: CAS IDLE -> DEAD, free */
        if (!drained(s, t))
          return false;
        cas_idle_to(s, S_DEAD, "st_try_kill_mine", lab, n);
        *pc = 20;
        return true;
      default:
        return false;
      }
    }
    /* settled: exec_stream's completion (store done_seq seq_cst, load
     * wake_at) and give_up (st_idle seq_cst, after_idle seq_cst loads);
     * a seq_cst store is xchg: it waits for the buffer, then is in memory */
    switch (*pc) {
    case 0:
      if (!drained(s, t))
        return false;
      s->mem[V_DONE] = 1;
      snprintf(lab, n, "store done_seq=1 (seq_cst)");
      *pc = 1;
      return true;
    case 1:
      r[0] = ld(s, t, V_WAKE) & 15;
      snprintf(lab, n, "load wake_at -> %s", r[0] == WAKE_NONE ? "none" : "1");
      *pc = r[0] <= 1 ? 2 : 3;
      return true;
    case 2:
      if (!drained(s, t) || (s->mem[V_WAKE] & WLOCK))
        return false;
      notify(s, 1);
      snprintf(lab, n, "notify(1) under wlock");
      *pc = 3;
      return true;
    case 3:
      if (!drained(s, t))
        return false;
      s->mem[V_STATE] = S_IDLE;
      snprintf(lab, n, "st_idle: store state=IDLE (seq_cst)");
      *pc = 4;
      return true;
    case 4:
      r[1] = ld(s, t, V_ENQ);
      snprintf(lab, n, "load enq_seq -> %d", r[1]);
      *pc = r[1] != 1 ? 5 : 6;
      return true;
    case 5:
      if (!drained(s, t))
        return false;
      cas_idle_to(s, S_QUEUED, "st_try_retake", lab, n);
      *pc = 20;
      return true;
    case 6:
      r[2] = ld(s, t, V_DESTR);
      snprintf(lab, n, "load destroyed -> %d", r[2]);
      *pc = !r[2] ? 20 : recheck ? 8 : 7;
      return true;
    case 8: /* destroyed: look at enq_seq again (after_idle) */
      r[1] = ld(s, t, V_ENQ);
      snprintf(lab, n, "destroyed: load enq_seq again -> %d", r[1]);
      *pc = r[1] != 1 ? 5 : 7;
      return true;
    case 7:
      if (!drained(s, t))
        return false;
      cas_idle_to(s, S_DEAD, "st_try_kill_mine", lab, n);
      *pc = 20;
      return true;
    default:
      return false;
    }

  case T_P:
    switch (*pc) {
    case 0: /* link item 2 under plock; enq_seq = 2 */
      if (producer_sc) {
        if (!drained(s, t))
          return false;
        s->mem[V_ENQ] = 2;
        snprintf(lab, n, "link item 2, store enq_seq=2 (seq_cst)");
      } else {
        st_buf(s, t, V_ENQ, 2);
        snprintf(lab, n, "link item 2, store enq_seq=2 (release)");
      }
      *pc = 1;
      return true;
    case 1: /* evrt__st_try_queue_idle: seq_cst load */
      r[0] = ld(s, t, V_STATE);
      snprintf(lab, n, "st_try_queue_idle: load state -> %s", sname[r[0]]);
      *pc = r[0] == S_IDLE ? 2 : 20;
      return true;
    case 2:
      if (!drained(s, t))
        return false;
      cas_idle_to(s, S_QUEUED, "st_try_queue_idle", lab, n);
      *pc = 20;
      return true;
    default:
      return false;
    }

  case T_H:
    switch (*pc) {
    case 0: /* fast check */
      r[0] = ld(s, t, V_DONE);
      snprintf(lab, n, "sync: load done_seq -> %d", r[0]);
      *pc = r[0] >= 1 ? 20 : 1;
      return true;
    case 1: /* wlock_lower: CAS taking wlock and lowering wake_at */
      if (!drained(s, t) || (s->mem[V_WAKE] & WLOCK))
        return false;
      s->mem[V_WAKE] = 1 | WLOCK;
      snprintf(lab, n, "wlock_lower: CAS wake_at=1|lock");
      *pc = 2;
      return true;
    case 2:
      s->registered = 1;
      snprintf(lab, n, "link host record");
      *pc = 3;
      return true;
    case 3: /* wunlock: release store */
      st_buf(s, t, V_WAKE, ld(s, t, V_WAKE) & ~WLOCK);
      snprintf(lab, n, "wunlock (release)");
      *pc = 4;
      return true;
    case 4: /* re-read done_seq (seq_cst load) */
      r[0] = ld(s, t, V_DONE);
      snprintf(lab, n, "load done_seq -> %d%s", r[0], r[0] >= 1 ? "" : ", park");
      /* returns (its record is unlinked later: harmless), or parks */
      *pc = r[0] >= 1 ? 20 : 6;
      return true;
    case 6: /* parked until notified */
      if (!s->woken)
        return false;
      snprintf(lab, n, "woken");
      *pc = 20;
      return true;
    default:
      return false;
    }

  case T_D:
    switch (*pc) {
    case 0: /* store destroyed (seq_cst) */
      /* A producer's link and a destroy are ordered by plock (the push
       * re-checks the handle there, where destroy kills it: src/stream.c):
       * a call that links, links before the destroy.  One that comes
       * after links nothing and fails, so it is no step here. */
      if (active[T_P] && s->pc[T_P] == 0)
        return false;
      if (!drained(s, t))
        return false;
      s->mem[V_DESTR] = 1;
      snprintf(lab, n, "destroy: store destroyed=1 (seq_cst)");
      *pc = 1;
      return true;
    case 1: /* st_try_kill_idle: seq_cst loads, then CAS */
      r[0] = ld(s, t, V_STATE);
      snprintf(lab, n, "st_try_kill_idle: load state -> %s", sname[r[0]]);
      *pc = r[0] == S_IDLE ? 2 : 20;
      return true;
    case 2:
      r[1] = ld(s, t, V_DONE);
      snprintf(lab, n, "load done_seq -> %d", r[1]);
      *pc = 3;
      return true;
    case 3:
      r[2] = ld(s, t, V_ENQ);
      snprintf(lab, n, "load enq_seq -> %d", r[2]);
      *pc = r[1] >= r[2] ? 4 : 20;
      return true;
    case 4:
      if (!drained(s, t))
        return false;
      cas_idle_to(s, S_DEAD, "st_try_kill_idle", lab, n);
      *pc = 20;
      return true;
    default:
      return false;
    }

  case T_R: /* pop and run S to idle, settled (atomic here) */
    if (!s->queued || (s->mem[V_WAKE] & WLOCK))
      return false;
    s->queued = 0;
    if (s->mem[V_STATE] != S_QUEUED)
      fail("popped a stream that is not QUEUED");
    for (int i = s->mem[V_DONE] + 1; i <= s->mem[V_ENQ]; i++)
      if (s->ran[i]++)
        fail("an item ran twice");
    s->mem[V_DONE] = s->mem[V_ENQ];
    notify(s, s->mem[V_DONE]);
    s->mem[V_STATE] = S_IDLE;
    snprintf(lab, n, "pop, run to done_seq=%d, idle", s->mem[V_DONE]);
    if (s->mem[V_DESTR]) {
      s->mem[V_STATE] = S_DEAD;
      free_stream(s);
      snprintf(lab + strlen(lab), n - strlen(lab), ", destroyed: free");
    }
    return true;
  }
  return false;
}

static void final_check(const struct st *s) {
  if (active[T_H] && s->pc[T_H] == 6)
    fail("lost wake-up: the host stays parked with done_seq reached");
  for (int i = 1; i <= s->mem[V_ENQ]; i++)
    if (!s->ran[i])
      fail("lost work: a linked item never ran");
  if (active[T_D] && !s->freed)
    fail("leak: the destroyed stream is never freed");
}

/* --------------------------------------------------------- exploration */
static struct st *seen;
static size_t seen_cap, seen_n;
static uint64_t hash(const struct st *s) {
  const unsigned char *p = (const unsigned char *)s;
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < sizeof *s; i++)
    h = (h ^ p[i]) * 1099511628211ull;
  return h;
}
static bool seen_add(const struct st *s);
static void seen_grow(void) {
  struct st *old = seen;
  size_t oc = seen_cap;
  seen_cap = oc ? oc * 2 : 1 << 14;
  seen = calloc(seen_cap, sizeof *seen);
  if (!seen) {
    fprintf(stderr, "model: out of memory\n");
    exit(2);
  }
  seen_n = 0;
  static const struct st zero;
  for (size_t i = 0; i < oc; i++)
    if (memcmp(&old[i], &zero, sizeof zero))
      seen_add(&old[i]);
  free(old);
}
/* false if already there (the all-zero state never occurs: mem[WAKE] != 0
 * or pc != 0 in every state; the initial one has ran[1] = 1) */
static bool seen_add(const struct st *s) {
  if (2 * (seen_n + 1) > seen_cap)
    seen_grow();
  size_t i = hash(s) & (seen_cap - 1);
  static const struct st zero;
  while (memcmp(&seen[i], &zero, sizeof zero)) {
    if (!memcmp(&seen[i], s, sizeof *s))
      return false;
    i = (i + 1) & (seen_cap - 1);
  }
  seen[i] = *s;
  seen_n++;
  return true;
}

#define MAXDEPTH 64
static char path[MAXDEPTH][96];
static const char *found;
static char found_trace[MAXDEPTH * 100];
static size_t nfinal;

static void explore(const struct st *s, int depth) {
  if (found)
    return;
  if (!seen_add(s))
    return;
  if (depth >= MAXDEPTH) {
    fprintf(stderr, "model: too deep\n");
    exit(2);
  }
  bool any = false;
  for (int t = 0; t < NT && !found; t++) {
    if (!active[t])
      continue;
    for (int kind = 0; kind < 2 && !found; kind++) {
      struct st c = *s;
      char *lab = path[depth];
      if (kind == 0) {
        if (!step(&c, t, lab + 4, sizeof path[0] - 4))
          continue;
      } else {
        if (!c.sbn[t])
          continue;
        int v = c.sbv[t][0], x = c.sbx[t][0];
        flush(&c, t);
        if (v == V_STATE)
          snprintf(lab + 4, sizeof path[0] - 4, "(store state=%s reaches memory)",
                   sname[x]);
        else
          snprintf(lab + 4, sizeof path[0] - 4, "(store %s=%d reaches memory)",
                   vname[v], x & 15);
      }
      memcpy(lab, tname[t], 1);
      memcpy(lab + 1, ":  ", 3);
      any = true;
      if (violation) {
        found = violation;
      } else {
        explore(&c, depth + 1);
        continue;
      }
      size_t off = 0;
      for (int i = 0; i <= depth; i++)
        off += (size_t)snprintf(found_trace + off, sizeof found_trace - off,
                                "      %s\n", path[i]);
    }
  }
  if (!any && !found) {
    nfinal++;
    final_check(s);
    if (violation) {
      found = violation;
      size_t off = 0;
      for (int i = 0; i < depth; i++)
        off += (size_t)snprintf(found_trace + off, sizeof found_trace - off,
                                "      %s\n", path[i]);
    }
  }
}

/* One variant: true if it found a counterexample. */
static bool run(const char *name, bool fsc, bool settled, bool psc,
                bool p, bool h, bool d, bool verbose) {
  fence_sc = fsc;
  settled_mode = settled;
  producer_sc = psc;
  memset(active, 0, sizeof active);
  active[T_W] = active[T_R] = true;
  active[T_P] = p;
  active[T_H] = h;
  active[T_D] = d;
  struct st s0;
  memset(&s0, 0, sizeof s0);
  s0.mem[V_STATE] = S_RUNNING;
  s0.mem[V_ENQ] = 1;
  s0.mem[V_WAKE] = WAKE_NONE;
  s0.ran[1] = 1; /* W is running item 1 */
  free(seen);
  seen = NULL;
  seen_cap = seen_n = 0;
  violation = found = NULL;
  nfinal = 0;
  explore(&s0, 0);
  printf("  %-52s %6zu states %5zu final: %s\n", name, seen_n, nfinal,
         found ? found : "no counterexample");
  if (found && verbose)
    printf("    counterexample:\n%s", found_trace);
  return found != NULL;
}

int main(int argc, char **argv) {
  /* single variant from the command line (for exploring) */
  if (argc > 1) {
    bool fsc = true, settled = false, psc = true;
    recheck = true;
    for (int i = 1; i < argc; i++) {
      if (!strcmp(argv[i], "--fence=none") || !strcmp(argv[i], "--fence=acqrel"))
        fsc = false;
      else if (!strcmp(argv[i], "--settled"))
        settled = true;
      else if (!strcmp(argv[i], "--producer=release"))
        psc = false;
      else if (!strcmp(argv[i], "--no-recheck"))
        recheck = false;
      else if (strcmp(argv[i], "--fence=sc")) {
        fprintf(stderr, "usage: %s [--fence=sc|none|acqrel] [--settled] "
                        "[--producer=release] [--no-recheck]\n", argv[0]);
        return 2;
      }
    }
    bool bad = run("producer + host", fsc, settled, psc, true, true, false, true);
    bad |= run("destroyer + host", fsc, settled, psc, false, true, true, true);
    bad |= run("producer + destroyer", fsc, settled, psc, true, false, true, true);
    return bad ? 1 : 0;
  }
  int errors = 0;
  recheck = true;
  printf("the protocol as built (must have no counterexample):\n");
  /* unsettled idle + settle with the seq_cst fence */
  errors += run("unsettled, fence sc: producer + host", true, false, true,
                true, true, false, false);
  errors += run("unsettled, fence sc: destroyer + host", true, false, true,
                false, true, true, false);
  errors += run("unsettled, fence sc: producer + destroyer", true, false, true,
                true, false, true, false);
  errors += run("settled (seq_cst stores): producer + host", true, true, true,
                true, true, false, false);
  errors += run("settled (seq_cst stores): destroyer + host", true, true, true,
                false, true, true, false);
  errors += run("settled (seq_cst stores): producer + destroyer", true, true,
                true, true, false, true, false);
  printf("weakened (each must have a counterexample):\n");
  /* no fence, or release/acquire fences (the same here: neither orders a
   * store before a later load) */
  errors += !run("fence removed / acq_rel: producer only", false, false, true,
                 true, false, false, true);
  errors += !run("fence removed / acq_rel: host only", false, false, true,
                 false, true, false, true);
  errors += !run("fence removed / acq_rel: destroyer only", false, false, true,
                 false, false, true, true);
  errors += !run("fence sc, producer's enq_seq store release", true, false,
                 false, true, false, false, true);
  /* after_idle before 2026-12-03: a destroy seen, the stream killed
   * without looking at enq_seq again */
  recheck = false;
  errors += !run("fence sc, no second look at enq_seq once destroyed", true,
                 false, true, true, false, true, true);
  errors += !run("settled, no second look at enq_seq once destroyed", true,
                 true, true, true, false, true, true);
  recheck = true;
  free(seen);
  if (errors) {
    printf("FAIL: %d variant(s) did not give the expected answer\n", errors);
    return 1;
  }
  printf("ok\n");
  return 0;
}
