/*
 * acl_initcb.c - aclInitCallbackRegister / aclInitCallbackUnRegister /
 * aclFinalizeCallbackRegister / aclFinalizeCallbackUnRegister.
 *
 * As CANN's: one callback per registration type, except ACL_REG_TYPE_OTHER
 * which takes any number (a second one of another type: 500000); a NULL
 * callback is 100000; unregistering one that is not there is 500000.  An
 * init callback registered after aclInit runs at once with the config
 * file's content.  aclInit runs the init callbacks (type order, then
 * registration order) with that content; aclFinalize runs the finalize
 * callbacks; the first failing callback's code is returned.
 *
 * Lock: cb_lock, a recursive mutex (a callback may register another, as
 * CANN allows with its recursive mutex), taken before acl__lock never
 * after it.  Callbacks run with cb_lock held, as in CANN.
 *
 * A callback may also unregister itself or another one while the list is
 * walked (the Python binding's callbacks can): while a walk runs
 * (`walking` > 0, under cb_lock), an unregistered entry is unlinked, marked
 * dead and kept on `graveyard` instead of freed, so the walk never reads
 * freed memory and skips it; the outermost walk frees the graveyard.
 */
#include "acl_internal.h"

#include <stdlib.h>
#include <string.h>

struct cb {
  aclRegisterCallbackType type;
  void *fn; /* aclInitCallbackFunc or aclFinalizeCallbackFunc */
  void *user;
  struct cb *next;
  bool dead;        /* unregistered during a walk: skipped, freed after */
  struct cb *grave; /* next on the graveyard */
};

static pthread_mutex_t cb_lock;
static pthread_once_t cb_once = PTHREAD_ONCE_INIT;
static struct cb *init_cbs, *fini_cbs;
static bool initialized;
static char *config; /* the content of the last aclInit's config file */
static unsigned walking;      /* run_list calls under way (cb_lock) */
static struct cb *graveyard;  /* entries unregistered during them */
static size_t config_len;

static void make_lock(void) {
  pthread_mutexattr_t a;
  pthread_mutexattr_init(&a);
  pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init(&cb_lock, &a);
  pthread_mutexattr_destroy(&a);
  acl__fork_track(&cb_lock, true);
}

static void lock(void) {
  pthread_once(&cb_once, make_lock);
  pthread_mutex_lock(&cb_lock);
}

static aclError reg(const char *fn, struct cb **list,
                    aclRegisterCallbackType type, void *f, void *user) {
  if (!f)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "cbFunc is NULL");
  struct cb *c = malloc(sizeof *c);
  if (!c)
    return acl__fail(ACL_ERROR_BAD_ALLOC, fn, "out of memory");
  lock();
  bool taken = false;
  for (struct cb *x = *list; x && type != ACL_REG_TYPE_OTHER; x = x->next)
    taken |= x->type == type;
  if (!taken) {
    *c = (struct cb){type, f, user, NULL, false, NULL};
    struct cb **pp = list;
    while (*pp)
      pp = &(*pp)->next;
    *pp = c; /* registration order */
  }
  pthread_mutex_unlock(&cb_lock);
  if (taken) {
    free(c);
    return acl__fail(ACL_ERROR_INTERNAL_ERROR, fn,
                     "a callback of type %d is registered already",
                     (int)type);
  }
  return ACL_SUCCESS;
}

static aclError unreg(const char *fn, struct cb **list,
                      aclRegisterCallbackType type, void *f) {
  if (!f)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "cbFunc is NULL");
  lock();
  struct cb *found = NULL;
  for (struct cb **pp = list; *pp; pp = &(*pp)->next)
    if ((*pp)->type == type && (*pp)->fn == f) {
      found = *pp;
      *pp = found->next; /* found->next stays: a walk may stand on it */
      break;
    }
  if (found && walking) {
    found->dead = true;
    found->grave = graveyard;
    graveyard = found;
    found = NULL;
    pthread_mutex_unlock(&cb_lock);
    return ACL_SUCCESS;
  }
  pthread_mutex_unlock(&cb_lock);
  if (!found)
    return acl__fail(ACL_ERROR_INTERNAL_ERROR, fn,
                     "no such callback of type %d", (int)type);
  free(found);
  return ACL_SUCCESS;
}

aclError aclInitCallbackRegister(aclRegisterCallbackType type,
                                 aclInitCallbackFunc cbFunc, void *userData) {
  static const char fn[] = "aclInitCallbackRegister";
  aclError r = reg(fn, &init_cbs, type, (void *)cbFunc, userData);
  if (r)
    return r;
  lock();
  if (initialized) /* CANN: registered after aclInit, it runs at once */
    (void)cbFunc(config ? config : "", config_len, userData);
  pthread_mutex_unlock(&cb_lock);
  return ACL_SUCCESS;
}

aclError aclInitCallbackUnRegister(aclRegisterCallbackType type,
                                   aclInitCallbackFunc cbFunc) {
  return unreg("aclInitCallbackUnRegister", &init_cbs, type, (void *)cbFunc);
}

aclError aclFinalizeCallbackRegister(aclRegisterCallbackType type,
                                     aclFinalizeCallbackFunc cbFunc,
                                     void *userData) {
  return reg("aclFinalizeCallbackRegister", &fini_cbs, type, (void *)cbFunc,
             userData);
}

aclError aclFinalizeCallbackUnRegister(aclRegisterCallbackType type,
                                       aclFinalizeCallbackFunc cbFunc) {
  return unreg("aclFinalizeCallbackUnRegister", &fini_cbs, type,
               (void *)cbFunc);
}

/* Type order: the ACL_REG_TYPE_* values ascending, ACL_REG_TYPE_OTHER last
 * (its value is the largest).  Called with cb_lock held; the head is read
 * again at each pass (a callback may have unlinked it). */
static aclError walk(struct cb **list, bool init) {
  unsigned done_below = 0;
  for (;;) {
    unsigned next = UINT32_MAX; /* the smallest type not run yet */
    for (struct cb *x = *list; x; x = x->next)
      if ((unsigned)x->type >= done_below && (unsigned)x->type < next)
        next = (unsigned)x->type;
    if (next == UINT32_MAX)
      return ACL_SUCCESS;
    for (struct cb *x = *list; x; x = x->next) {
      if ((unsigned)x->type != next || x->dead)
        continue;
      aclError r = init ? ((aclInitCallbackFunc)x->fn)(config ? config : "",
                                                        config_len, x->user)
                        : ((aclFinalizeCallbackFunc)x->fn)(x->user);
      if (r != ACL_SUCCESS)
        return r;
    }
    done_below = next + 1;
  }
}

static aclError run_list(struct cb **list, bool init) {
  walking++;
  aclError r = walk(list, init);
  if (--walking == 0)
    while (graveyard) {
      struct cb *g = graveyard;
      graveyard = g->grave;
      free(g);
    }
  return r;
}

aclError acl__notify_init(const char *cfg, size_t len) {
  lock();
  free(config);
  config = cfg ? malloc(len + 1) : NULL;
  config_len = config ? len : 0;
  if (config) {
    memcpy(config, cfg, len);
    config[len] = '\0';
  }
  aclError r = run_list(&init_cbs, true);
  initialized = r == ACL_SUCCESS;
  pthread_mutex_unlock(&cb_lock);
  if (r)
    return acl__fail(r, "aclInit", "an init callback failed with %d", r);
  return ACL_SUCCESS;
}

aclError acl__notify_finalize(void) {
  lock();
  initialized = false;
  aclError r = run_list(&fini_cbs, false);
  pthread_mutex_unlock(&cb_lock);
  if (r)
    return acl__fail(r, "aclFinalize", "a finalize callback failed with %d",
                     r);
  return ACL_SUCCESS;
}
