/*
 * device_after.c - evrt_device_launch_host_func: run a host function once
 * every stream of a device has finished what was enqueued on it before the
 * call (the ACL layer releases freed blocks this way: docs/acl.md).
 *
 * It is built from the ordinary parts: a hidden stream gets one stream wait
 * per stream with work pending, (stream, enq_seq at the call) as a
 * generation, then the host function, and is destroyed at once (it drains,
 * then frees itself).  Its waits park it as any stream wait does (rule 4):
 * no worker is held, and no stream waits for it.  Slots are type-stable and
 * seqs only grow across incarnations, so a stream destroyed or recycled
 * meanwhile still reaches its target.
 *
 * Locks: none of its own (the stream's plock through the push).
 */
#include "internal.h"

#include <string.h>

struct pend {
  struct evrt__stream *s;
  uint64_t target;
};

/* The streams of `device` (EVRT_DEVICE_ALL: any) with work pending now. */
static evrt_status_t snapshot(int device, struct pend **out, uint32_t *nout) {
  struct evrt__table *t = &evrt__streams;
  uint32_t n = atomic_load_explicit(&t->next_unused, memory_order_acquire);
  struct pend *v = NULL;
  uint32_t k = 0, cap = 0;
  for (uint32_t i = 0; i < n; i++) {
    struct evrt__stream *s = (struct evrt__stream *)evrt__table_at(t, i);
    if (!s)
      continue;
    /* acquire: pairs with the producer's release of enq_seq */
    uint64_t target = atomic_load_explicit(&s->enq_seq, memory_order_acquire);
    if (evrt__done(s) >= target ||
        (device != EVRT_DEVICE_ALL &&
         atomic_load_explicit(&s->device, memory_order_relaxed) != device))
      continue;
    if (k == cap) {
      uint32_t ncap = cap ? cap * 2 : 16;
      struct pend *nv = evrt__malloc(ncap * sizeof *nv);
      if (!nv) {
        evrt__free(v);
        return evrt__fail(EVRT_ERROR_OUT_OF_MEMORY,
                          "cannot list the streams with pending work");
      }
      if (k)
        memcpy(nv, v, k * sizeof *v);
      evrt__free(v);
      v = nv;
      cap = ncap;
    }
    v[k].s = s;
    v[k].target = target;
    k++;
  }
  *out = v;
  *nout = k;
  return EVRT_SUCCESS;
}

evrt_status_t evrt_device_launch_host_func(int device, evrt_host_fn fn,
                                           void *user) {
  evrt_status_t st = evrt__ready();
  if (st)
    return st;
  if (device == -1)
    device = evrt__tls_device;
  if (device != EVRT_DEVICE_ALL && (device < 0 || device >= evrt__ndevices))
    return evrt__fail(EVRT_ERROR_INVALID_DEVICE,
                      "device %d out of range (%d devices)", device,
                      evrt__ndevices);
  if (!fn)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "host function is NULL");
  struct pend *v = NULL;
  uint32_t n = 0;
  if ((st = snapshot(device, &v, &n)))
    return st;
  if (n == 0) {
    fn(user); /* nothing pending: now, on the calling thread */
    return EVRT_SUCCESS;
  }
  /* The hidden stream's pushes are not the caller's tasks. */
  uint64_t last_id = evrt__tls_last_stream_id, last_seq = evrt__tls_last_seq;
  struct evrt__stream *h = NULL;
  st = evrt__stream_new(device == EVRT_DEVICE_ALL ? 0 : device, 0, false, &h);
  if (st) {
    evrt__free(v);
    return st;
  }
  uint32_t i = 0;
  for (; i <= n; i++) {
    struct evrt__item *it = evrt__item_new(h);
    if (!it)
      break;
    if (i < n) {
      it->kind = EVRT__ITEM_WAIT;
      it->dep_kind = EVRT__DEP_STREAM;
      memset(&it->u.ev, 0, sizeof it->u.ev);
      it->u.ev.src = v[i].s;
      it->u.ev.target = v[i].target;
    } else {
      it->kind = EVRT__ITEM_HOST_FUNC;
      it->u.host.fn = fn;
      it->u.host.user = user;
    }
    evrt__stream_push(h, it);
  }
  evrt__stream_schedule(h); /* (push only links) */
  evrt__free(v);
  /* Drains, then frees itself; an incomplete one (no memory) just ends
   * without the host function. */
  evrt_stream_destroy((evrt_stream_t)evrt__stream_handle(h));
  evrt__tls_last_stream_id = last_id;
  evrt__tls_last_seq = last_seq;
  if (i <= n)
    return evrt__fail(EVRT_ERROR_OUT_OF_MEMORY,
                      "cannot allocate the items of the device-wide wait");
  return EVRT_SUCCESS;
}
