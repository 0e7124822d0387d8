/*
 * acl_internal.h - shared state of the ACL compatibility layer.
 *
 * The layer talks only to the public evrt API (include/evrt.h).  aclrtStream
 * values are evrt_stream_t handles and aclrtEvent values evrt_event_t
 * handles, so evrt validates them (destroyed or forged -> 107017).  The ACL
 * metadata evrt does not keep (event generation, ACL flags, sticky record and
 * wait flags, stream context, callback subscription) lives in side tables
 * keyed by the evrt object id, which is never reused.
 *
 * Internal names of this layer start with acl__ (ACL__ for macros), never
 * evrt__: the layer sees evrt only through include/evrt.h.
 *
 * Lock order: acl__lock (the layer's one global mutex) -> a report
 * queue's mutex.  No evrt call that can block is made under acl__lock
 * except stream and event creation and destruction, which do not block.
 */
#ifndef EVRT_ACL_INTERNAL_H
#define EVRT_ACL_INTERNAL_H

#include <acl/acl.h>
#include <evrt.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define ACL__MAX_DEVICES 64
/* Streams per device including default streams (doc: 1984 on A2/A3). */
#define ACL__STREAM_LIMIT 1984u
/* ACL's internal default flag of aclrtCreateEvent (DDSYNC|TIME_LINE|MARK). */
#define ACL__EVENT_DEFAULT_FLAG 0x0Eu
#define ACL__EVENT_DDSYNC 0x04u

extern pthread_mutex_t acl__lock;

/* ------------------------------------------------------------ errors */
/* Record code + formatted message for aclGetRecentErrMsg/GetLastError and
 * return code. */
aclError acl__fail(aclError code, const char *fn, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Map an evrt failure status to its ACL code (the one table), record it
 * with evrt's detail message, and return it. */
aclError acl__st(evrt_status_t st, const char *fn);
/* Same, but status `special` maps to `code` instead of the table's value. */
aclError acl__st2(evrt_status_t st, evrt_status_t special, aclError code,
                       const char *fn);
aclError acl__code_of(evrt_status_t st);

/* ----------------------------------------------------- id -> value map */
struct acl__map;
void *acl__map_get(struct acl__map **m, uint64_t key);
int acl__map_put(struct acl__map **m, uint64_t key, void *value);
void *acl__map_del(struct acl__map **m, uint64_t key);
/* Visit every value; fn may not modify the map. */
void acl__map_each(struct acl__map *m, void (*fn)(uint64_t, void *, void *),
                        void *arg);

/* ---------------------------------------------------------- contexts */
struct acl__ctx {
  uint32_t magic;
  int device;
  bool is_default;
  bool alive; /* under acl__lock */
  evrt_stream_t def_stream;
  struct acl__ctx *next; /* every context ever made; never freed, so a
                                 stale thread-local pointer is safe to test */
};

/* Current context of the thread, or 107002 with a message. Caller holds no
 * lock. */
aclError acl__current(const char *fn, struct acl__ctx **ctx);

/* ----------------------------------------------------------- streams */
struct acl__report_queue;
struct acl__stream {
  struct acl__ctx *ctx;
  evrt_stream_t handle;
  uint32_t flags, priority;
  uint64_t failure_mode;
  uint64_t seen_wait_failures;
  struct acl__report_queue *sub; /* subscribed report thread or NULL */
  bool is_default;
};
extern struct acl__map *acl__streams;
extern unsigned acl__stream_count[ACL__MAX_DEVICES];

/* Resolve an aclrtStream (NULL = default stream of the current context) to
 * its evrt handle; evrt validates the handle when it is used. */
aclError acl__stream(const char *fn, aclrtStream s, evrt_stream_t *h);
/* Same, returning with acl__lock held and *meta valid (or NULL for a
 * stream the layer did not create) on success. */
aclError acl__stream_locked(const char *fn, aclrtStream s,
                                 evrt_stream_t *h, struct acl__stream **meta);
/* Register a stream created by the layer (lock held). */
int acl__stream_add(evrt_stream_t h, struct acl__ctx *ctx,
                         uint32_t flags, uint32_t priority, bool is_default);

/* Seconds; 0 = stream waits never time out. */
extern atomic_uint acl__op_wait_timeout;

/* ------------------------------------------- capture, models (acl_mdl.c) */
/* 107029 unless stream h is capturing (external records and waits). */
aclError acl__mdl_capturing(const char *fn, evrt_stream_t h);
/* A potentially unsafe call (synchronous copies and fills): `code` if the
 * capture modes refuse it now (the captures that refuse it are
 * invalidated, evrt_capture_unsafe_call). */
aclError acl__mdl_unsafe(const char *fn, aclError code);
/* aclrtMemcpyAsync that would block (plain host memory) on stream h: on a
 * capturing stream it is refused (107041) or, allowed, captured without
 * blocking (*sync cleared). */
aclError acl__mdl_blocking_copy(const char *fn, evrt_stream_t h, bool *sync);

#endif
