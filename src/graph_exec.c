/*
 * graph_exec.c - executable graphs: instantiation into lanes, launch, and
 * the worker side of a launch.
 *
 * Lanes.  Instantiation gives every captured stream of the graph a lane: a
 * private internal stream and a program of lane operations, in node order:
 *   SEG      a run of nodes executed by one item, back to back (host
 *            functions, copies, fills, records, resets, labels, switches);
 *   WAIT     an ordinary stream wait on another lane's operation (a
 *            dependency across lanes);
 *   EXTWAIT  an external wait node: a stream wait on the generation the
 *            event had when the graph was launched;
 *   ITEM     a node that may park, run as an item of its own: a delay, a
 *            value wait (and a value write: it wakes value waits);
 *   END      the last operation of the final lane: the launch is over.
 * A SEG ends where another lane waits on it, and after a record node (the
 * record's generation is the end of its SEG).  The final lane waits on the
 * last operation of every other lane before its END, so "END done" means
 * "the launch is done".
 *
 * Launch (host, O(1) in the number of nodes).  evrt_graph_launch numbers
 * the launch n, publishes the generations of the record nodes and binds the
 * external waits and resets (O(event nodes)), and enqueues two items on
 * the launch stream: the GRAPH item, which first waits, as a stream wait
 * does, for the END of launch n - 1 (launches of one executable graph never
 * overlap, and are never reordered: the GRAPH item is not skipped by an
 * abort, it runs the lanes with their nodes skipped), and a wait for the
 * END of launch n.  Lanes receive items from launches only, in launch order,
 * and launch n puts exactly nops items on a lane, so every seq is known in
 * advance: operation k of launch n on lane L has seq e0[L] + n * nops[L] +
 * k + 1.  That is what lets the host publish a record node's generation
 * (lane stream, that seq) before the lanes have the items.
 *
 * Execution (workers).  When the launch stream reaches the GRAPH item, the
 * worker pushes each lane's operations onto its stream (O(operations),
 * not O(nodes)) and goes on.  Lanes run like any stream: waits park them
 * (rule 4), every node runs through the backend's run_item hook, as an ordinary
 * item would, with the lane stream and the SEG item's seq as the running
 * position, and traces show each node as a slice on its lane's track.
 * With EVRT_CHECK on, the lanes' items carry the launch stream's clock,
 * their waits across lanes and the launch's wait for its END hold
 * generations of the positions they wait for (src/check/model.c), and each
 * node begins and ends in the checker as an item does: a replayed graph's
 * accesses are checked like any other.
 *
 * Lifetime.  The handle holds one reference, every launch one more, given
 * back by its END; the last one frees the lanes (their streams are
 * destroyed: freed once drained) and the program.
 *
 * Locks: exec.lock (a mutex, leaf but for event locks taken inside it while
 * publishing record nodes: exec.lock -> event.lock -> stream.plock).
 * Workers take none of it: per-launch state (bindings, switch positions)
 * belongs to the one launch in flight.
 */
#include "graph.h"

#include <stdio.h>
#include <string.h>

enum { OP_SEG, OP_WAIT, OP_EXTWAIT, OP_ITEM, OP_END };
#define NONE UINT32_MAX

struct gop {
  uint8_t kind;
  uint32_t a, b; /* SEG: first position, count; WAIT: lane, op;
                    EXTWAIT, ITEM: node */
};

struct glane {
  struct evrt__stream *s;
  uint64_t e0; /* enq_seq of s at instantiation */
  struct gop *ops;
  uint32_t nops, capops;
  uint32_t *nodes; /* the nodes SEGs run, in lane order (positions) */
  uint32_t nnodes, capnodes;
  struct evrt__item **buf; /* a launch's items for this lane (nops) */
  uint32_t open;           /* instantiation: the SEG still growing, or NONE */
  uint32_t skip_to; /* the launch in flight: a switch's target, or NONE */
  /* instantiation: each op's vector clock (nlanes entries: how many ops of
   * every lane it follows), when nlanes <= CLOCK_LANES */
  uint32_t *clk;
  uint32_t capclk;
};

struct gbind {              /* an event node's binding for one launch */
  struct evrt__stream *src; /* wait: source; record, reset: non-NULL = on */
  uint64_t target, rec_no;
};

struct evrt__gexec {
  atomic_uint refs;
  pthread_mutex_t lock; /* launch numbering, record publishing */
  atomic_uint_least64_t launches;
  uint64_t id;
  struct evrt__gnode *nodes; /* the graph's, copied */
  uint32_t nnodes;
  uint64_t *labels;
  uint32_t *node_op;   /* the lane operation holding each node */
  uint32_t *node_pos;  /* position in its lane's node list */
  uint32_t *sw_target; /* per switch label slot: lane position */
  uint32_t *bind_of;   /* per node: its binding, or NONE */
  uint32_t *bind_node; /* per binding: its node */
  uint32_t nbinds;
  struct glane *lanes;
  uint32_t nlanes, final;
  struct gbind *cur; /* bindings of the launch in flight */
  bool skip;         /* the launch in flight was discarded (its nodes skip) */
};

static atomic_uint_least64_t next_exec_id;

static void exec_free(struct evrt__gexec *x) {
  for (uint32_t l = 0; l < x->nlanes; l++) {
    struct glane *ln = &x->lanes[l];
    if (ln->s)
      evrt_stream_destroy(evrt__stream_handle(ln->s));
    evrt__free(ln->ops);
    evrt__free(ln->nodes);
    evrt__free(ln->buf);
    evrt__free(ln->clk);
  }
  evrt__free(x->lanes);
  evrt__free(x->nodes);
  evrt__free(x->labels);
  evrt__free(x->node_op);
  evrt__free(x->node_pos);
  evrt__free(x->sw_target);
  evrt__free(x->bind_of);
  evrt__free(x->bind_node);
  pthread_mutex_destroy(&x->lock);
  evrt__free(x);
}

static void exec_ref(void *p) {
  /* relaxed: the caller holds a reference (the handle's) */
  atomic_fetch_add_explicit(&((struct evrt__gexec *)p)->refs, 1,
                            memory_order_relaxed);
}

void evrt__gexec_unref(struct evrt__gexec *x) {
  /* acq_rel: the last one sees every launch's accesses before freeing */
  if (atomic_fetch_sub_explicit(&x->refs, 1, memory_order_acq_rel) == 1)
    exec_free(x);
}

/* ------------------------------------------------------- instantiation */

/* Instantiation state of the lane programs: cur[i * L + j] is how many ops
 * of lane j the end of lane i follows (its vector clock). */
#define CLOCK_LANES 64
struct build {
  struct evrt__gexec *x;
  uint32_t L;
  uint32_t *cur;    /* L x L */
  uint32_t *dep_op; /* per lane, scratch: a node's latest dependency */
  bool clocks;      /* per-op clocks kept (L <= CLOCK_LANES) */
};

static uint32_t add_op(struct build *b, uint32_t l, uint8_t kind, uint32_t a,
                       uint32_t c) {
  struct glane *ln = &b->x->lanes[l];
  uint32_t L = b->L, k = ln->nops;
  if (!evrt__grow((void **)&ln->ops, &ln->capops, k + 1, sizeof *ln->ops))
    return NONE;
  b->cur[(size_t)l * L + l] = k + 1;
  if (b->clocks) {
    uint32_t cap = ln->capclk / L;
    if (!evrt__grow((void **)&ln->clk, &cap, k + 1, L * sizeof *ln->clk))
      return NONE;
    ln->capclk = cap * L;
    memcpy(ln->clk + (size_t)k * L, b->cur + (size_t)l * L,
           L * sizeof *ln->clk);
  }
  ln->ops[k] = (struct gop){kind, a, c};
  ln->nops++;
  return k;
}

/* Close lane ln's growing SEG: no node joins it any more. */
static inline void seal(struct glane *ln) { ln->open = NONE; }

/* Does op k of lane j follow op k2 of lane j2 (so that waiting on the
 * first makes a wait on the second redundant)? */
static bool implies(const struct build *b, uint32_t j, uint32_t k, uint32_t j2,
                    uint32_t k2) {
  return b->clocks && b->x->lanes[j].clk[(size_t)k * b->L + j2] > k2;
}

/* Lane me waits on op k of lane j: a WAIT op, and what it implies. */
static bool wait_on(struct build *b, uint32_t me, uint32_t j, uint32_t k) {
  uint32_t L = b->L, *cur = b->cur + (size_t)me * L;
  seal(&b->x->lanes[me]);
  if (b->clocks) {
    const uint32_t *c = b->x->lanes[j].clk + (size_t)k * L;
    for (uint32_t t = 0; t < L; t++)
      if (c[t] > cur[t])
        cur[t] = c[t];
  }
  if (cur[j] < k + 1)
    cur[j] = k + 1;
  return add_op(b, me, OP_WAIT, j, k) != NONE;
}

/* Build the lane programs from g (see the top of the file).  A dependency
 * on another lane becomes a WAIT unless the lane follows it already, or
 * another of the node's dependencies does (vector clocks): a fork/join
 * round waits once per branch, not once per pair of branches. */
static bool build_lanes(struct build *b, const struct evrt__graph *g) {
  struct evrt__gexec *x = b->x;
  uint32_t L = b->L;
  for (uint32_t i = 0; i < g->n; i++) {
    const struct evrt__gnode *n = &g->nodes[i];
    uint32_t me = n->lane;
    struct glane *ln = &x->lanes[me];
    uint32_t *dep_op = b->dep_op;
    for (uint32_t j = 0; j < L; j++)
      dep_op[j] = NONE;
    for (uint32_t d = 0; d < n->ndeps; d++) {
      uint32_t k = g->deps[n->dep0 + d];
      uint32_t j = g->nodes[k].lane;
      if (j == me)
        continue; /* stream order covers it */
      uint32_t op = x->node_op[k];
      if (dep_op[j] == NONE || op > dep_op[j])
        dep_op[j] = op;
    }
    for (uint32_t j = 0; j < L; j++) {
      if (dep_op[j] == NONE || b->cur[(size_t)me * L + j] > dep_op[j])
        continue; /* followed already */
      bool covered = false;
      for (uint32_t j2 = 0; j2 < L && !covered; j2++)
        covered = j2 != j && dep_op[j2] != NONE &&
                  implies(b, j2, dep_op[j2], j, dep_op[j]);
      if (covered)
        continue; /* another dependency's wait covers it */
      /* nothing may join the operation another lane waits on */
      if (x->lanes[j].open == dep_op[j])
        seal(&x->lanes[j]);
      if (!wait_on(b, me, j, dep_op[j]))
        return false;
    }
    uint32_t op;
    if (n->kind == EVRT__ITEM_DELAY || n->kind == EVRT__ITEM_WAIT ||
        n->kind == EVRT__ITEM_VALUE_WAIT || n->kind == EVRT__ITEM_VALUE_WRITE) {
      seal(ln);
      op = add_op(b, me, n->kind == EVRT__ITEM_WAIT ? OP_EXTWAIT : OP_ITEM, i,
                  0);
      if (op == NONE)
        return false;
      x->node_pos[i] = NONE;
    } else {
      if (ln->open == NONE &&
          (ln->open = add_op(b, me, OP_SEG, ln->nnodes, 0)) == NONE)
        return false;
      op = ln->open;
      if (!evrt__grow((void **)&ln->nodes, &ln->capnodes, ln->nnodes + 1,
                      sizeof *ln->nodes))
        return false;
      x->node_pos[i] = ln->nnodes;
      ln->nodes[ln->nnodes++] = i;
      ln->ops[op].b++;
      /* a record's generation ends with its SEG */
      if (n->kind == EVRT__ITEM_RECORD)
        seal(ln);
    }
    x->node_op[i] = op;
  }
  /* The final lane (the last node's) joins every other lane, then ends. */
  x->final = g->nodes[g->n - 1].lane;
  struct glane *fl = &x->lanes[x->final];
  seal(fl);
  for (uint32_t j = 0; j < L; j++) {
    struct glane *o = &x->lanes[j];
    if (j == x->final || o->nops == 0 ||
        b->cur[(size_t)x->final * L + j] >= o->nops)
      continue;
    if (!wait_on(b, x->final, j, o->nops - 1))
      return false;
  }
  return add_op(b, x->final, OP_END, 0, 0) != NONE;
}

/* Each switch's labels: the first such label after it on its lane. */
static evrt_status_t resolve_switches(struct evrt__gexec *x) {
  for (uint32_t i = 0; i < x->nnodes; i++) {
    const struct evrt__gnode *n = &x->nodes[i];
    if (n->kind != EVRT__GN_SWITCH)
      continue;
    const struct glane *ln = &x->lanes[n->lane];
    for (uint32_t k = 0; k < n->u.sw.count; k++) {
      uint64_t want = x->labels[n->u.sw.label0 + k];
      uint32_t p = x->node_pos[i] + 1;
      while (p < ln->nnodes &&
             !(x->nodes[ln->nodes[p]].kind == EVRT__GN_LABEL &&
               x->nodes[ln->nodes[p]].u.label.id == want))
        p++;
      if (p == ln->nnodes)
        return evrt__fail(EVRT_ERROR_INVALID_VALUE,
                          "switch node %u jumps to label %llu, which is not "
                          "set after it on the same stream",
                          i, (unsigned long long)want);
      x->sw_target[n->u.sw.label0 + k] = p;
    }
  }
  return EVRT_SUCCESS;
}

/* The lanes' streams, named for traces. */
static evrt_status_t make_streams(struct evrt__gexec *x,
                                  const struct evrt__graph *g) {
  for (uint32_t l = 0; l < x->nlanes; l++) {
    struct glane *ln = &x->lanes[l];
    if (ln->nops == 0)
      continue;
    if (!(ln->buf = evrt__malloc(ln->nops * sizeof *ln->buf)))
      return evrt__fail(EVRT_ERROR_OUT_OF_MEMORY, "cannot instantiate the "
                                                  "graph");
    evrt_status_t st = evrt__stream_new(g->lane_device[l], 0, false, &ln->s);
    if (st)
      return st;
    ln->e0 = atomic_load_explicit(&ln->s->enq_seq, memory_order_relaxed);
    char name[64];
    snprintf(name, sizeof name, "graph %llu lane %u", (unsigned long long)x->id,
             l);
    evrt_stream_set_name(evrt__stream_handle(ln->s), name);
  }
  return EVRT_SUCCESS;
}

static evrt_status_t instantiate(struct evrt__gexec *x,
                                 const struct evrt__graph *g) {
  uint32_t n = g->n, L = g->nlanes;
  x->nnodes = n;
  x->nlanes = L;
  x->nodes = evrt__malloc((n ? n : 1) * sizeof *x->nodes);
  x->labels = evrt__malloc((g->nlabels ? g->nlabels : 1) * sizeof *x->labels);
  x->sw_target = evrt__malloc((g->nlabels ? g->nlabels : 1) * sizeof(uint32_t));
  x->node_op = evrt__malloc((n ? n : 1) * sizeof(uint32_t));
  x->node_pos = evrt__malloc((n ? n : 1) * sizeof(uint32_t));
  x->bind_of = evrt__malloc((n ? n : 1) * sizeof(uint32_t));
  x->bind_node = evrt__malloc((n ? n : 1) * sizeof(uint32_t));
  x->lanes = evrt__calloc(L ? L : 1, sizeof *x->lanes);
  struct build b = {.x = x, .L = L, .clocks = L <= CLOCK_LANES};
  b.dep_op = evrt__malloc((L ? L : 1) * sizeof *b.dep_op);
  b.cur = evrt__calloc((size_t)(L ? L : 1) * (L ? L : 1), sizeof *b.cur);
  evrt_status_t st = EVRT_SUCCESS;
  if (!x->nodes || !x->labels || !x->sw_target || !x->node_op || !x->node_pos ||
      !x->bind_of || !x->bind_node || !x->lanes || !b.dep_op || !b.cur)
    st = evrt__fail(EVRT_ERROR_OUT_OF_MEMORY, "cannot instantiate the graph");
  if (st == EVRT_SUCCESS && n) {
    memcpy(x->nodes, g->nodes, n * sizeof *x->nodes);
    if (g->nlabels)
      memcpy(x->labels, g->labels, g->nlabels * sizeof *x->labels);
    for (uint32_t l = 0; l < L; l++)
      x->lanes[l].open = x->lanes[l].skip_to = NONE;
    for (uint32_t i = 0; i < n; i++) {
      uint8_t k = g->nodes[i].kind;
      x->bind_of[i] = NONE;
      if (k == EVRT__ITEM_RECORD || k == EVRT__ITEM_WAIT ||
          k == EVRT__ITEM_RESET) {
        x->bind_of[i] = x->nbinds;
        x->bind_node[x->nbinds++] = i;
      }
    }
    if (!build_lanes(&b, g))
      st = evrt__fail(EVRT_ERROR_OUT_OF_MEMORY, "cannot instantiate the graph");
    else if ((st = resolve_switches(x)) == EVRT_SUCCESS)
      st = make_streams(x, g);
  }
  evrt__free(b.dep_op);
  evrt__free(b.cur);
  for (uint32_t l = 0; l < L && x->lanes; l++) {
    evrt__free(x->lanes[l].clk); /* instantiation only */
    x->lanes[l].clk = NULL;
  }
  return st;
}

evrt_status_t evrt_graph_instantiate(evrt_graph_exec_t *exec,
                                     evrt_graph_t graph) {
  struct evrt__graph *g;
  evrt_status_t st = evrt__graph_get(graph, &g);
  if (st)
    return st;
  if (!exec) {
    evrt__graph_unref(g);
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "exec is NULL");
  }
  struct evrt__gexec *x = evrt__calloc(1, sizeof *x);
  if (!x) {
    evrt__graph_unref(g);
    return evrt__fail(EVRT_ERROR_OUT_OF_MEMORY, "cannot instantiate the graph");
  }
  atomic_init(&x->refs, 1);
  pthread_mutex_init(&x->lock, NULL);
  x->id = atomic_fetch_add_explicit(&next_exec_id, 1, memory_order_relaxed) + 1;
  st = instantiate(x, g);
  evrt__graph_unref(g);
  uintptr_t h = 0;
  if (st == EVRT_SUCCESS)
    st = evrt__shell_new(EVRT__SHELL_EXEC, x, &h);
  if (st) {
    exec_free(x);
    return st;
  }
  *exec = (evrt_graph_exec_t)h;
  return EVRT_SUCCESS;
}

evrt_status_t evrt_graph_exec_destroy(evrt_graph_exec_t h) {
  evrt_status_t st = evrt__ready();
  if (st)
    return st;
  struct evrt__gexec *x = evrt__shell_kill((uintptr_t)h, EVRT__SHELL_EXEC);
  if (!x)
    return evrt__fail(EVRT_ERROR_INVALID_HANDLE,
                      "executable graph %p is NULL, destroyed or not an "
                      "executable graph",
                      (void *)h);
  evrt__gexec_unref(x); /* the handle's; launches in flight keep theirs */
  return EVRT_SUCCESS;
}

/* --------------------------------------------------------------- launch */

/* The seq operation op of launch n gets on lane l. */
static inline uint64_t op_seq(const struct evrt__gexec *x, uint32_t l,
                              uint64_t n, uint32_t op) {
  const struct glane *ln = &x->lanes[l];
  return ln->e0 + n * ln->nops + op + 1;
}

/* A plain stream wait item for (src, target), not yet pushed. */
static void fill_wait(struct evrt__item *it, struct evrt__stream *src,
                      uint64_t target, uint64_t ev_id, uint64_t rec_no) {
  it->kind = EVRT__ITEM_WAIT;
  it->dep_kind = EVRT__DEP_STREAM;
  it->u.ev.src = src;
  it->u.ev.target = target;
  it->u.ev.wnext = NULL;
  atomic_init(&it->u.ev.unlinked, false);
  it->u.ev.ev = NULL;
  it->u.ev.ev_gen = 0;
  it->u.ev.ev_id = ev_id;
  it->u.ev.rec_no = rec_no;
  it->u.ev.ipc = NULL;
}

/* Exec lock held (when there are bindings): publish launch n's record
 * nodes, bind its waits and resets, in node order. */
static void bind_events(struct evrt__gexec *x, uint64_t n, struct gbind *b) {
  for (uint32_t k = 0; k < x->nbinds; k++) {
    uint32_t i = x->bind_node[k];
    const struct evrt__gnode *nd = &x->nodes[i];
    struct evrt__event *e = nd->u.ev.e;
    b[k] = (struct gbind){NULL, 0, 0};
    if (nd->kind == EVRT__ITEM_RECORD) {
      struct glane *ln = &x->lanes[nd->lane];
      uint64_t rec_no;
      if (evrt__event_publish(
              e, nd->u.ev.ev_gen, ln->s,
              atomic_load_explicit(&ln->s->device, memory_order_relaxed),
              op_seq(x, nd->lane, n, x->node_op[i]), true,
              &rec_no) == EVRT_SUCCESS)
        b[k] = (struct gbind){ln->s, 0, rec_no};
      else
        evrt_clear_last_error(); /* a destroyed event: the node does nothing */
      continue;
    }
    evrt__event_lock(e);
    if (evrt__obj_gen(&e->hdr) == nd->u.ev.ev_gen) {
      uintptr_t src = atomic_load_explicit(&e->src, memory_order_relaxed);
      uint64_t rec_no = atomic_load_explicit(&e->rec_no, memory_order_relaxed);
      if (nd->kind == EVRT__ITEM_RESET && rec_no)
        b[k] = (struct gbind){(struct evrt__stream *)1, 0, rec_no};
      else if (nd->kind == EVRT__ITEM_WAIT && src && !evrt__captured_src(src))
        b[k] = (struct gbind){
            (struct evrt__stream *)src,
            atomic_load_explicit(&e->target, memory_order_relaxed), rec_no};
    }
    evrt__event_unlock(e);
  }
}

evrt_status_t evrt_graph_launch(evrt_graph_exec_t h, evrt_stream_t sh) {
  evrt_status_t st = evrt__ready();
  if (st)
    return st;
  struct evrt__stream *s = NULL;
  if ((st = evrt__stream_arg(&sh, &s)))
    return st;
  /* The executable graph is checked before the capture: a bad handle is
   * refused without invalidating the stream's capture (a failing call
   * changes nothing). */
  struct evrt__gexec *x =
      evrt__shell_get((uintptr_t)h, EVRT__SHELL_EXEC, exec_ref);
  if (!x)
    return evrt__fail(EVRT_ERROR_INVALID_HANDLE,
                      "executable graph %p is NULL, destroyed or not an "
                      "executable graph",
                      (void *)h);
  if (EVRT_UNLIKELY(evrt__stream_capturing(s))) {
    /* (a graph inside a graph is not supported) */
    st = evrt__capture_stream_misuse(s, sh, "given a graph launch");
    if (st != EVRT_SUCCESS && st != EVRT_NOT_READY) {
      evrt__gexec_unref(x);
      return st; /* else the capture ended meanwhile */
    }
  }
  if (x->nnodes == 0) { /* nothing to run */
    evrt__gexec_unref(x);
    return EVRT_SUCCESS;
  }
  /* The stream stays this handle's until both items are linked (a destroy
   * racing the launch waits for the pin: docs/design.md section 2). */
  if (!evrt__stream_pin(s, sh)) {
    evrt__gexec_unref(x);
    return evrt__fail(EVRT_ERROR_INVALID_HANDLE,
                      "stream %p destroyed during the call", (void *)sh);
  }
  /* Everything that can fail first: a launch number, once taken, must be
   * launched (the next launch waits for it). */
  struct gbind *b = NULL;
  struct evrt__item *gi = evrt__item_new(s), *w1 = evrt__item_new(s);
  if (x->nbinds)
    b = evrt__malloc(x->nbinds * sizeof *b);
  if (!gi || !w1 || (x->nbinds && !b)) {
    if (gi)
      evrt__item_discard(s, gi);
    if (w1)
      evrt__item_discard(s, w1);
    evrt__free(b);
    evrt__stream_unpin(s);
    evrt__gexec_unref(x);
    return evrt__fail(EVRT_ERROR_OUT_OF_MEMORY, "cannot launch the graph");
  }
  uint64_t n;
  if (x->nbinds) {
    /* one at a time: the events' generations follow the launch order */
    pthread_mutex_lock(&x->lock);
    n = atomic_fetch_add_explicit(&x->launches, 1, memory_order_relaxed);
    bind_events(x, n, b);
    pthread_mutex_unlock(&x->lock);
  } else {
    n = atomic_fetch_add_explicit(&x->launches, 1, memory_order_relaxed);
  }
  struct evrt__stream *fs = x->lanes[x->final].s;
  uint32_t fend = x->lanes[x->final].nops - 1;
  /* The launch item waits for the previous launch's END (nothing to wait
   * for if it is done), then puts the lanes' items on them. */
  uint64_t prev_end = op_seq(x, x->final, n, 0) - 1;
  gi->kind = EVRT__ITEM_GRAPH;
  gi->u.graph.src = evrt__done(fs) < prev_end ? fs : NULL;
  gi->u.graph.target = prev_end;
  gi->u.graph.wnext = NULL;
  atomic_init(&gi->u.graph.unlinked, false);
  gi->u.graph.x = x; /* the launch's reference */
  gi->u.graph.binds = b;
  gi->u.graph.n = n;
  snprintf(gi->label, sizeof gi->label, "graph launch %llu",
           (unsigned long long)n);
  evrt__stream_push(s, gi);
  fill_wait(w1, fs, op_seq(x, x->final, n, fend), 0, 0);
  snprintf(w1->label, sizeof w1->label, "graph %llu running",
           (unsigned long long)x->id);
  evrt__stream_push(s, w1);
  evrt__stream_schedule(s); /* (push only links) */
  evrt__stream_unpin(s);
  return EVRT_SUCCESS;
}

/* ------------------------------------------------------------ workers */

/* Items for lane stream s.  Out of memory, the worker waits for memory (as
 * a delay does without timer memory): the launch was accepted, and the
 * lanes' seqs must come out as announced. */
static void lane_items(struct evrt__stream *s, struct evrt__item **v,
                       uint32_t n) {
  for (uint32_t k = 0; (k += evrt__items_new(s, v + k, n - k)) < n;)
    evrt__sleep_ns(1000000);
}

/* Has the launch's previous one ended?  Waits as run_wait (exec.c) does
 * for a stream wait: false (parked, on the waiter list of the final lane)
 * until it has.  The launch item is never skipped (failure.c): a later
 * launch must not overtake this one. */
static bool prev_ended(struct evrt__item *it) {
  struct evrt__stream *src = it->u.graph.src;
  if (!src)
    return true;
  bool ok = evrt__done(src) >= it->u.graph.target;
  if (!ok && it->phase == 0) {
    if (!evrt__backend->wait_register(it))
      return true; /* reached meanwhile */
    it->phase = 1;
    return false;
  }
  /* acquire: pairs with the notifier's release after unlinking */
  if (ok && it->phase == 1 &&
      !atomic_load_explicit(&it->u.graph.unlinked, memory_order_acquire))
    evrt__backend->wait_cancel(it);
  return ok;
}

bool evrt__graph_run_launch(struct evrt__stream *s, struct evrt__item *it) {
  struct evrt__gexec *x = it->u.graph.x;
  uint64_t n = it->u.graph.n;
  if (!prev_ended(it))
    return false;
  it->phase = 0;
  /* The previous launch has ended (its END is done): the lanes are ours. */
  x->cur = it->u.graph.binds;
  /* Discarded (evrt_stream_abort, or a failure in stop mode: the launch
   * item is not skipped, see prev_ended): the nodes skip, the records
   * still complete their generations, as skipped items' do. */
  x->skip =
      atomic_load_explicit(&s->abort_seq, memory_order_relaxed) >= it->seq ||
      atomic_load_explicit(&s->skipping, memory_order_relaxed);
  if (EVRT_UNLIKELY(evrt__check_on) && n)
    evrt__check_join_after(s, x->lanes[x->final].s, it->u.graph.target);
  /* A reference of this run's own while the lanes get their items: once
   * the last lane's chain is linked, the lanes can run to END, which gives
   * back the launch's reference, and an executable graph whose handle is
   * destroyed would then be freed, lane streams included, while this loop
   * still reads x and schedules the lane (ThreadSanitizer caught it in
   * test_capture).  The launch's reference keeps x alive until here. */
  exec_ref(x);
  for (uint32_t l = 0; l < x->nlanes; l++) {
    struct glane *ln = &x->lanes[l];
    if (!ln->nops)
      continue;
    ln->skip_to = NONE;
    lane_items(ln->s, ln->buf, ln->nops);
    for (uint32_t k = 0; k < ln->nops; k++) {
      const struct gop *op = &ln->ops[k];
      struct evrt__item *li = ln->buf[k];
      switch (op->kind) {
      case OP_WAIT:
        fill_wait(li, x->lanes[op->a].s, op_seq(x, op->a, n, op->b), 0, 0);
        break;
      case OP_EXTWAIT: {
        const struct gbind *b = &x->cur[x->bind_of[op->a]];
        const struct evrt__gnode *nd = &x->nodes[op->a];
        if (x->skip) { /* passes at once */
          fill_wait(li, NULL, 0, 0, 0);
          break;
        }
        fill_wait(li, b->src, b->target, nd->u.ev.ev_id, b->rec_no);
        if (EVRT_TRACING() && b->src)
          evrt__trace_wait_bind(ln->s->device, ln->s->id, nd->u.ev.ev_id,
                                b->rec_no, evrt__now_ns());
        break;
      }
      case OP_ITEM: {
        const struct evrt__gnode *nd = &x->nodes[op->a];
        li->kind = x->skip ? EVRT__ITEM_DELAY : nd->kind;
        if (x->skip) {
          li->u.delay.ns = 0;
        } else if (nd->kind == EVRT__ITEM_DELAY) {
          li->u.delay.ns = nd->u.delay.ns;
        } else {
          li->u.val.addr = nd->u.val.addr;
          li->u.val.value = nd->u.val.value;
          li->u.val.flags = nd->u.val.flags;
          li->u.val.vnext = NULL;
          li->u.val.poll_ns = 0;
        }
        memcpy(li->label, nd->label, sizeof li->label);
        break;
      }
      default: /* OP_SEG, OP_END */
        li->kind = EVRT__ITEM_GRAPH_SEG;
        li->u.graph.x = x;
        li->u.graph.binds = NULL;
        li->u.graph.n = n;
        li->u.graph.lane = l;
        li->u.graph.op = k;
        break;
      }
      li->check = EVRT_UNLIKELY(evrt__check_on)
                      ? evrt__check_enqueue_by(s, ln->s, li)
                      : NULL;
    }
    uint64_t seq = evrt__stream_push_chain(ln->s, ln->buf, ln->nops);
    (void)seq;
#ifndef NDEBUG
    if (seq != op_seq(x, l, n, 0))
      __builtin_trap(); /* the lanes' seqs are the launch protocol */
#endif
  }
  evrt__gexec_unref(x); /* may free x (and destroy its lanes) here */
  return true;
}

/* One node of a run, through the worker's own item execution. */
static void run_node(struct evrt__gexec *x, struct evrt__stream *s,
                     const struct evrt__item *seg, uint32_t i) {
  uint64_t seq = seg->seq;
  const struct evrt__gnode *nd = &x->nodes[i];
  /* Only what run_item reads of these kinds is filled: clearing
   * the whole item (rep stos) was most of a node's cost. */
  struct evrt__item t;
  t.kind = nd->kind;
  t.phase = 0;
  t.owner = s;
  t.seq = seq;
  t.check = EVRT_UNLIKELY(evrt__check_on)
                ? evrt__check_node(nd->site, seg->check)
                : NULL;
  switch (nd->kind) {
  case EVRT__ITEM_HOST_FUNC:
    t.u.host.fn = nd->u.host.fn;
    t.u.host.user = nd->u.host.user;
    break;
  case EVRT__ITEM_MEMCPY:
  case EVRT__ITEM_MEMSET:
    t.u.mem.dst = nd->u.mem.dst;
    t.u.mem.src = nd->u.mem.src;
    t.u.mem.n = nd->u.mem.n;
    t.u.mem.value = nd->u.mem.value;
    break;
  default: { /* EVRT__ITEM_RECORD, EVRT__ITEM_RESET */
    const struct gbind *b = &x->cur[x->bind_of[i]];
    if (!b->src)
      return; /* its event was destroyed, or (reset) never recorded */
    t.u.ev.ev = nd->u.ev.e;
    t.u.ev.ev_gen = nd->u.ev.ev_gen;
    t.u.ev.ev_id = nd->u.ev.ev_id;
    t.u.ev.rec_no = b->rec_no;
    t.u.ev.ipc = NULL;
    break;
  }
  }
  uint64_t t0 = EVRT_TRACING() ? evrt__now_ns() : 0;
  evrt__backend->run_item(s, &t);
  /* The checker saw it begin (its accesses, in the run's position): end it
   * too, as the worker ends an item (a host function's context; frees its
   * record). */
  if (EVRT_UNLIKELY(evrt__check_on))
    evrt__check_item_end(s, &t);
  if (t0)
    evrt__trace_item(s->device, s->id, nd->kind, nd->label, t0, evrt__now_ns(),
                     EVRT__ITEM_IS_EVENT(nd->kind) ? nd->u.ev.ev_id : 0,
                     EVRT__ITEM_IS_EVENT(nd->kind) ? t.u.ev.rec_no : 0);
}

bool evrt__graph_run_seg(struct evrt__stream *s, struct evrt__item *it) {
  struct evrt__gexec *x = it->u.graph.x;
  struct glane *ln = &x->lanes[it->u.graph.lane];
  const struct gop *op = &ln->ops[it->u.graph.op];
  if (op->kind == OP_END) {
    /* Every lane is done: the launch's state goes, and its reference. */
    evrt__free(x->cur);
    x->cur = NULL;
    evrt__gexec_unref(x);
    return true;
  }
  for (uint32_t p = op->a; p < op->a + op->b; p++) {
    uint32_t i = ln->nodes[p];
    const struct evrt__gnode *nd = &x->nodes[i];
    if (ln->skip_to != NONE) {
      if (p != ln->skip_to)
        continue; /* jumped over by a switch */
      ln->skip_to = NONE;
    }
    if (nd->kind == EVRT__GN_LABEL)
      continue;
    if (x->skip && nd->kind != EVRT__ITEM_RECORD && nd->kind != EVRT__ITEM_RESET)
      continue; /* a discarded launch: its records still complete */
    if (nd->kind == EVRT__GN_SWITCH) {
      /* read when the graph runs: the index is device data */
      uint32_t v = *nd->u.sw.index;
      if (v >= nd->u.sw.count)
        v = nd->u.sw.count - 1; /* past the end: the last label (CANN) */
      ln->skip_to = x->sw_target[nd->u.sw.label0 + v];
      continue;
    }
    run_node(x, s, it, i);
  }
  return true;
}
