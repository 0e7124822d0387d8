/*
 * chaos.c - EVRT_CHAOS=SEED under EVRT_CHECK=1: a seeded perturbation of
 * the cpu scheduler, so that a program whose result depends on a race
 * computes it wrong under some seeds (evrt-check runs a program under
 * several).  Before a host function, copy or fill begins, its worker sleeps
 * with probability 1/4 for 1-256 us, drawn from (seed, stream id, seq):
 * the same seed delays the same items by the same amounts, and different
 * seeds shift independent streams against each other.
 *
 * What it is not: an exact replay.  The order in which the worker threads
 * then interleave still depends on the machine; replaying the same order
 * of stream items needs the deterministic backend (docs/check.md).
 */
#include "cimpl.h"

#include <errno.h>

static uint64_t seed;
bool evrt__chaos_on;

void evrt__chaos_init(void) {
  const char *v = getenv("EVRT_CHAOS");
  if (!v || !*v)
    return;
  char *end;
  errno = 0;
  unsigned long long s = strtoull(v, &end, 0);
  if (errno || *end) {
    fprintf(stderr, "evrt-check: note: EVRT_CHAOS=%s is not a number; "
                    "no perturbation\n", v);
    return;
  }
  seed = s;
  evrt__chaos_on = true;
}

static uint64_t mix(uint64_t x) {
  /* splitmix64's finalizer */
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

void evrt__chaos_delay(uint64_t stream_id, uint64_t seq) {
  uint64_t h = mix(seed ^ mix(stream_id * 0x9e3779b97f4a7c15ull + seq));
  if (h & 3)
    return;
  evrt__sleep_ns(((h >> 8) % 256 + 1) * 1000);
}
