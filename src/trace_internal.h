/*
 * trace_internal.h - what the trace recorder (trace_rec.c) and the JSON
 * writer (trace_json.c) share: the recorded entry and the stream-name
 * table.
 */
#ifndef EVRT_TRACE_INTERNAL_H
#define EVRT_TRACE_INTERNAL_H

#include "internal.h"


enum {
  EVRT__TE_ITEM = 0,
  EVRT__TE_RECORD,
  EVRT__TE_BIND,
  EVRT__TE_RESUME,
  EVRT__TE_HOST_WAIT,
  EVRT__TE_MARK /* EVRT_CHECK: an operation of a finding */
};
#define EVRT__TRACE_LABEL_MAX 28

struct evrt__trace_entry {
  uint64_t t0, t1;     /* t1 = t0 for points */
  uint64_t stream;     /* stream id; host wait: id of the awaited object */
  uint64_t event, gen; /* host wait: gen = evrt_thread_id() of the waiter */
  int32_t device;
  uint32_t aux; /* writer only: position in the sorted slice array */
  uint8_t type, kind, synthetic;
  char label[EVRT__TRACE_LABEL_MAX + 1];
};

/* Stream id -> (device, name), an open-addressing table kept across
 * sessions so that a name set in an earlier session still names the track
 * (trace_rec.c).  An entry lives as long as its stream: destroy removes it,
 * or, while a session records, retires it (the file being written still
 * names the stream's track) and the session's end removes it.  Everything
 * here is under evrt__trace_names_lock. */
struct evrt__trace_name {
  uint64_t id; /* 0 = empty */
  uint64_t session;
  int device;
  bool retired; /* its stream is destroyed: removed when the session ends */
  char name[64];
};
extern pthread_mutex_t evrt__trace_names_lock;
extern struct evrt__trace_name *evrt__trace_names;
extern size_t evrt__trace_names_cap, evrt__trace_names_used;
extern uint64_t evrt__trace_session_no; /* written under ctl_lock too */
/* The slot of id, or the empty slot where it would go (names_cap > 0). */
struct evrt__trace_name *evrt__trace_name_find(uint64_t id);

/* trace_json.c: write the entries of a session that started at `base` to
 * fd as the Chrome trace-event JSON file (docs/trace.md), with write(2).
 * The entries are sorted and adjusted in place.  0, ENOMEM (out of memory:
 * the file is partial) or the errno of a failed write.  Called under the
 * trace's ctl_lock (one writer at a time). */
int evrt__trace_write_json(int fd, uint64_t base, struct evrt__trace_entry *all,
                           size_t n, uint64_t dropped);

#endif
