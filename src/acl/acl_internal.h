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
 * fork(): see acl_fork.c (ACL__ENTER).
 */
#ifndef EVRT_ACL_INTERNAL_H
#define EVRT_ACL_INTERNAL_H

/* First: the hookable calls' implementations are named aclXImpl (the
 * public aclX is acl_impl.c's trampoline). */
#include "acl_hook_names.h"

#include <acl/acl.h>
#include <acl/acl_rt_memory_soma.h>
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

/* ------------------------------------------------------------- fork */
/* acl_fork.c: ACL__ENTER(fn) returns the FORKED code from the calling
 * function in a forked child of a process that used the layer; it comes
 * before any lock of the layer on every path that does not call evrt
 * first. */
/* A global mutex of the layer, defined with ACL__MUTEX(name) (prefix
 * `static` for a file's own): the child handler re-initializes every one,
 * so that no path of a forked child that does not pass ACL__ENTER can wait
 * for a thread of the parent that does not exist there.  (The state it
 * guards may have been caught mid-update by the fork: ACL__ENTER, on the
 * paths of the main families, keeps the child from reading it.) */
#define ACL__MUTEX(name)                                                       \
  pthread_mutex_t name = PTHREAD_MUTEX_INITIALIZER;                            \
  __attribute__((constructor)) static void acl__track_##name(void) {           \
    acl__fork_track(&name, false);                                             \
  }
/* Register a mutex for re-initialization in a forked child (recursive:
 * with that type). */
void acl__fork_track(pthread_mutex_t *m, bool recursive);
#define ACL__FORK_USED 1u
#define ACL__FORK_CHILD 2u
extern atomic_uint acl__fork_state;
aclError acl__enter_slow(const char *fn);
#define ACL__ENTER(fn)                                                         \
  do {                                                                         \
    /* relaxed: the slow path rereads it seq_cst */                            \
    if (__builtin_expect(atomic_load_explicit(&acl__fork_state,                \
                                              memory_order_relaxed) !=         \
                             ACL__FORK_USED,                                   \
                         0)) {                                                 \
      aclError acl__r = acl__enter_slow(fn);                                   \
      if (acl__r)                                                              \
        return acl__r;                                                         \
    }                                                                          \
  } while (0)

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
/* Same without an error: the live current context or NULL. */
struct acl__ctx *acl__current_quiet(void);

/* ----------------------------------------------------------- streams */
struct acl__sub;
struct acl__stream {
  struct acl__ctx *ctx;
  evrt_stream_t handle;
  uint32_t flags, priority;
  uint64_t failure_mode;
  uint64_t seen_wait_failures;
  /* aclrtSubscribeReport / aclrtSubscribeHostFunc (acl_callback.c) */
  struct acl__sub *sub, *hsub;
  bool is_default;
  /* aclrtSetStreamResLimit: per aclrtDevResLimitType, 0 = not set */
  uint32_t res_limit[2];
  uint32_t overflow_switch; /* aclrtSetStreamOverflowSwitch */
  /* aclrtStreamGetId: the smallest id free on its device when it was
   * registered (CANN's ids are per device and reused, like hardware
   * stream slots), so a device's first default stream is 0. */
  int32_t acl_id;
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

/* A stream's metadata was just taken out of acl__streams (lock held):
 * its device's stream count and its id are free again. */
void acl__stream_removed(const struct acl__stream *m);
/* aclrtStreamGetId's id of the stream whose evrt id is id, or -1 when the
 * layer does not know it (takes acl__lock). */
int32_t acl__stream_acl_id(uint64_t id);

/* A stream's metadata left the table (destroy, device reset): release
 * its subscriptions and their queued callbacks (acl_callback.c).  Takes
 * acl__lock: call without it. */
void acl__stream_detach(struct acl__stream *m);
/* The same for every stream of a context being reset (their metadata stays
 * in the table).  Takes acl__lock. */
void acl__ctx_detach(struct acl__ctx *ctx);

/* ------------------------------------------------------------ memory */
/* Every block the layer hands out or is told about is in one registry of
 * address ranges (acl_memory.c, its own leaf mutex), with its kind and its
 * device (-1 for host memory). */
enum acl__mem_kind {
  ACL__MEM_DEVICE = 0,     /* aclrtMalloc and its variants */
  ACL__MEM_HOST = 1,       /* aclrtMallocHost (pinned host memory) */
  ACL__MEM_MANAGED = 2,    /* aclrtMemAllocManaged */
  ACL__MEM_REGISTERED = 3, /* aclrtHostRegister: the caller's memory */
  ACL__MEM_VIRTUAL = 4,    /* aclrtReserveMemAddress ranges */
  ACL__MEM_POOL = 5,       /* blocks of aclrtMemPool* pools */
  ACL__MEM_IMPORTED = 6,   /* aclrtIpcMemImportByKey (acl_ipcmem.c) */
};
struct acl__blk {
  uintptr_t start;
  size_t size;
  uint8_t kind; /* enum acl__mem_kind */
  int device;
  bool shared; /* evrt interprocess memory (acl_memory.c: device blocks of a
                  page or more; imported ones) */
  struct acl__blk *next; /* acl_memory.c: freed blocks not yet released */
};
/* The block holding [p, p+n) (copied out), or false. */
bool acl__mem_find(const void *p, size_t n, struct acl__blk *out);
/* acl_hostmem.c: [p, p+n) (p itself when n is 0) is memory of this process
 * readable, and writable if write; false for NULL or a range that wraps.
 * System calls: the slow path for pointers outside the layer's blocks. */
bool acl__host_range_ok(const void *p, size_t n, bool write);
/* Add a block: 0, 1 if it overlaps a known block, -1 out of memory. */
int acl__mem_track(void *p, size_t size, unsigned kind, int device);
/* Same, saying whether it is evrt interprocess memory. */
int acl__mem_track_shared(void *p, size_t size, unsigned kind, int device,
                          bool shared);
/* Remove the block starting exactly at p with that kind (copied out): 0 or
 * -1 if there is none. */
int acl__mem_untrack(const void *p, unsigned kind, struct acl__blk *out);
/* Allocate and track a 64-byte aligned block of the ACL sizing rule (size
 * rounded up to 32, plus 32 when pad); records and returns the ACL error. */
aclError acl__mem_alloc(const char *fn, void **ptr, size_t size,
                        unsigned kind, bool pad);
/* Same on a given device (ACL__DEVICE_CURRENT: the current context's, -1 for
 * host memory). */
#define ACL__DEVICE_CURRENT (-2)
aclError acl__mem_alloc_on(const char *fn, void **ptr, size_t size,
                           unsigned kind, bool pad, int device);
/* Enqueue run(task) on stream (NULL: the current default stream); frees task
 * if that fails; with wait, returns once the stream has run it. */
aclError acl__enqueue_task(const char *fn, aclrtStream stream,
                           evrt_host_fn run, void *task, bool wait);
/* [p, p+n) lies in a block the layer knows. */
bool acl__is_acl_memory(const void *p, size_t n);
/* [p, p+n) lies in a block the layer knows and, for a reserved virtual
 * range, in mapped pages with read access (write access when write). */
bool acl__mem_usable(const void *p, size_t n, bool write);

/* One side of a copy or fill (acl__mem_side): how the call uses it. */
#define ACL__SIDE_WRITE 1u  /* the call writes it (else it reads it) */
#define ACL__SIDE_DEVICE 2u /* device memory of the layer: any block but
                               aclrtMallocHost's */
#define ACL__SIDE_HOST 4u   /* host memory outside every block is taken too
                               (readable / writable over the whole range,
                               not a block freed lately) */
/* The reserved ranges a call holds mapped while it checks and then copies
 * or enqueues (acl__vmm_pin); acl__pins_drop lets them go. */
struct acl__pins {
  void *r[4];
  int n;
};
#define ACL__PINS_INIT {{0}, 0}
/* [p, p+n) of one side: a block of the layer holding the whole range (a
 * reserved range only in mapped pages with the access needed, which stay
 * mapped until acl__pins_drop), or with ACL__SIDE_HOST host memory outside
 * every block.  Else records `code` for fn naming `what` and returns it.
 * n 0 checks p alone.  Any thread; takes the registry's and vmm locks, not
 * together. */
aclError acl__mem_side(const char *fn, aclError code, const char *what,
                       const void *p, size_t n, unsigned how,
                       struct acl__pins *pins);
void acl__pins_drop(struct acl__pins *pins);
/* acl_vmm.c: [p, p+n) lies in mapped pages of one reserved range with read
 * access (and write access when write).  With pin, the range is held:
 * an aclrtUnmapMem or aclrtReleaseMemAddress of it leaves the pages mapped
 * until acl__vmm_unpin(*pin) (and until the work queued before it passed).
 * Takes vmm_lock: call with no registry lock held. */
bool acl__vmm_mapped(const void *p, size_t n, bool write, void **pin);
void acl__vmm_unpin(void *pin);
/* aclrtFree of managed memory: drop its advice (acl_managed.c). */
void acl__managed_forget(void *p);
/* [p, p+n) lies in a range registered by aclrtHostRegister. */
bool acl__host_registered(const void *p, size_t n);

/* ----------------------------------------------- the virtual device */
/* What every evrt CPU device presents itself as (acl_sysinfo.c). */
struct acl__soc {
  const char *name;
  int npu_arch;
  uint32_t aicore, cube_core, vector_core, aicpu;
  int64_t l2_size;
};
extern const struct acl__soc acl__soc;
/* CANN's stream priority range: 0 greatest, 7 least. */
#define ACL__STREAM_PRIORITY_GREATEST 0
#define ACL__STREAM_PRIORITY_LEAST 7
/* A device id of an existing evrt device. */
bool acl__device_ok(int64_t dev);
/* Record "device id out of range" with `code` and return it. */
aclError acl__bad_device(const char *fn, int64_t dev, aclError code);
/* The host's memory, which is the devices' memory here. */
void acl__host_memory(size_t *free_bytes, size_t *total_bytes);

/* ------------------------------------ overflow and saturation (switches) */
/* The process-level overflow status (aclrtGetOverflowStatus), set by tasks
 * that overflow while their stream's overflow switch is on. */
void acl__note_overflow(void);
/* The floating-point mode of the current device (aclrtSetDeviceSatMode). */
aclrtFloatOverflowMode acl__sat_mode(void);
/* The overflow switch of a stream (0 if unknown). */
uint32_t acl__stream_overflow_switch(aclrtStream s);

/* ----------------------------------------- init / finalize callbacks */
/* Run the registered callbacks (acl_initcb.c); aclInit passes the config
 * file's content.  They return the first failing callback's code. */
aclError acl__notify_init(const char *config, size_t len);
aclError acl__notify_finalize(void);

/* Is p in memory this process exported or imported (acl_ipcmem.c)? */
bool acl__ipc_mem_shared(const void *p);

/* ---------------------------------------------- failures (acl_failure.c) */
/* The aclError a failed or aborted task is reported with. */
aclError acl__failure_code(const evrt_task_failure_t *f);
/* Install the layer's evrt failure callback (exception info callbacks,
 * aclrtGetErrorVerbose); idempotent.  Called when a device is set. */
void acl__failure_init(void);
/* A synchronize of h returned st (EVRT_ERROR_TASK_FAILED or
 * EVRT_ERROR_ABORTED): clear the stream's error (it has been reported) and
 * return its ACL code. */
aclError acl__task_error(evrt_stream_t h, evrt_status_t st, const char *fn);
/* aclrtRegStreamStateCallback's callbacks (no lock held). */
void acl__stream_state(aclrtStream stream, int state);
/* Clear the pending task errors of the device's ACL streams (a device
 * synchronize reported one). */
void acl__clear_device_errors(int device);

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
