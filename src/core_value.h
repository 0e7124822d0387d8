/*
 * core_value.h - stream-ordered value writes and waits (src/value.c).
 * evrt__value_armed is relaxed (a hint set once); parked waits live in
 * buckets under their bucket locks (leaves).
 */
#ifndef EVRT_CORE_VALUE_H
#define EVRT_CORE_VALUE_H

#include "core_base.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct evrt__stream;
struct evrt__item;

/* ---------------------------------------------------------------- values */
/* src/value.c.  evrt__value_armed is set once the first value wait parks
 * (never cleared): until then copies, fills and host functions pay one
 * relaxed load and nothing else. */
extern atomic_bool evrt__value_armed;
bool evrt__value_exec_wait(struct evrt__stream *s, struct evrt__item *it);
void evrt__value_exec_write(struct evrt__item *it);
/* A parked value wait is skipped (abort, stop): take it off its bucket. */
void evrt__value_cancel(struct evrt__item *it);
/* The worker wrote [p, p+n) (copy, fill): wake the waits on words there. */
void evrt__value_written(const void *p, size_t n);
/* A host function returned: re-check the waits that host functions may
 * satisfy. */
void evrt__value_kick(void);

#endif
