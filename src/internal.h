/*
 * internal.h - core data structures shared by src/, src/cpu/ and src/unix/:
 * the umbrella header, which includes one header per subsystem (core_*.h,
 * listed below in dependency order).  Core files include this one.
 *
 * Lock order (the only nestings that exist; every file that takes two locks
 * repeats the part it uses):
 *
 *     event.lock  ->  stream.plock  ->  pool.lock
 *     timer.lock  (leaf: nothing is taken while holding it)
 *     stream.wlock (leaf: waiters found under it are resumed after release)
 *     stream.flock, value bucket locks (leaves: failure.c, value.c)
 *     stream.plock -> stream.flock (clear_error, failure.c)
 *     capture registry / capture.lock -> stream.plock (capture.c's joins)
 *
 * No user code (host functions) ever runs with any of these held.
 *
 * Memory model summary (details at each atomic):
 *  - stream.done_seq is the completion counter of a stream: item k is done
 *    when done_seq >= k.  It only grows, across stream incarnations too (a
 *    recycled stream slot keeps counting), so a generation (stream, target)
 *    stays valid forever.  It is stored seq_cst by the worker and paired with
 *    a seq_cst read of stream.wake_at (the Dekker pair with waiters, which
 *    lower wake_at to their target and then re-read done_seq).
 *  - event generation fields are published under a seqlock (event.lock);
 *    readers retry on a torn read and never write.
 *  - objects live in type-stable slots (handle.c): memory of a destroyed
 *    object is recycled, never returned to malloc, so a stale pointer held by
 *    a pending item may read it safely and checks the slot generation under
 *    the object's lock before writing.
 */
#ifndef EVRT_INTERNAL_H
#define EVRT_INTERNAL_H

#include "evrt.h"
#include "trace.h"
#include "check/check.h" /* EVRT_CHECK hooks */

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core_base.h"
#include "core_os.h"
#include "core_spin.h"
#include "core_init.h"
#include "core_handle.h"
#include "core_item.h"
#include "core_stream.h"
#include "core_event.h"

/* ------------------------------------------------------------- backend */
/* src/backend.h: the ops table and its dispatch. */
#include "backend.h"

#include "core_device.h"
#include "core_ipc.h"
#include "core_capture.h"
#include "core_failure.h"
#include "core_value.h"

#endif
