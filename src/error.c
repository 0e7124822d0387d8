/*
 * error.c - status names and messages (from EVRT_ERRNO_MAP) and the
 * per-thread last-error detail.
 */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>

static EVRT_TLS evrt_status_t tls_last;
static _Thread_local char tls_msg[256];

const char *evrt_strerror(evrt_status_t st) {
  switch (st) {
#define XX(name, value, msg)                                                   \
  case EVRT_##name:                                                            \
    return msg;
    EVRT_ERRNO_MAP(XX)
#undef XX
  }
  return "unknown evrt status";
}

const char *evrt_err_name(evrt_status_t st) {
  switch (st) {
#define XX(name, value, msg)                                                   \
  case EVRT_##name:                                                            \
    return "EVRT_" #name;
    EVRT_ERRNO_MAP(XX)
#undef XX
  }
  return "EVRT_UNKNOWN";
}

const char *evrt_last_error_message(void) { return tls_msg; }
evrt_status_t evrt_last_error(void) { return tls_last; }
void evrt_clear_last_error(void) {
  tls_last = EVRT_SUCCESS;
  tls_msg[0] = 0;
}

evrt_status_t evrt__fail(evrt_status_t st, const char *fmt, ...) {
  va_list ap;
  int n = snprintf(tls_msg, sizeof tls_msg, "%s: ", evrt_err_name(st));
  va_start(ap, fmt);
  if (n > 0 && (size_t)n < sizeof tls_msg)
    vsnprintf(tls_msg + n, sizeof tls_msg - (size_t)n, fmt, ap);
  va_end(ap);
  tls_last = st;
  return st;
}
