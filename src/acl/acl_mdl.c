/*
 * acl_mdl.c - model runtime instances (aclmdlRI*) and labels, over evrt's
 * stream capture (docs/capture.md; CANN's semantics and codes: docs/acl.md).
 *
 *  - aclmdlRICaptureBegin/End: an evrt capture; the model is the graph,
 *    instantiated at the end.  The model handle exists from the begin on
 *    (aclmdlRICaptureGetInfo returns it), found through the capture id,
 *    which every stream of the capture reports.
 *  - aclmdlRIBuildBegin, BindStream, EndTask, BuildEnd: each bound stream
 *    is captured (relaxed mode) from its binding to its aclmdlRIEndTask;
 *    BuildEnd instantiates each stream's graph.  An execution runs them one
 *    after the other in the execution stream's order.
 *  - labels: ids; aclrtSetLabel and aclrtSwitchLabelByIndex add evrt's
 *    capture label and switch nodes to a bound (capturing) stream.
 *
 * Models and labels live in lists under acl__lock; handles are their
 * addresses, checked against the lists (a destroyed handle is refused, never
 * dereferenced).  evrt calls made under acl__lock do not block (capture,
 * instantiation and launch calls do not); aclmdlRIExecute synchronizes with
 * the lock released.
 */
#include "acl_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { CAPTURED = 1, BUILT };
enum { CAPTURING = 1, BUILDING, READY };

struct bound {
  evrt_stream_t h;
  bool ended;     /* aclmdlRIEndTask: its capture ended */
  evrt_graph_t g; /* its graph, after aclmdlRIEndTask */
};

/* Introspection (aclmdlRIGetStreams and the task calls): a model's streams
 * are its graphs' lanes, made at the first aclmdlRIGetStreams; a lane's
 * tasks are its nodes, made at the first aclmdlRIGetTasksByStream.  Their
 * handles are the addresses of these records, found by walking the live
 * models under acl__lock (never dereferenced unchecked). */
struct mdl_task {
  struct mdl_lane *lane;
  uint32_t seq;                 /* position on its stream, from 0 */
  evrt_graph_node_type_t type;
};

struct mdl_lane {
  uint32_t graph, lane;    /* m->g[graph], its lane */
  struct mdl_task *tasks;  /* NULL until listed */
  uint32_t ntasks;
};

struct mdl {
  struct mdl *next; /* live models (acl__lock) */
  struct mdl_lane *lanes; /* NULL until aclmdlRIGetStreams */
  uint32_t nlanes;
  uint32_t id;
  int kind, state;
  uint64_t cap_id; /* CAPTURED while CAPTURING: the evrt capture */
  struct bound *b; /* BUILT: the bound streams */
  uint32_t nb;
  evrt_graph_t *g; /* READY: graphs and their executable graphs */
  evrt_graph_exec_t *x;
  uint32_t nx;
  evrt_stream_t exec_stream; /* aclmdlRIExecute's, made at first use */
  char name[256];
};

struct label {
  struct label *next; /* live labels (acl__lock) */
  uint64_t id;
  bool set; /* set on a stream already (CANN: once) */
};

struct label_list {
  struct label_list *next;
  uint32_t n;
  uint64_t ids[];
};

static struct mdl *models;
static struct label *labels;
static struct label_list *lists;
static uint32_t next_model_id, nlabels;
static uint64_t next_label_id;
#define MAX_LABELS 65535u /* per process (CANN's aclrtCreateLabel doc) */

/* ------------------------------------------------------------- helpers */

aclError acl__mdl_capturing(const char *fn, evrt_stream_t h) {
  evrt_capture_status_t cs;
  evrt_status_t st = evrt_stream_capture_status(h, &cs);
  if (st)
    return acl__st(st, fn);
  if (cs == EVRT_CAPTURE_STATUS_NONE)
    return acl__fail(ACL_ERROR_RT_STREAM_NOT_CAPTURED, fn,
                     "the stream is not capturing: external records and "
                     "waits are for aclmdlRI captures");
  return ACL_SUCCESS;
}

aclError acl__mdl_unsafe(const char *fn, aclError code) {
  evrt_status_t st = evrt_capture_unsafe_call();
  if (st == EVRT_SUCCESS)
    return ACL_SUCCESS;
  return acl__st2(st, EVRT_ERROR_CAPTURE_UNSUPPORTED, code, fn);
}

aclError acl__mdl_blocking_copy(const char *fn, evrt_stream_t h, bool *sync) {
  evrt_capture_status_t cs;
  if (evrt_stream_capture_status(h, &cs) || cs == EVRT_CAPTURE_STATUS_NONE)
    return ACL_SUCCESS; /* (a bad handle fails in the copy itself) */
  aclError r = acl__mdl_unsafe(fn, ACL_ERROR_RT_CAPTURE_MODE_BLOCK_ASYNC);
  if (r == ACL_SUCCESS)
    *sync = false; /* a node: synchronizing would break the capture */
  return r;
}

/* acl__lock held: the live model h, or NULL. */
static struct mdl *find(aclmdlRI h) {
  struct mdl *m = models;
  while (m && m != (struct mdl *)h)
    m = m->next;
  return m;
}

/* The live model h, with acl__lock held on success. */
static aclError lock_model(const char *fn, aclmdlRI h, struct mdl **out) {
  if (!h)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "modelRI is NULL");
  pthread_mutex_lock(&acl__lock);
  if (!(*out = find(h))) {
    pthread_mutex_unlock(&acl__lock);
    return acl__fail(ACL_ERROR_RT_INVALID_HANDLE, fn,
                     "modelRI %p is destroyed or not a model runtime instance",
                     h);
  }
  return ACL_SUCCESS;
}

static struct mdl *new_model(int kind, int state) {
  struct mdl *m = calloc(1, sizeof *m);
  if (!m)
    return NULL;
  m->kind = kind;
  m->state = state;
  pthread_mutex_lock(&acl__lock);
  m->id = next_model_id++;
  m->next = models;
  models = m;
  pthread_mutex_unlock(&acl__lock);
  return m;
}

/* acl__lock held: take m out of the list and free what it holds. */
static void free_model(struct mdl *m) {
  for (struct mdl **p = &models; *p; p = &(*p)->next)
    if (*p == m) {
      *p = m->next;
      break;
    }
  for (uint32_t i = 0; i < m->nx; i++) {
    evrt_graph_exec_destroy(m->x[i]); /* launches in flight complete */
    evrt_graph_destroy(m->g[i]);
  }
  for (uint32_t i = 0; i < m->nb; i++) {
    evrt_graph_t g = m->b[i].g;
    if (!m->b[i].ended) /* still bound and capturing: end it */
      evrt_stream_end_capture(m->b[i].h, &g);
    if (g)
      evrt_graph_destroy(g);
  }
  if (m->exec_stream)
    evrt_stream_destroy(m->exec_stream);
  for (uint32_t i = 0; i < m->nlanes; i++)
    free(m->lanes[i].tasks);
  free(m->lanes);
  free(m->b);
  free(m->g);
  free(m->x);
  free(m);
}

/* acl__lock held: instantiate graphs g[0..n) into m (taking them): READY. */
static aclError make_ready(const char *fn, struct mdl *m, evrt_graph_t *g,
                           uint32_t n) {
  evrt_graph_exec_t *x = calloc(n ? n : 1, sizeof *x);
  if (!x)
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "out of memory");
  for (uint32_t i = 0; i < n; i++) {
    evrt_status_t st = evrt_graph_instantiate(&x[i], g[i]);
    if (st) {
      while (i-- > 0)
        evrt_graph_exec_destroy(x[i]);
      free(x);
      return acl__st(st, fn);
    }
  }
  m->g = g;
  m->x = x;
  m->nx = n;
  m->state = READY;
  return ACL_SUCCESS;
}

static bool is_default_stream(aclrtStream stream, evrt_stream_t h) {
  if (!stream)
    return true;
  uint64_t id;
  if (evrt_stream_get_id(h, &id))
    return false;
  pthread_mutex_lock(&acl__lock);
  struct acl__stream *s = acl__map_get(&acl__streams, id);
  bool d = s && s->is_default;
  pthread_mutex_unlock(&acl__lock);
  return d;
}

/* ------------------------------------------------------------- capture */

aclError aclmdlRICaptureBegin(aclrtStream stream, aclmdlRICaptureMode mode) {
  static const char fn[] = "aclmdlRICaptureBegin";
  if (!stream)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "stream is NULL");
  if ((unsigned)mode > ACL_MODEL_RI_CAPTURE_MODE_RELAXED)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn, "unknown mode %d",
                     (int)mode);
  evrt_stream_t h = (evrt_stream_t)stream;
  if (is_default_stream(stream, h))
    return acl__fail(ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT, fn,
                     "a context's default stream cannot be captured");
  struct mdl *m = new_model(CAPTURED, CAPTURING);
  if (!m)
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "out of memory");
  /* the evrt modes are ACL's, in the same order */
  evrt_status_t st = evrt_stream_begin_capture(h, (evrt_capture_mode_t)mode);
  pthread_mutex_lock(&acl__lock);
  if (st == EVRT_SUCCESS)
    st = evrt_stream_capture_info(h, NULL, &m->cap_id);
  if (st)
    free_model(m);
  pthread_mutex_unlock(&acl__lock);
  return acl__st(st, fn);
}

/* acl__lock held: the model of capture id, or NULL. */
static struct mdl *of_capture(uint64_t id) {
  for (struct mdl *m = models; m && id; m = m->next)
    if (m->kind == CAPTURED && m->state == CAPTURING && m->cap_id == id)
      return m;
  return NULL;
}

aclError aclmdlRICaptureGetInfo(aclrtStream stream,
                                aclmdlRICaptureStatus *status,
                                aclmdlRI *modelRI) {
  static const char fn[] = "aclmdlRICaptureGetInfo";
  if (!stream)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "stream is NULL");
  if (!status && !modelRI)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "status and modelRI cannot both be NULL");
  evrt_capture_status_t cs;
  uint64_t id;
  evrt_status_t st = evrt_stream_capture_info((evrt_stream_t)stream, &cs, &id);
  if (st)
    return acl__st(st, fn);
  if (status) /* the same three values in the same order */
    *status = (aclmdlRICaptureStatus)cs;
  if (modelRI) {
    pthread_mutex_lock(&acl__lock);
    *modelRI = (aclmdlRI)of_capture(id);
    pthread_mutex_unlock(&acl__lock);
  }
  return ACL_SUCCESS;
}

aclError aclmdlRICaptureEnd(aclrtStream stream, aclmdlRI *modelRI) {
  static const char fn[] = "aclmdlRICaptureEnd";
  if (!stream || !modelRI)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "%s is NULL",
                     stream ? "modelRI" : "stream");
  evrt_stream_t h = (evrt_stream_t)stream;
  uint64_t id = 0;
  evrt_stream_capture_info(h, NULL, &id);
  evrt_graph_t g = NULL;
  evrt_status_t st = evrt_stream_end_capture(h, &g);
  if (st == EVRT_ERROR_NOT_PERMITTED)
    return acl__fail(ACL_ERROR_RT_STREAM_NOT_CAPTURED, fn,
                     "the stream is not capturing");
  pthread_mutex_lock(&acl__lock);
  struct mdl *m = of_capture(id);
  if (st == EVRT_ERROR_CAPTURE_UNMATCHED ||
      st == EVRT_ERROR_CAPTURE_WRONG_THREAD) {
    pthread_mutex_unlock(&acl__lock); /* the capture goes on */
    return acl__st(st, fn);
  }
  aclError r = ACL_SUCCESS;
  if (st) {
    r = acl__st(st, fn); /* the capture ended without a graph */
  } else if (!m) {       /* a capture begun with the native API */
    pthread_mutex_unlock(&acl__lock);
    m = new_model(CAPTURED, CAPTURING);
    pthread_mutex_lock(&acl__lock);
    if (!m)
      r = acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "out of memory");
  }
  evrt_graph_t *gs = NULL;
  if (r == ACL_SUCCESS && !(gs = malloc(sizeof *gs)))
    r = acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "out of memory");
  if (r == ACL_SUCCESS) {
    gs[0] = g;
    if ((r = make_ready(fn, m, gs, 1)) == ACL_SUCCESS) {
      m->cap_id = 0;
      *modelRI = (aclmdlRI)m;
      g = NULL;
      gs = NULL;
    }
  }
  if (r != ACL_SUCCESS && m)
    free_model(m);
  pthread_mutex_unlock(&acl__lock);
  free(gs);
  if (g)
    evrt_graph_destroy(g);
  return r;
}

aclError aclmdlRICaptureThreadExchangeMode(aclmdlRICaptureMode *mode) {
  static const char fn[] = "aclmdlRICaptureThreadExchangeMode";
  if (!mode)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "mode is NULL");
  if ((unsigned)*mode > ACL_MODEL_RI_CAPTURE_MODE_RELAXED)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn, "unknown mode %d",
                     (int)*mode);
  evrt_capture_mode_t m = (evrt_capture_mode_t)*mode;
  evrt_status_t st = evrt_thread_exchange_capture_mode(&m);
  if (st)
    return acl__st(st, fn);
  *mode = (aclmdlRICaptureMode)m;
  return ACL_SUCCESS;
}

/* ----------------------------------------------------------- execution */

/* acl__lock held: launch every graph of the READY model m on h. */
static aclError launch_locked(const char *fn, struct mdl *m, evrt_stream_t h) {
  if (m->state != READY)
    return acl__fail(ACL_ERROR_RT_MODEL_CAPTURED, fn,
                     "the model is still being %s",
                     m->state == CAPTURING ? "captured" : "built");
  for (uint32_t i = 0; i < m->nx; i++) {
    evrt_status_t st = evrt_graph_launch(m->x[i], h);
    if (st)
      return acl__st(st, fn);
  }
  return ACL_SUCCESS;
}

aclError aclmdlRIExecuteAsync(aclmdlRI modelRI, aclrtStream stream) {
  static const char fn[] = "aclmdlRIExecuteAsync";
  evrt_stream_t h;
  aclError r = acl__stream(fn, stream, &h);
  struct mdl *m;
  if (r || (r = lock_model(fn, modelRI, &m)))
    return r;
  r = launch_locked(fn, m, h);
  pthread_mutex_unlock(&acl__lock);
  return r;
}

aclError aclmdlRIExecute(aclmdlRI modelRI, int32_t timeout) {
  static const char fn[] = "aclmdlRIExecute";
  if (timeout < -1 || timeout == 0)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "timeout %d: must be -1 (forever) or > 0 ms",
                     (int)timeout);
  struct mdl *m;
  aclError r = lock_model(fn, modelRI, &m);
  if (r)
    return r;
  evrt_status_t st = EVRT_SUCCESS;
  if (!m->exec_stream)
    st = evrt_stream_create(&m->exec_stream, -1, 0, 0);
  evrt_stream_t h = m->exec_stream;
  r = st ? acl__st(st, fn) : launch_locked(fn, m, h);
  pthread_mutex_unlock(&acl__lock);
  if (r)
    return r;
  st = evrt_stream_synchronize_timeout(
      h, timeout < 0 ? -1 : (int64_t)timeout * 1000000);
  return acl__st2(st, EVRT_ERROR_TIMEOUT, ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, fn);
}

aclError aclmdlRIDestroy(aclmdlRI modelRI) {
  static const char fn[] = "aclmdlRIDestroy";
  struct mdl *m;
  aclError r = lock_model(fn, modelRI, &m);
  if (r)
    return r;
  if (m->kind == CAPTURED && m->state == CAPTURING) {
    pthread_mutex_unlock(&acl__lock);
    return acl__fail(ACL_ERROR_RT_MODEL_CAPTURED, fn,
                     "the model is being captured: end the capture first");
  }
  free_model(m);
  pthread_mutex_unlock(&acl__lock);
  return ACL_SUCCESS;
}

/* ------------------------------------------------------------- building */

aclError aclmdlRIBuildBegin(aclmdlRI *modelRI, uint32_t flag) {
  static const char fn[] = "aclmdlRIBuildBegin";
  if (!modelRI)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "modelRI is NULL");
  if (flag != 0)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "flag 0x%x is reserved: pass 0", flag);
  struct mdl *m = new_model(BUILT, BUILDING);
  if (!m)
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "out of memory");
  *modelRI = (aclmdlRI)m;
  return ACL_SUCCESS;
}

/* acl__lock held: the model bound to stream h, if any, and the binding. */
static struct mdl *bound_to(evrt_stream_t h, uint32_t *k) {
  for (struct mdl *m = models; m; m = m->next)
    for (uint32_t i = 0; i < m->nb; i++)
      if (m->b[i].h == h) {
        *k = i;
        return m;
      }
  return NULL;
}

aclError aclmdlRIBindStream(aclmdlRI modelRI, aclrtStream stream,
                            uint32_t flag) {
  static const char fn[] = "aclmdlRIBindStream";
  if (flag != ACL_MODEL_STREAM_FLAG_HEAD &&
      flag != ACL_MODEL_STREAM_FLAG_DEFAULT)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "flag 0x%x: ACL_MODEL_STREAM_FLAG_HEAD or "
                     "ACL_MODEL_STREAM_FLAG_DEFAULT",
                     flag);
  if (!stream)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "stream is NULL");
  evrt_stream_t h = (evrt_stream_t)stream;
  uint64_t sid;
  evrt_status_t st = evrt_stream_get_id(h, &sid);
  if (st)
    return acl__st(st, fn);
  struct mdl *m;
  aclError r = lock_model(fn, modelRI, &m);
  if (r)
    return r;
  struct acl__stream *meta = acl__map_get(&acl__streams, sid);
  uint32_t k = 0;
  struct bound *nb = NULL;
  if (m->kind != BUILT || m->state != BUILDING)
    r = acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                  "the model is not being built (aclmdlRIBuildBegin)");
  else if (!meta || !(meta->flags & ACL_STREAM_PERSISTENT))
    r = acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                  "only a stream created with ACL_STREAM_PERSISTENT can be "
                  "bound to a model");
  else if (bound_to(h, &k))
    r = acl__fail(ACL_ERROR_RT_STREAM_MODEL, fn,
                  "the stream is bound to a model already");
  else if (flag == ACL_MODEL_STREAM_FLAG_DEFAULT)
    r = acl__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, fn,
                  "streams activated during execution (aclrtActiveStream) "
                  "are not supported: bind with ACL_MODEL_STREAM_FLAG_HEAD");
  else if (!(nb = realloc(m->b, (m->nb + 1) * sizeof *nb)))
    r = acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "out of memory");
  if (nb) {
    m->b = nb;
    /* tasks issued on a bound stream are the model's, not run now */
    st = evrt_stream_begin_capture(h, EVRT_CAPTURE_MODE_RELAXED);
    if (st)
      r = acl__st(st, fn);
    else
      m->b[m->nb++] = (struct bound){h, false, NULL};
  }
  pthread_mutex_unlock(&acl__lock);
  return r;
}

/* acl__lock held, m locked: m's binding of stream h, or a failure. */
static aclError binding(const char *fn, struct mdl *m, aclrtStream stream,
                        uint32_t *k) {
  uint32_t i = 0;
  while (i < m->nb && m->b[i].h != (evrt_stream_t)stream)
    i++;
  if (!stream || i == m->nb)
    return acl__fail(ACL_ERROR_RT_STREAM_MODEL, fn,
                     "the stream is not bound to this model");
  *k = i;
  return ACL_SUCCESS;
}

aclError aclmdlRIEndTask(aclmdlRI modelRI, aclrtStream stream) {
  static const char fn[] = "aclmdlRIEndTask";
  struct mdl *m;
  uint32_t k = 0;
  aclError r = lock_model(fn, modelRI, &m);
  if (r)
    return r;
  if ((r = binding(fn, m, stream, &k)) == ACL_SUCCESS && m->b[k].ended)
    r = acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                  "aclmdlRIEndTask was called on this stream already");
  if (r == ACL_SUCCESS) {
    evrt_status_t st = evrt_stream_end_capture(m->b[k].h, &m->b[k].g);
    m->b[k].ended = true; /* the capture ended, graph or not */
    if (st)
      r = acl__st(st, fn);
  }
  pthread_mutex_unlock(&acl__lock);
  return r;
}

aclError aclmdlRIBuildEnd(aclmdlRI modelRI, void *reserve) {
  static const char fn[] = "aclmdlRIBuildEnd";
  if (reserve)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "reserve is a reserved parameter and must be NULL");
  struct mdl *m;
  aclError r = lock_model(fn, modelRI, &m);
  if (r)
    return r;
  if (m->kind != BUILT || m->state != BUILDING)
    r = acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                  "the model is not being built (aclmdlRIBuildBegin)");
  for (uint32_t i = 0; r == ACL_SUCCESS && i < m->nb; i++)
    if (!m->b[i].g)
      r = acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                    "a bound stream has no aclmdlRIEndTask (or its tasks "
                    "broke a capture rule)");
  evrt_graph_t *gs = NULL;
  if (r == ACL_SUCCESS && !(gs = calloc(m->nb ? m->nb : 1, sizeof *gs)))
    r = acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "out of memory");
  if (r == ACL_SUCCESS) {
    for (uint32_t i = 0; i < m->nb; i++)
      gs[i] = m->b[i].g;
    if ((r = make_ready(fn, m, gs, m->nb)) == ACL_SUCCESS) {
      for (uint32_t i = 0; i < m->nb; i++)
        m->b[i].g = NULL; /* the model's now */
      gs = NULL;
    }
  }
  pthread_mutex_unlock(&acl__lock);
  free(gs);
  return r;
}

aclError aclmdlRIUnbindStream(aclmdlRI modelRI, aclrtStream stream) {
  static const char fn[] = "aclmdlRIUnbindStream";
  struct mdl *m;
  uint32_t k = 0;
  aclError r = lock_model(fn, modelRI, &m);
  if (r)
    return r;
  if ((r = binding(fn, m, stream, &k)) == ACL_SUCCESS) {
    struct bound b = m->b[k];
    if (!b.ended) /* bound, never ended: its tasks are dropped */
      evrt_stream_end_capture(b.h, &b.g);
    if (b.g)
      evrt_graph_destroy(b.g);
    m->b[k] = m->b[--m->nb];
  }
  pthread_mutex_unlock(&acl__lock);
  return r;
}

aclError aclmdlRISetName(aclmdlRI modelRI, const char *name) {
  static const char fn[] = "aclmdlRISetName";
  if (!name)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "name is NULL");
  struct mdl *m;
  aclError r = lock_model(fn, modelRI, &m);
  if (r)
    return r;
  snprintf(m->name, sizeof m->name, "%s", name);
  pthread_mutex_unlock(&acl__lock);
  return ACL_SUCCESS;
}

aclError aclmdlRIGetName(aclmdlRI modelRI, uint32_t maxLen, char *name) {
  static const char fn[] = "aclmdlRIGetName";
  if (!name)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "name is NULL");
  struct mdl *m;
  aclError r = lock_model(fn, modelRI, &m);
  if (r)
    return r;
  if (maxLen <= strlen(m->name))
    r = acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                  "maxLen %u cannot hold the name (%zu bytes and its end)",
                  maxLen, strlen(m->name));
  else
    memcpy(name, m->name, strlen(m->name) + 1);
  pthread_mutex_unlock(&acl__lock);
  return r;
}

aclError aclmdlRIGetId(aclmdlRI modelRI, uint32_t *modelRIId) {
  static const char fn[] = "aclmdlRIGetId";
  if (!modelRIId)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "modelRIId is NULL");
  struct mdl *m;
  aclError r = lock_model(fn, modelRI, &m);
  if (r)
    return r;
  *modelRIId = m->id;
  pthread_mutex_unlock(&acl__lock);
  return ACL_SUCCESS;
}

/* -------------------------------------------------------- introspection */

/* acl__lock held: m's lanes, made once (READY models only). */
static aclError model_lanes(const char *fn, struct mdl *m) {
  if (m->state != READY)
    return acl__fail(ACL_ERROR_RT_MODEL_CAPTURED, fn,
                     "the model is still being %s",
                     m->state == CAPTURING ? "captured" : "built");
  if (m->lanes || m->nx == 0)
    return ACL_SUCCESS;
  uint32_t total = 0, *count = calloc(m->nx, sizeof *count);
  if (!count)
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "out of memory");
  for (uint32_t i = 0; i < m->nx; i++) {
    evrt_status_t st = evrt_graph_lane_count(m->g[i], &count[i]);
    if (st) {
      free(count);
      return acl__st(st, fn);
    }
    total += count[i];
  }
  struct mdl_lane *l = calloc(total ? total : 1, sizeof *l);
  if (!l) {
    free(count);
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "out of memory");
  }
  uint32_t k = 0;
  for (uint32_t i = 0; i < m->nx; i++)
    for (uint32_t j = 0; j < count[i]; j++)
      l[k++] = (struct mdl_lane){.graph = i, .lane = j};
  free(count);
  m->lanes = l;
  m->nlanes = total;
  return ACL_SUCCESS;
}

aclError aclmdlRIGetStreams(aclmdlRI modelRI, aclrtStream *streams,
                            uint32_t *numStreams) {
  static const char fn[] = "aclmdlRIGetStreams";
  if (!numStreams)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "numStreams is NULL");
  struct mdl *m;
  aclError r = lock_model(fn, modelRI, &m);
  if (r)
    return r;
  if ((r = model_lanes(fn, m)) == ACL_SUCCESS) {
    if (streams && *numStreams < m->nlanes) {
      r = acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                    "streams holds %u entries; the model has %u streams",
                    *numStreams, m->nlanes);
    } else {
      for (uint32_t i = 0; streams && i < m->nlanes; i++)
        streams[i] = &m->lanes[i];
      *numStreams = m->nlanes;
    }
  }
  pthread_mutex_unlock(&acl__lock);
  return r;
}

/* Is h the address of one of the n records of size sz at base (a handle
 * the layer gave out), never dereferenced to find out. */
static bool is_record(const void *h, const void *base, uint32_t n,
                      size_t sz) {
  const char *p = h, *b = base;
  return n && p >= b && p < b + (size_t)n * sz && (size_t)(p - b) % sz == 0;
}

/* acl__lock held: the lane whose handle is h, or NULL. */
static struct mdl_lane *find_lane(const void *h, struct mdl **owner) {
  for (struct mdl *m = models; m; m = m->next)
    if (is_record(h, m->lanes, m->nlanes, sizeof *m->lanes)) {
      *owner = m;
      return (struct mdl_lane *)h;
    }
  return NULL;
}

/* acl__lock held: the lane's tasks, made once. */
static aclError lane_tasks(const char *fn, struct mdl *m, struct mdl_lane *l) {
  if (l->tasks)
    return ACL_SUCCESS;
  size_t n = 0;
  evrt_status_t st = evrt_graph_node_count(m->g[l->graph], &n);
  if (st)
    return acl__st(st, fn);
  struct mdl_task *t = calloc(n ? n : 1, sizeof *t);
  if (!t)
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "out of memory");
  uint32_t k = 0;
  for (size_t i = 0; i < n; i++) {
    evrt_graph_node_type_t type;
    uint32_t lane;
    if ((st = evrt_graph_node_get(m->g[l->graph], i, &type, &lane))) {
      free(t);
      return acl__st(st, fn);
    }
    if (lane == l->lane) { /* a lane's nodes run in index order */
      t[k] = (struct mdl_task){.lane = l, .seq = k, .type = type};
      k++;
    }
  }
  l->tasks = t;
  l->ntasks = k;
  return ACL_SUCCESS;
}

aclError aclmdlRIGetTasksByStream(aclrtStream stream, aclmdlRITask *tasks,
                                  uint32_t *numTasks) {
  static const char fn[] = "aclmdlRIGetTasksByStream";
  if (!stream)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "stream is NULL");
  if (!numTasks)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "numTasks is NULL");
  pthread_mutex_lock(&acl__lock);
  struct mdl *m = NULL;
  struct mdl_lane *l = find_lane(stream, &m);
  aclError r;
  if (!l)
    r = acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                  "stream %p is not a stream of a model runtime instance "
                  "(aclmdlRIGetStreams lists them)",
                  stream);
  else if ((r = lane_tasks(fn, m, l)) == ACL_SUCCESS) {
    if (tasks && *numTasks < l->ntasks) {
      r = acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                    "tasks holds %u entries; the stream has %u tasks",
                    *numTasks, l->ntasks);
    } else {
      for (uint32_t i = 0; tasks && i < l->ntasks; i++)
        tasks[i] = &l->tasks[i];
      *numTasks = l->ntasks;
    }
  }
  pthread_mutex_unlock(&acl__lock);
  return r;
}

/* acl__lock held: the task whose handle is h, or NULL. */
static struct mdl_task *find_task(const void *h) {
  for (struct mdl *m = models; m; m = m->next)
    for (uint32_t i = 0; i < m->nlanes; i++) {
      struct mdl_lane *l = &m->lanes[i];
      if (is_record(h, l->tasks, l->ntasks, sizeof *l->tasks))
        return (struct mdl_task *)h;
    }
  return NULL;
}

/* The task behind h with acl__lock held, or an error (lock released). */
static aclError lock_task(const char *fn, aclmdlRITask h, const void *out,
                          struct mdl_task **t) {
  if (!h)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "task is NULL");
  if (!out)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "output is NULL");
  pthread_mutex_lock(&acl__lock);
  if (!(*t = find_task(h))) {
    pthread_mutex_unlock(&acl__lock);
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "task %p is not a task of a live model runtime instance",
                     h);
  }
  return ACL_SUCCESS;
}

aclError aclmdlRITaskGetType(aclmdlRITask task, aclmdlRITaskType *type) {
  static const char fn[] = "aclmdlRITaskGetType";
  struct mdl_task *t;
  aclError r = lock_task(fn, task, type, &t);
  if (r)
    return r;
  switch (t->type) {
  case EVRT_GRAPH_NODE_EVENT_RECORD:
    *type = ACL_MODEL_RI_TASK_EVENT_RECORD;
    break;
  case EVRT_GRAPH_NODE_EVENT_WAIT:
    *type = ACL_MODEL_RI_TASK_EVENT_WAIT;
    break;
  case EVRT_GRAPH_NODE_EVENT_RESET:
    *type = ACL_MODEL_RI_TASK_EVENT_RESET;
    break;
  case EVRT_GRAPH_NODE_VALUE_WRITE:
    *type = ACL_MODEL_RI_TASK_VALUE_WRITE;
    break;
  case EVRT_GRAPH_NODE_VALUE_WAIT:
    *type = ACL_MODEL_RI_TASK_VALUE_WAIT;
    break;
  default: /* no kernels in this layer: host functions, copies, fills */
    *type = ACL_MODEL_RI_TASK_DEFAULT;
  }
  pthread_mutex_unlock(&acl__lock);
  return ACL_SUCCESS;
}

aclError aclmdlRITaskGetSeqId(aclmdlRITask task, uint32_t *id) {
  static const char fn[] = "aclmdlRITaskGetSeqId";
  struct mdl_task *t;
  aclError r = lock_task(fn, task, id, &t);
  if (r)
    return r;
  *id = t->seq;
  pthread_mutex_unlock(&acl__lock);
  return ACL_SUCCESS;
}

/* --------------------------------------------------------------- labels */

/* acl__lock held: the live label h, or NULL. */
static struct label *find_label(aclrtLabel h) {
  struct label *l = labels;
  while (l && l != (struct label *)h)
    l = l->next;
  return l;
}

aclError aclrtCreateLabel(aclrtLabel *label) {
  static const char fn[] = "aclrtCreateLabel";
  if (!label)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "label is NULL");
  struct label *l = calloc(1, sizeof *l);
  if (!l)
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "out of memory");
  pthread_mutex_lock(&acl__lock);
  if (nlabels >= MAX_LABELS) {
    pthread_mutex_unlock(&acl__lock);
    free(l);
    return acl__fail(ACL_ERROR_RT_INTERNAL_ERROR, fn,
                     "a process has at most %u labels", MAX_LABELS);
  }
  l->id = ++next_label_id;
  l->next = labels;
  labels = l;
  nlabels++;
  pthread_mutex_unlock(&acl__lock);
  *label = (aclrtLabel)l;
  return ACL_SUCCESS;
}

aclError aclrtDestroyLabel(aclrtLabel label) {
  static const char fn[] = "aclrtDestroyLabel";
  if (!label)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "label is NULL");
  pthread_mutex_lock(&acl__lock);
  struct label **p = &labels;
  while (*p && *p != (struct label *)label)
    p = &(*p)->next;
  struct label *l = *p;
  if (l) {
    *p = l->next;
    nlabels--;
  }
  pthread_mutex_unlock(&acl__lock);
  if (!l)
    return acl__fail(ACL_ERROR_RT_INVALID_HANDLE, fn,
                     "label %p is destroyed or not a label", label);
  free(l); /* graphs keep its id, not the label */
  return ACL_SUCCESS;
}

aclError aclrtSetLabel(aclrtLabel label, aclrtStream stream) {
  static const char fn[] = "aclrtSetLabel";
  if (!label)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "label is NULL");
  evrt_stream_t h;
  aclError r = acl__stream(fn, stream, &h);
  if (r)
    return r;
  pthread_mutex_lock(&acl__lock);
  struct label *l = find_label(label);
  uint32_t k = 0;
  if (!l)
    r = acl__fail(ACL_ERROR_RT_INVALID_HANDLE, fn,
                  "label %p is destroyed or not a label", label);
  else if (!bound_to(h, &k))
    r = acl__fail(ACL_ERROR_RT_STREAM_MODEL, fn,
                  "a label is set on a stream bound to a model "
                  "(aclmdlRIBindStream)");
  else if (l->set)
    r = acl__fail(ACL_ERROR_RT_INTERNAL_ERROR, fn,
                  "the label cannot be set repeatedly");
  else if ((r = acl__st(evrt_stream_capture_label(h, l->id), fn)) ==
           ACL_SUCCESS)
    l->set = true;
  pthread_mutex_unlock(&acl__lock);
  return r;
}

aclError aclrtCreateLabelList(aclrtLabel *labels_in, size_t num,
                              aclrtLabelList *labelList) {
  static const char fn[] = "aclrtCreateLabelList";
  if (!labels_in || !labelList)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "%s is NULL",
                     labels_in ? "labelList" : "labels");
  if (num == 0 || num > MAX_LABELS)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "num %zu is outside (0, %u]",
                     num, MAX_LABELS);
  struct label_list *ll = malloc(sizeof *ll + num * sizeof ll->ids[0]);
  if (!ll)
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "out of memory");
  ll->n = (uint32_t)num;
  aclError r = ACL_SUCCESS;
  pthread_mutex_lock(&acl__lock);
  for (size_t i = 0; i < num && r == ACL_SUCCESS; i++) {
    struct label *l = find_label(labels_in[i]);
    if (!l)
      r = acl__fail(ACL_ERROR_RT_INVALID_HANDLE, fn,
                    "labels[%zu] is destroyed or not a label", i);
    else
      ll->ids[i] = l->id;
  }
  if (r == ACL_SUCCESS) {
    ll->next = lists;
    lists = ll;
    *labelList = (aclrtLabelList)ll;
  }
  pthread_mutex_unlock(&acl__lock);
  if (r)
    free(ll);
  return r;
}

aclError aclrtDestroyLabelList(aclrtLabelList labelList) {
  static const char fn[] = "aclrtDestroyLabelList";
  if (!labelList)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "labelList is NULL");
  pthread_mutex_lock(&acl__lock);
  struct label_list **p = &lists;
  while (*p && *p != (struct label_list *)labelList)
    p = &(*p)->next;
  struct label_list *ll = *p;
  if (ll)
    *p = ll->next;
  pthread_mutex_unlock(&acl__lock);
  if (!ll)
    return acl__fail(ACL_ERROR_RT_INVALID_HANDLE, fn,
                     "labelList %p is destroyed or not a label list",
                     labelList);
  free(ll);
  return ACL_SUCCESS;
}

aclError aclrtSwitchLabelByIndex(void *ptr, uint32_t maxValue,
                                 aclrtLabelList labelList, aclrtStream stream) {
  static const char fn[] = "aclrtSwitchLabelByIndex";
  if (!ptr || !labelList)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "%s is NULL",
                     ptr ? "labelList" : "ptr");
  if (maxValue == 0)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "maxValue (the number of labels) is 0");
  evrt_stream_t h;
  aclError r = acl__stream(fn, stream, &h);
  if (r)
    return r;
  pthread_mutex_lock(&acl__lock);
  struct label_list *ll = lists;
  while (ll && ll != (struct label_list *)labelList)
    ll = ll->next;
  uint32_t k = 0;
  if (!ll)
    r = acl__fail(ACL_ERROR_RT_INVALID_HANDLE, fn,
                  "labelList %p is destroyed or not a label list", labelList);
  else if (!bound_to(h, &k))
    r = acl__fail(ACL_ERROR_RT_STREAM_MODEL, fn,
                  "a switch is issued on a stream bound to a model "
                  "(aclmdlRIBindStream)");
  else
    /* the index (device memory) is read when the model runs; past the
     * last label it takes the last (CANN) */
    r = acl__st(evrt_stream_capture_switch(h, (const uint32_t *)ptr, ll->ids,
                                           maxValue < ll->n ? maxValue : ll->n),
                fn);
  pthread_mutex_unlock(&acl__lock);
  return r;
}
