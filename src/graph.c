/*
 * graph.c - graph objects (what a capture made), the handles of graphs and
 * executable graphs, and the graph calls that need no execution: destroy,
 * node count, Graphviz output.
 *
 * Locks: a shell's spin lock (leaf; held for a compare and an increment,
 * nothing else).  A graph is immutable once its capture ended: readers
 * hold a reference, no lock.
 */
#include "graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ handles */

struct evrt__shell {
  struct evrt__obj hdr;
  evrt__spin_t lock; /* validation + reference vs. kill */
  int kind;
  void *obj;
};

static struct evrt__table shells;
static pthread_once_t shells_once = PTHREAD_ONCE_INIT;
static void shells_init(void) {
  evrt__table_init(&shells, sizeof(struct evrt__shell), EVRT__TAG_GRAPH, NULL);
}

evrt_status_t evrt__shell_new(int kind, void *obj, uintptr_t *h) {
  pthread_once(&shells_once, shells_init);
  struct evrt__obj *o;
  evrt_status_t st = evrt__table_alloc(&shells, &o);
  if (st)
    return st;
  struct evrt__shell *sh = (struct evrt__shell *)o;
  sh->kind = kind;
  sh->obj = obj;
  /* keyed per process, as stream and event handles (handle.c) */
  *h = evrt__pub(evrt__table_publish(&sh->hdr));
  return EVRT_SUCCESS;
}

static struct evrt__shell *shell_at(uint64_t r) {
  /* A table never initialized has no chunk: every lookup misses. */
  return (struct evrt__shell *)evrt__table_slot(
      &shells, r, EVRT__SLOT_SIZE(struct evrt__shell));
}

/* The object of the live handle h of this kind, under the shell's lock:
 * with `ref` its reference count is raised, with `kill` the handle dies
 * and the slot goes back to the table. */
static void *shell_take(uintptr_t h, int kind, void (*ref)(void *), bool kill) {
  uint64_t r = evrt__raw(h);
  struct evrt__shell *sh = shell_at(r);
  if (!sh || (r & 3u) != EVRT__TAG_GRAPH)
    return NULL;
  void *obj = NULL;
  evrt__spin_lock(&sh->lock);
  /* acquire: pairs with the publish (release) of the slot, so a live
   * handle's kind and object are seen; a kill is ordered by the lock */
  if (atomic_load_explicit(&sh->hdr.hw, memory_order_acquire) == r &&
      sh->kind == kind) {
    obj = sh->obj;
    if (ref)
      ref(obj);
    if (kill) {
      sh->obj = NULL;
      evrt__table_kill(&sh->hdr);
    }
  }
  evrt__spin_unlock(&sh->lock);
  if (obj && kill)
    evrt__table_release(&shells, &sh->hdr);
  return obj;
}

void *evrt__shell_get(uintptr_t h, int kind, void (*ref)(void *)) {
  return shell_take(h, kind, ref, false);
}

void *evrt__shell_kill(uintptr_t h, int kind) {
  return shell_take(h, kind, NULL, true);
}

/* ------------------------------------------------------------- graphs */

static atomic_uint_least64_t next_graph_id;

struct evrt__graph *evrt__graph_new(void) {
  struct evrt__graph *g = evrt__calloc(1, sizeof *g);
  if (!g)
    return NULL;
  atomic_init(&g->refs, 1);
  g->id =
      atomic_fetch_add_explicit(&next_graph_id, 1, memory_order_relaxed) + 1;
  return g;
}

static void graph_ref(void *p) {
  /* relaxed: the caller holds a reference already (the handle's) */
  atomic_fetch_add_explicit(&((struct evrt__graph *)p)->refs, 1,
                            memory_order_relaxed);
}

void evrt__graph_unref(struct evrt__graph *g) {
  /* acq_rel: the last one sees every other user's accesses before freeing */
  if (!g || atomic_fetch_sub_explicit(&g->refs, 1, memory_order_acq_rel) != 1)
    return;
  evrt__free(g->nodes);
  evrt__free(g->deps);
  evrt__free(g->labels);
  evrt__free(g->lane_device);
  evrt__free(g->lane_stream);
  evrt__free(g);
}

bool evrt__grow(void **arr, uint32_t *cap, uint32_t need, size_t sz) {
  if (need <= *cap)
    return true;
  uint64_t c = *cap ? (uint64_t)*cap * 2 : 8;
  while (c < need)
    c *= 2;
  if (c > UINT32_MAX / 2)
    return false;
  void *n = evrt__malloc(c * sz);
  if (!n)
    return false;
  if (*cap)
    memcpy(n, *arr, (size_t)*cap * sz);
  evrt__free(*arr);
  *arr = n;
  *cap = (uint32_t)c;
  return true;
}

bool evrt__graph_add_lane(struct evrt__graph *g, int device, uint64_t stream) {
  int *d = evrt__malloc((g->nlanes + 1) * sizeof *d);
  uint64_t *s = evrt__malloc((g->nlanes + 1) * sizeof *s);
  if (!d || !s) {
    evrt__free(d);
    evrt__free(s);
    return false;
  }
  if (g->nlanes) {
    memcpy(d, g->lane_device, g->nlanes * sizeof *d);
    memcpy(s, g->lane_stream, g->nlanes * sizeof *s);
  }
  evrt__free(g->lane_device);
  evrt__free(g->lane_stream);
  d[g->nlanes] = device;
  s[g->nlanes] = stream;
  g->lane_device = d;
  g->lane_stream = s;
  g->nlanes++;
  return true;
}

uint32_t evrt__graph_add_node(struct evrt__graph *g,
                              const struct evrt__gnode *tmpl,
                              const uint32_t *deps, uint32_t ndeps,
                              const uint64_t *labels, uint32_t nlabels) {
  if (g->n == UINT32_MAX - 1 ||
      !evrt__grow((void **)&g->nodes, &g->cap, g->n + 1, sizeof *g->nodes) ||
      g->ndeps > UINT32_MAX - 1 - ndeps ||
      !evrt__grow((void **)&g->deps, &g->capdeps, g->ndeps + ndeps,
                  sizeof *g->deps) ||
      g->nlabels > UINT32_MAX - 1 - nlabels ||
      !evrt__grow((void **)&g->labels, &g->caplabels, g->nlabels + nlabels,
                  sizeof *g->labels))
    return UINT32_MAX;
  struct evrt__gnode *n = &g->nodes[g->n];
  *n = *tmpl;
  n->ndeps = ndeps;
  n->dep0 = g->ndeps;
  if (ndeps)
    memcpy(g->deps + g->ndeps, deps, ndeps * sizeof *deps);
  g->ndeps += ndeps;
  if (n->kind == EVRT__GN_SWITCH) {
    n->u.sw.label0 = g->nlabels;
    n->u.sw.count = nlabels;
    memcpy(g->labels + g->nlabels, labels, nlabels * sizeof *labels);
    g->nlabels += nlabels;
  }
  return g->n++;
}

evrt_status_t evrt__graph_handle(struct evrt__graph *g, evrt_graph_t *out) {
  uintptr_t h;
  evrt_status_t st = evrt__shell_new(EVRT__SHELL_GRAPH, g, &h);
  if (st == EVRT_SUCCESS)
    *out = (evrt_graph_t)h;
  return st;
}

evrt_status_t evrt__graph_get(evrt_graph_t h, struct evrt__graph **out) {
  evrt_status_t st = evrt__ready();
  if (st)
    return st;
  struct evrt__graph *g =
      evrt__shell_get((uintptr_t)h, EVRT__SHELL_GRAPH, graph_ref);
  if (!g)
    return evrt__fail(EVRT_ERROR_INVALID_HANDLE,
                      "graph %p is NULL, destroyed or not a graph", (void *)h);
  *out = g;
  return EVRT_SUCCESS;
}

evrt_status_t evrt_graph_destroy(evrt_graph_t h) {
  evrt_status_t st = evrt__ready();
  if (st)
    return st;
  struct evrt__graph *g = evrt__shell_kill((uintptr_t)h, EVRT__SHELL_GRAPH);
  if (!g)
    return evrt__fail(EVRT_ERROR_INVALID_HANDLE,
                      "graph %p is NULL, destroyed or not a graph", (void *)h);
  evrt__graph_unref(g);
  return EVRT_SUCCESS;
}

evrt_status_t evrt_graph_node_count(evrt_graph_t h, size_t *count) {
  struct evrt__graph *g = NULL;
  evrt_status_t st = evrt__graph_get(h, &g);
  if (st)
    return st;
  if (!count)
    st = evrt__fail(EVRT_ERROR_INVALID_VALUE, "count is NULL");
  else
    *count = g->n;
  evrt__graph_unref(g);
  return st;
}

evrt_status_t evrt_graph_lane_count(evrt_graph_t h, uint32_t *count) {
  struct evrt__graph *g = NULL;
  evrt_status_t st = evrt__graph_get(h, &g);
  if (st)
    return st;
  if (!count)
    st = evrt__fail(EVRT_ERROR_INVALID_VALUE, "count is NULL");
  else
    *count = g->nlanes;
  evrt__graph_unref(g);
  return st;
}

/* The public type of a node kind (evrt.h's evrt_graph_node_type_t).  A
 * failing host function is a host function to the caller; graph items are
 * never nodes (a launch captured into another capture is refused). */
static evrt_graph_node_type_t node_type(uint8_t kind) {
  switch (kind) {
  case EVRT__ITEM_MEMCPY:
    return EVRT_GRAPH_NODE_MEMCPY;
  case EVRT__ITEM_MEMSET:
    return EVRT_GRAPH_NODE_MEMSET;
  case EVRT__ITEM_DELAY:
    return EVRT_GRAPH_NODE_DELAY;
  case EVRT__ITEM_RECORD:
    return EVRT_GRAPH_NODE_EVENT_RECORD;
  case EVRT__ITEM_WAIT:
    return EVRT_GRAPH_NODE_EVENT_WAIT;
  case EVRT__ITEM_RESET:
    return EVRT_GRAPH_NODE_EVENT_RESET;
  case EVRT__ITEM_VALUE_WAIT:
    return EVRT_GRAPH_NODE_VALUE_WAIT;
  case EVRT__ITEM_VALUE_WRITE:
    return EVRT_GRAPH_NODE_VALUE_WRITE;
  case EVRT__GN_LABEL:
    return EVRT_GRAPH_NODE_LABEL;
  case EVRT__GN_SWITCH:
    return EVRT_GRAPH_NODE_SWITCH;
  default: /* EVRT__ITEM_HOST_FUNC, EVRT__ITEM_HOST_TASK */
    return EVRT_GRAPH_NODE_HOST_FUNC;
  }
}

evrt_status_t evrt_graph_node_get(evrt_graph_t h, size_t index,
                                  evrt_graph_node_type_t *type,
                                  uint32_t *lane) {
  struct evrt__graph *g = NULL;
  evrt_status_t st = evrt__graph_get(h, &g);
  if (st)
    return st;
  if (index >= g->n) {
    st = evrt__fail(EVRT_ERROR_INVALID_VALUE,
                    "node %zu of a graph of %u nodes", index, g->n);
  } else {
    /* nodes are never changed after the capture ended: no lock needed */
    if (type)
      *type = node_type(g->nodes[index].kind);
    if (lane)
      *lane = g->nodes[index].lane;
  }
  evrt__graph_unref(g);
  return st;
}

/* ----------------------------------------------------------- Graphviz */

/* Graphviz quoted string: only " and \ need escaping. */
static void put_quoted(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"' || *s == '\\')
      fputc('\\', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

static void node_text(const struct evrt__graph *g, const struct evrt__gnode *n,
                      char *buf, size_t cap) {
  switch (n->kind) {
  case EVRT__ITEM_HOST_FUNC:
    snprintf(buf, cap, "%s\\nhost function", n->label[0] ? n->label : "");
    break;
  case EVRT__ITEM_MEMCPY:
    snprintf(buf, cap, "memcpy\\n%zu bytes", n->u.mem.n);
    break;
  case EVRT__ITEM_MEMSET:
    snprintf(buf, cap, "memset %d\\n%zu bytes", n->u.mem.value, n->u.mem.n);
    break;
  case EVRT__ITEM_DELAY:
    snprintf(buf, cap, "delay\\n%llu ns", (unsigned long long)n->u.delay.ns);
    break;
  case EVRT__ITEM_VALUE_WAIT:
    snprintf(buf, cap, "wait value\\n%p flags 0x%x value %llu",
             (void *)n->u.val.addr, n->u.val.flags,
             (unsigned long long)n->u.val.value);
    break;
  case EVRT__ITEM_VALUE_WRITE:
    snprintf(buf, cap, "write value\\n%p = %llu", (void *)n->u.val.addr,
             (unsigned long long)n->u.val.value);
    break;
  case EVRT__ITEM_RECORD:
    snprintf(buf, cap, "record event %llu\\n(external)",
             (unsigned long long)n->u.ev.ev_id);
    break;
  case EVRT__ITEM_WAIT:
    snprintf(buf, cap, "wait event %llu\\n(external)",
             (unsigned long long)n->u.ev.ev_id);
    break;
  case EVRT__ITEM_RESET:
    snprintf(buf, cap, "reset event %llu", (unsigned long long)n->u.ev.ev_id);
    break;
  case EVRT__GN_LABEL:
    snprintf(buf, cap, "label %llu", (unsigned long long)n->u.label.id);
    break;
  case EVRT__GN_SWITCH: {
    int k = snprintf(buf, cap, "switch by index\\nlabels");
    for (uint32_t i = 0; i < n->u.sw.count && k > 0 && (size_t)k < cap; i++)
      k += snprintf(buf + k, cap - (size_t)k, " %llu",
                    (unsigned long long)g->labels[n->u.sw.label0 + i]);
    break;
  }
  default:
    snprintf(buf, cap, "node");
  }
}

static const char *node_shape(int kind) {
  switch (kind) {
  case EVRT__ITEM_HOST_FUNC:
    return "box";
  case EVRT__ITEM_MEMCPY:
  case EVRT__ITEM_MEMSET:
    return "box3d";
  case EVRT__ITEM_RECORD:
  case EVRT__ITEM_WAIT:
  case EVRT__ITEM_RESET:
    return "ellipse";
  case EVRT__GN_SWITCH:
    return "diamond";
  default:
    return "octagon";
  }
}

static bool write_dot(FILE *f, const struct evrt__graph *g) {
  fprintf(f,
          "digraph \"evrt graph %llu\" {\n  rankdir=TB;\n"
          "  node [fontname=\"Helvetica\",fontsize=10];\n",
          (unsigned long long)g->id);
  char text[256];
  for (uint32_t l = 0; l < g->nlanes; l++) {
    fprintf(f,
            "  subgraph cluster_%u {\n    label=\"stream %llu (device %d)\";\n"
            "    style=rounded;\n",
            l, (unsigned long long)g->lane_stream[l], g->lane_device[l]);
    for (uint32_t i = 0; i < g->n; i++) {
      const struct evrt__gnode *n = &g->nodes[i];
      if (n->lane != l)
        continue;
      node_text(g, n, text, sizeof text);
      fprintf(f, "    n%u [shape=%s,label=", i, node_shape(n->kind));
      put_quoted(f, text);
      fputs("];\n", f);
    }
    fputs("  }\n", f);
  }
  for (uint32_t i = 0; i < g->n; i++)
    for (uint32_t d = 0; d < g->nodes[i].ndeps; d++)
      fprintf(f, "  n%u -> n%u;\n", g->deps[g->nodes[i].dep0 + d], i);
  fputs("}\n", f);
  return !ferror(f);
}

evrt_status_t evrt_graph_debug_dot_print(evrt_graph_t h, const char *path) {
  struct evrt__graph *g = NULL;
  evrt_status_t st = evrt__graph_get(h, &g);
  if (st)
    return st;
  if (!path) {
    evrt__graph_unref(g);
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "path is NULL");
  }
  FILE *f = fopen(path, "w");
  if (!f) {
    evrt__graph_unref(g);
    return evrt__fail(EVRT_ERROR_SYSTEM, "cannot open %s for writing", path);
  }
  bool ok = write_dot(f, g);
  ok = fclose(f) == 0 && ok;
  evrt__graph_unref(g);
  if (!ok)
    return evrt__fail(EVRT_ERROR_SYSTEM, "cannot write %s", path);
  return EVRT_SUCCESS;
}
