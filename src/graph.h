/*
 * graph.h - graphs made by stream capture, and their executable form, shared
 * by src/capture.c (builds graphs), src/graph.c (graph objects and handles)
 * and src/graph_exec.c (instantiation and replay).  docs/capture.md says
 * what they do; this says how they are kept.
 *
 * A graph is an array of nodes in capture order.  Every node's dependencies
 * come before it, so capture order is a topological order.  Each node also
 * names its lane: the index of the stream it was captured on (the capture's
 * member index).  Nodes captured on one stream depend on the one before them
 * on that stream (stream order), so a lane is a chain.
 */
#ifndef EVRT_GRAPH_H
#define EVRT_GRAPH_H

#include "internal.h"

/* Node kinds: the item kinds a node becomes, plus the two of control flow. */
enum {
  EVRT__GN_LABEL = EVRT__ITEM_KIND_COUNT, /* a place a switch may jump to */
  EVRT__GN_SWITCH                         /* jump to one of its labels */
};

struct evrt__gnode {
  uint8_t kind;   /* enum evrt__item_kind or EVRT__GN_* */
  uint32_t lane;  /* stream it was captured on (member index) */
  uint32_t ndeps; /* its dependencies: graph->deps[dep0 .. dep0+ndeps) */
  uint32_t dep0;
  union {
    struct {
      evrt_host_fn fn;
      void *user;
    } host;
    struct {
      void *dst;
      const void *src;
      size_t n;
      int value;
    } mem;
    struct {
      uint64_t ns;
    } delay;
    struct { /* stream-ordered value wait or write (src/value.c) */
      _Atomic(uint64_t) *addr;
      uint64_t value;
      uint32_t flags;
    } val;
    struct { /* external record, external wait, reset */
      struct evrt__event *e;
      uint32_t ev_gen; /* the event's incarnation at capture */
      uint64_t ev_id;
    } ev;
    struct {
      uint64_t id;
    } label;
    struct { /* labels: graph->labels[label0 .. label0+count) */
      const uint32_t *index;
      uint32_t count, label0;
    } sw;
  } u;
  char label[24]; /* trace label (host functions) */
  uint32_t site;  /* EVRT_CHECK: where it was captured (reports) */
};

struct evrt__graph {
  atomic_uint refs; /* the handle's + one per user of the moment */
  uint64_t id;      /* process-unique (dot output, traces) */
  struct evrt__gnode *nodes;
  uint32_t n, cap;
  uint32_t *deps; /* every node's dependency list, back to back */
  uint32_t ndeps, capdeps;
  uint64_t *labels; /* switch nodes' label ids, back to back */
  uint32_t nlabels, caplabels;
  uint32_t nlanes;
  int *lane_device;      /* device of each lane's captured stream */
  uint64_t *lane_stream; /* id of each lane's captured stream (dot) */
};

/* src/graph.c */
/* Grow *arr (elements of size sz, capacity *cap) to hold need elements;
 * false (nothing changed) when out of memory. */
bool evrt__grow(void **arr, uint32_t *cap, uint32_t need, size_t sz);
struct evrt__graph *evrt__graph_new(void);
void evrt__graph_unref(struct evrt__graph *g);
/* Room for one more lane (its device, stream id); false: no memory. */
bool evrt__graph_add_lane(struct evrt__graph *g, int device, uint64_t stream);
/* Append a node with the given dependencies; returns its index, or
 * UINT32_MAX when out of memory (nothing added). */
uint32_t evrt__graph_add_node(struct evrt__graph *g,
                              const struct evrt__gnode *tmpl,
                              const uint32_t *deps, uint32_t ndeps,
                              const uint64_t *labels, uint32_t nlabels);
/* A new handle for graph g (the handle owns one reference). */
evrt_status_t evrt__graph_handle(struct evrt__graph *g, evrt_graph_t *out);
/* The graph behind a handle with a reference taken, or an error. */
evrt_status_t evrt__graph_get(evrt_graph_t h, struct evrt__graph **out);

/* Handles of graphs and executable graphs (src/graph.c): a shell slot in the
 * tag-3 table holds the object; lookups take a reference under the shell's
 * spin lock, so a destroy racing them cannot free the object under them. */
enum { EVRT__SHELL_GRAPH = 1, EVRT__SHELL_EXEC };
evrt_status_t evrt__shell_new(int kind, void *obj, uintptr_t *h);
/* The object of a live handle of this kind, its reference count raised
 * with `ref` (called under the shell's spin lock), or NULL. */
void *evrt__shell_get(uintptr_t h, int kind, void (*ref)(void *));
/* Kill a live handle of this kind: its object, or NULL if the handle was
 * not live (of racing kills exactly one gets the object). */
void *evrt__shell_kill(uintptr_t h, int kind);

/* src/graph_exec.c */
struct evrt__gexec;
void evrt__gexec_unref(struct evrt__gexec *x);

#endif
