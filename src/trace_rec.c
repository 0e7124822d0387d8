/*
 * trace_rec.c - the trace recorder: what streams did, appended by the hooks
 * to per-thread buffers, and the session (start, stop, flush at shutdown
 * and exit); trace_json.c writes the file.
 *
 * Recording.  Every thread that calls a hook appends fixed-size entries to
 * its own buffer (struct tbuf), registered once in a global list.  An append
 * takes no lock: the owner raises tbuf.busy, re-checks evrt__trace_enabled,
 * writes the entry and lowers busy.  evrt_trace_stop() clears the flag and
 * then waits until no buffer is busy (the Dekker pair below), so after that
 * wait every entry of the session is in memory and nobody appends any more:
 * a stop loses nothing that happened before it, and the writer reads the
 * buffers without racing their owners.  A buffer holds at most `cap` entries
 * per session (EVRT_TRACE_BUFFER, default 262144); an entry that does not fit
 * is counted in tbuf.dropped, reported by evrt_trace_dropped() and in the
 * file's otherData.dropped_entries.  Buffers outlive their threads (a thread
 * that exits mid-session still has its entries written); an exited thread's
 * buffer is freed after the next flush.
 *
 * Writing happens at stop, at evrt_shutdown and at exit: entries are copied
 * out, sorted, matched (record <-> record item, wait item <-> bind <->
 * resume) and printed.  Nothing is written during the session.
 *
 * Lock order: (init.c's init_lock ->) ctl_lock -> reg_lock -> names_lock;
 * init_lock is held around evrt__trace_init_from_env and evrt__trace_finish
 * at shutdown, and evrt_trace_start initializes the library before it takes
 * ctl_lock.  Hooks take reg_lock only
 * to register a new thread (never while busy is raised) and names_lock only
 * in evrt__trace_stream_name.  No core lock is ever taken here.
 */
#include "trace_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

atomic_int evrt__trace_enabled;

const char *evrt__item_kind_name(int kind) {
  static const char *const names[] = {
      "host_func", "memcpy", "memset",     "delay",     "record",
      "wait",      "reset",  "host_task", "value_wait", "value_write",
      "graph",     "graph_nodes"};
  _Static_assert(sizeof names / sizeof names[0] == EVRT__ITEM_KIND_COUNT,
                 "a name for every item kind");
  return kind >= 0 && kind < EVRT__ITEM_KIND_COUNT ? names[kind] : "unknown";
}
/* ------------------------------------------------------------ entries */

#define CHUNK_ENTRIES 1024u
#define MAX_CHUNKS 4096u /* hard cap: 4M entries per thread */
#define DEFAULT_CAP (256u * 1024u)

struct tbuf {
  /* 1 while the owner appends (seq_cst: Dekker pair with stop) */
  atomic_int busy;
  /* Entries of this session.  Written by the owner while busy; reset by the
   * flusher while tracing is off (ordered by evrt__trace_enabled). */
  atomic_uint_least64_t count;
  atomic_uint_least64_t dropped; /* relaxed: a statistic */
  struct tbuf *next;             /* reg_lock */
  bool orphan;                   /* reg_lock: owner thread exited */
  struct evrt__trace_entry *chunks[MAX_CHUNKS];
};

static pthread_mutex_t ctl_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tbuf *buffers; /* reg_lock */
static _Thread_local struct tbuf *tls_buf;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static pthread_key_t buf_key;
static bool key_ok;

/* Session state (ctl_lock), read by hooks only after they saw the flag. */
static atomic_uint_least64_t cap; /* relaxed: published by the flag */
static int out_fd = -1;
static char *out_path;
static uint64_t t_start;
static bool active;
/* Set in a forked child of a process that had initialized evrt (by the
 * child handler, before the child runs anything else): no call takes a
 * lock or writes the file from then on. */
static bool in_child;
/* Entries lost because a thread could not get a buffer (relaxed). */
static atomic_uint_least64_t lost_noalloc;
static atomic_uint_least64_t last_dropped; /* total of the last session */

static void thread_gone(void *p) {
  struct tbuf *b = p;
  if (in_child)
    return; /* a forked child's thread: reg_lock may be held for ever */
  pthread_mutex_lock(&reg_lock);
  b->orphan = true;
  pthread_mutex_unlock(&reg_lock);
  tls_buf = NULL;
}

static void make_key(void) {
  key_ok = pthread_key_create(&buf_key, thread_gone) == 0;
}

static struct tbuf *register_thread(void) {
  pthread_once(&key_once, make_key);
  struct tbuf *b = evrt__calloc(1, sizeof *b);
  if (!b)
    return NULL;
  pthread_mutex_lock(&reg_lock);
  b->next = buffers;
  buffers = b;
  pthread_mutex_unlock(&reg_lock);
  /* Without the key the buffer is never marked orphan: it stays (a leak
   * bounded by the number of threads), which is better than losing data. */
  if (key_ok)
    pthread_setspecific(buf_key, b);
  tls_buf = b;
  return b;
}

/* Reserve the next entry of this thread's buffer, or NULL (tracing just
 * stopped, or the buffer is full).  On success the caller fills the entry
 * and calls commit(). */
static struct evrt__trace_entry *reserve(struct tbuf **bp) {
  struct tbuf *b = tls_buf;
  if (EVRT_UNLIKELY(!b) && !(b = register_thread())) {
    atomic_fetch_add_explicit(&lost_noalloc, 1, memory_order_relaxed);
    return NULL;
  }
  /* seq_cst store then seq_cst load: either stop sees busy = 1 and waits for
   * us, or we see the flag cleared and append nothing. */
  atomic_store_explicit(&b->busy, 1, memory_order_seq_cst);
  if (!atomic_load_explicit(&evrt__trace_enabled, memory_order_seq_cst)) {
    atomic_store_explicit(&b->busy, 0, memory_order_release);
    return NULL;
  }
  uint64_t n = atomic_load_explicit(&b->count, memory_order_relaxed);
  uint64_t ci = n / CHUNK_ENTRIES;
  if (n >= atomic_load_explicit(&cap, memory_order_relaxed) ||
      ci >= MAX_CHUNKS ||
      (!b->chunks[ci] &&
       !(b->chunks[ci] =
             evrt__malloc(CHUNK_ENTRIES * sizeof(struct evrt__trace_entry))))) {
    atomic_fetch_add_explicit(&b->dropped, 1, memory_order_relaxed);
    atomic_store_explicit(&b->busy, 0, memory_order_release);
    return NULL;
  }
  *bp = b;
  struct evrt__trace_entry *e = &b->chunks[ci][n % CHUNK_ENTRIES];
  memset(e, 0, sizeof *e);
  return e;
}

static void commit(struct tbuf *b) {
  uint64_t n = atomic_load_explicit(&b->count, memory_order_relaxed);
  atomic_store_explicit(&b->count, n + 1, memory_order_relaxed);
  /* release: the entry and the count are visible to the flusher that
   * acquires busy == 0 */
  atomic_store_explicit(&b->busy, 0, memory_order_release);
}

static void put_label(struct evrt__trace_entry *e, const char *s) {
  if (s) {
    size_t n = strnlen(s, EVRT__TRACE_LABEL_MAX);
    memcpy(e->label, s, n);
    e->label[n] = 0;
  }
}

/* --------------------------------------------------------- stream names */

pthread_mutex_t evrt__trace_names_lock = PTHREAD_MUTEX_INITIALIZER;
struct evrt__trace_name *evrt__trace_names;
size_t evrt__trace_names_cap, evrt__trace_names_used;
uint64_t evrt__trace_session_no;
/* A session records (from its start to the end of its file), names_lock:
 * a stream destroyed meanwhile keeps its entry, retired, until then. */
static bool names_recording;

struct evrt__trace_name *evrt__trace_name_find(uint64_t id) {
  size_t m = evrt__trace_names_cap - 1;
  for (size_t i = (size_t)(id * 0x9E3779B97F4A7C15ull) & m;; i = (i + 1) & m)
    if (evrt__trace_names[i].id == id || evrt__trace_names[i].id == 0)
      return &evrt__trace_names[i];
}

static bool names_grow(void) {
  size_t ncap = evrt__trace_names_cap ? evrt__trace_names_cap * 2 : 256;
  struct evrt__trace_name *old = evrt__trace_names,
                          *nn = evrt__calloc(ncap, sizeof *nn);
  if (!nn)
    return false;
  size_t ocap = evrt__trace_names_cap;
  evrt__trace_names = nn;
  evrt__trace_names_cap = ncap;
  for (size_t i = 0; i < ocap; i++)
    if (old[i].id)
      *evrt__trace_name_find(old[i].id) = old[i];
  evrt__free(old);
  return true;
}

void evrt__trace_stream_name(int device, uint64_t stream_id, const char *name) {
  if (!stream_id)
    return;
  pthread_mutex_lock(&evrt__trace_names_lock);
  if ((evrt__trace_names_used + 1) * 2 <= evrt__trace_names_cap ||
      names_grow()) {
    struct evrt__trace_name *s = evrt__trace_name_find(stream_id);
    if (!s->id) {
      s->id = stream_id;
      s->retired = false;
      s->name[0] = 0;
      evrt__trace_names_used++;
    }
    s->device = device;
    s->session = evrt__trace_session_no;
    if (name) {
      strncpy(s->name, name, sizeof s->name - 1);
      s->name[sizeof s->name - 1] = 0;
    }
  }
  pthread_mutex_unlock(&evrt__trace_names_lock);
}

/* names_lock held: empty slot i, moving back the entries of its probe run
 * that may no longer be found past the hole (linear probing's deletion; no
 * tombstones, so the table's probe runs stay as short as its load). */
static void names_remove_at(size_t i) {
  size_t m = evrt__trace_names_cap - 1;
  evrt__trace_names[i].id = 0;
  evrt__trace_names_used--;
  for (size_t j = (i + 1) & m; evrt__trace_names[j].id; j = (j + 1) & m) {
    size_t home =
        (size_t)(evrt__trace_names[j].id * 0x9E3779B97F4A7C15ull) & m;
    /* j stays if its home lies cyclically in (i, j] */
    bool stays = i < j ? (home > i && home <= j) : (home > i || home <= j);
    if (stays)
      continue;
    evrt__trace_names[i] = evrt__trace_names[j];
    evrt__trace_names[j].id = 0;
    i = j;
  }
}

void evrt__trace_stream_forget(uint64_t stream_id) {
  if (!stream_id)
    return;
  pthread_mutex_lock(&evrt__trace_names_lock);
  struct evrt__trace_name *s =
      evrt__trace_names_cap ? evrt__trace_name_find(stream_id) : NULL;
  if (s && s->id) {
    /* While a session records, the file may still need the name, even
     * one given before the session (a track of the stream's slices). */
    if (names_recording)
      s->retired = true;
    else
      names_remove_at((size_t)(s - evrt__trace_names));
  }
  pthread_mutex_unlock(&evrt__trace_names_lock);
}

/* The end of a session's file: the entries retired during it go. */
static void names_session_end(void) {
  pthread_mutex_lock(&evrt__trace_names_lock);
  names_recording = false;
  for (size_t i = 0; i < evrt__trace_names_cap;)
    if (evrt__trace_names[i].id && evrt__trace_names[i].retired)
      names_remove_at(i); /* (slot i may hold a moved entry now: again) */
    else
      i++;
  pthread_mutex_unlock(&evrt__trace_names_lock);
}

size_t evrt__trace_names_count(void) {
  pthread_mutex_lock(&evrt__trace_names_lock);
  size_t n = evrt__trace_names_used;
  pthread_mutex_unlock(&evrt__trace_names_lock);
  return n;
}

/* ---------------------------------------------------------------- hooks */

void evrt__trace_item(int device, uint64_t stream_id, int kind,
                      const char *label, uint64_t t0, uint64_t t1,
                      uint64_t event_id, uint64_t gen) {
  struct tbuf *b;
  struct evrt__trace_entry *e = reserve(&b);
  if (!e)
    return;
  e->type = EVRT__TE_ITEM;
  e->kind = (uint8_t)kind;
  e->device = device;
  e->stream = stream_id;
  e->t0 = t0;
  e->t1 = t1 < t0 ? t0 : t1;
  e->event = event_id;
  e->gen = gen;
  put_label(e, label);
  commit(b);
}

static void point(int type, int device, uint64_t stream_id, uint64_t event_id,
                  uint64_t gen, uint64_t t) {
  struct tbuf *b;
  struct evrt__trace_entry *e = reserve(&b);
  if (!e)
    return;
  e->type = (uint8_t)type;
  e->device = device;
  e->stream = stream_id;
  e->event = event_id;
  e->gen = gen;
  e->t0 = e->t1 = t;
  commit(b);
}

void evrt__trace_record(int device, uint64_t stream_id, uint64_t event_id,
                        uint64_t gen, uint64_t t) {
  point(EVRT__TE_RECORD, device, stream_id, event_id, gen, t);
}

void evrt__trace_wait_bind(int device, uint64_t stream_id, uint64_t event_id,
                           uint64_t gen, uint64_t t) {
  point(EVRT__TE_BIND, device, stream_id, event_id, gen, t);
}

void evrt__trace_wait_resume(int device, uint64_t stream_id, uint64_t event_id,
                             uint64_t gen, uint64_t t) {
  point(EVRT__TE_RESUME, device, stream_id, event_id, gen, t);
}

void evrt__trace_host_wait(const char *what, uint64_t id, uint64_t t0,
                           uint64_t t1) {
  struct tbuf *b;
  struct evrt__trace_entry *e = reserve(&b);
  if (!e)
    return;
  e->type = EVRT__TE_HOST_WAIT;
  e->device = -1;
  e->stream = id;
  e->gen = evrt_thread_id();
  e->t0 = t0;
  e->t1 = t1 < t0 ? t0 : t1;
  put_label(e, what);
  commit(b);
}

void evrt__trace_mark(int device, uint64_t stream_id, uint64_t thread,
                      uint64_t seq, uint64_t t, const char *name) {
  struct tbuf *b;
  struct evrt__trace_entry *e = reserve(&b);
  if (!e)
    return;
  e->type = EVRT__TE_MARK;
  e->device = device;
  e->stream = stream_id;
  e->event = seq;
  e->gen = thread;
  e->t0 = e->t1 = t;
  put_label(e, name);
  commit(b);
}

/* Copy out every buffer's entries (tracing is off and nobody is busy) into
 * *all (NULL if out of memory), reset the buffers and free those of exited
 * threads.  Returns the number of entries.  Caller holds reg_lock. */
static size_t collect_locked(struct evrt__trace_entry **all,
                             uint64_t *dropped_out) {
  size_t n = 0;
  uint64_t dropped = atomic_load_explicit(&lost_noalloc, memory_order_relaxed);
  for (struct tbuf *b = buffers; b; b = b->next) {
    n += (size_t)atomic_load_explicit(&b->count, memory_order_relaxed);
    dropped += atomic_load_explicit(&b->dropped, memory_order_relaxed);
  }
  *dropped_out = dropped;
  struct evrt__trace_entry *v = evrt__malloc((n ? n : 1) * sizeof *v);
  size_t k = 0;
  struct tbuf **pp = &buffers;
  while (*pp) {
    struct tbuf *b = *pp;
    uint64_t c = atomic_load_explicit(&b->count, memory_order_relaxed);
    for (uint64_t i = 0; v && i < c; i++)
      v[k++] = b->chunks[i / CHUNK_ENTRIES][i % CHUNK_ENTRIES];
    atomic_store_explicit(&b->count, 0, memory_order_relaxed);
    atomic_store_explicit(&b->dropped, 0, memory_order_relaxed);
    if (b->orphan) {
      *pp = b->next;
      for (unsigned i = 0; i < MAX_CHUNKS && b->chunks[i]; i++)
        evrt__free(b->chunks[i]);
      evrt__free(b);
    } else {
      pp = &b->next;
    }
  }
  atomic_store_explicit(&lost_noalloc, 0, memory_order_relaxed);
  *all = v;
  return k;
}

/* Caller holds ctl_lock and tracing is active. */
static evrt_status_t stop_locked(void) {
  /* seq_cst: the other half of the Dekker pair in reserve() */
  atomic_store_explicit(&evrt__trace_enabled, 0, memory_order_seq_cst);
  active = false;
  pthread_mutex_lock(&reg_lock);
  for (struct tbuf *b = buffers; b; b = b->next) {
    /* seq_cst: pairs with the release in commit(); the owner's busy
     * section is a few stores long (the back-off's pauses and yields
     * cover it; its sleeps cover an owner that is not running) */
    struct evrt__backoff bo = {0};
    while (atomic_load_explicit(&b->busy, memory_order_seq_cst))
      evrt__backoff(&bo);
  }
  struct evrt__trace_entry *all = NULL;
  uint64_t dropped = 0;
  size_t n = collect_locked(&all, &dropped);
  pthread_mutex_unlock(&reg_lock);
  atomic_store_explicit(&last_dropped, dropped, memory_order_relaxed);
  evrt_status_t st = EVRT_SUCCESS;
  int err =
      all ? evrt__trace_write_json(out_fd, t_start, all, n, dropped) : ENOMEM;
  names_session_end(); /* written: the retired names may go */
  if (err == ENOMEM) {
    /* drop a half-written file: the reader gets a valid, empty trace */
    static const char msg[] =
        "{\"traceEvents\":[],\"otherData\":{\"error\":\"evrt: out of "
        "memory while writing the trace\"}}\n";
    if (ftruncate(out_fd, 0) != 0 || lseek(out_fd, 0, SEEK_SET) != 0 ||
        write(out_fd, msg, sizeof msg - 1) != (ssize_t)(sizeof msg - 1))
      err = errno ? errno : EIO;
    st = evrt__fail(EVRT_ERROR_OUT_OF_MEMORY,
                    "out of memory while writing trace %s", out_path);
  } else if (err) {
    st = evrt__fail(EVRT_ERROR_SYSTEM, "cannot write trace %s: %s", out_path,
                    strerror(err));
  }
  if (close(out_fd) != 0 && st == EVRT_SUCCESS)
    st = evrt__fail(EVRT_ERROR_SYSTEM, "cannot close trace %s: %s", out_path,
                    strerror(errno));
  out_fd = -1;
  evrt__free(out_path);
  out_path = NULL;
  evrt__free(all);
  return st;
}

static evrt_status_t start_locked(const char *path) {
  if (active)
    return evrt__fail(EVRT_ERROR_NOT_PERMITTED,
                      "tracing is already on (writing %s)", out_path);
  size_t len = strlen(path);
  char *copy = evrt__malloc(len + 1);
  if (!copy)
    return evrt__fail(EVRT_ERROR_OUT_OF_MEMORY, "cannot copy the trace path");
  memcpy(copy, path, len + 1);
  /* Not stdio: see trace_json.c.  CLOEXEC: a program that execs does not
   * hand the trace to the new image. */
  int fd;
  do
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    int err = errno;
    evrt__free(copy);
    return evrt__fail(EVRT_ERROR_SYSTEM, "cannot open trace file %s: %s", path,
                      strerror(err));
  }
  /* strtoull took "-5" as 2^64 - 5 (then the largest buffer) and "12x",
   * "abc", "0" without a word: the shared reader warns and keeps the
   * default (README, Environment) */
  uint64_t c = (uint64_t)evrt__env_long("EVRT_TRACE_BUFFER", DEFAULT_CAP, 1,
                                        (long)MAX_CHUNKS * CHUNK_ENTRIES);
  atomic_store_explicit(&cap, c, memory_order_relaxed);
  out_fd = fd;
  out_path = copy;
  pthread_mutex_lock(&evrt__trace_names_lock);
  evrt__trace_session_no++;
  names_recording = true;
  pthread_mutex_unlock(&evrt__trace_names_lock);
  t_start = evrt__now_ns();
  active = true;
  /* seq_cst (a release at least): hooks that see the flag see the cap and
   * the buffers reset by the previous stop */
  atomic_store_explicit(&evrt__trace_enabled, 1, memory_order_seq_cst);
  return EVRT_SUCCESS;
}

/* ----------------------------------------------------------------- API */

void evrt__trace_atfork_child(void) {
  /* The child's only thread, before anything else runs in it.  Another
   * thread of the parent may have held ctl_lock, reg_lock or names_lock,
   * or been inside an append (busy raised): none of them is taken or
   * waited for in the child, and the file stays the parent's. */
  in_child = true;
  atomic_store_explicit(&evrt__trace_enabled, 0, memory_order_relaxed);
}

void evrt__trace_init_from_env(void) {
  const char *path = evrt__env_path("EVRT_TRACE");
  if (!path || !*path)
    return;
  pthread_mutex_lock(&ctl_lock);
  evrt_status_t st = active ? EVRT_SUCCESS : start_locked(path);
  pthread_mutex_unlock(&ctl_lock);
  if (st != EVRT_SUCCESS) {
    /* said once on stderr; the call that initialized the library succeeds
     * and must not find this as its "last error" */
    fprintf(stderr, "evrt: EVRT_TRACE=%s: %s (not tracing)\n", path,
            evrt_last_error_message());
    evrt_clear_last_error();
  }
}

void evrt__trace_finish(void) {
  if (in_child)
    return; /* at exit in a forked child: the session is the parent's */
  pthread_mutex_lock(&ctl_lock);
  if (active) {
    const char *path = out_path;
    char shown[256];
    snprintf(shown, sizeof shown, "%s", path ? path : "");
    if (stop_locked() != EVRT_SUCCESS)
      fprintf(stderr, "evrt: trace %s: %s\n", shown, evrt_last_error_message());
  }
  pthread_mutex_unlock(&ctl_lock);
}

evrt_status_t evrt_trace_start(const char *path) {
  if (!path || !*path)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "trace path is NULL or empty");
  evrt_status_t st = evrt__ready();
  if (st != EVRT_SUCCESS)
    return st;
  pthread_mutex_lock(&ctl_lock);
  st = start_locked(path);
  pthread_mutex_unlock(&ctl_lock);
  return st;
}

evrt_status_t evrt_trace_stop(void) {
  if (in_child)
    return evrt__fail(EVRT_ERROR_FORKED,
                      "the trace belongs to the parent of this forked "
                      "process");
  /* Never initialized: no session can be on (a start initializes first),
   * and no lock is taken, so a thread forked from here finds none held. */
  if (atomic_load_explicit(&evrt__lib_state, memory_order_acquire) ==
      EVRT__UNINIT)
    return EVRT_SUCCESS;
  pthread_mutex_lock(&ctl_lock);
  evrt_status_t st = active ? stop_locked() : EVRT_SUCCESS;
  pthread_mutex_unlock(&ctl_lock);
  return st;
}

uint64_t evrt_trace_dropped(void) {
  if (in_child ||
      !atomic_load_explicit(&evrt__trace_enabled, memory_order_acquire))
    return atomic_load_explicit(&last_dropped, memory_order_relaxed);
  uint64_t n = atomic_load_explicit(&lost_noalloc, memory_order_relaxed);
  pthread_mutex_lock(&reg_lock);
  for (struct tbuf *b = buffers; b; b = b->next)
    n += atomic_load_explicit(&b->dropped, memory_order_relaxed);
  pthread_mutex_unlock(&reg_lock);
  return n;
}
