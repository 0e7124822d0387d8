/*
 * core_device.h - devices (src/device.c): the default stream and the
 * event resource count of each.  ev_used is changed by atomic
 * read-modify-writes only; no lock.
 */
#ifndef EVRT_CORE_DEVICE_H
#define EVRT_CORE_DEVICE_H

#include "core_base.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* -------------------------------------------------------------- devices */
struct evrt__device {
  struct evrt__stream *def;
  atomic_uint ev_limit;
  atomic_uint ev_used;
};
extern int evrt__ndevices;
extern struct evrt__device *evrt__devices;
extern EVRT_TLS int evrt__tls_device;
evrt_status_t evrt__devices_init(void);
bool evrt__event_resource_take(int device);
void evrt__event_resource_give(int device);

#endif
