/*
 * test.h - harness of evrt's C tests: harness.h plus the evrt status asserts
 * (ASSERT_ST, ASSERT_OK name the status and print the library's detail
 * message).
 */
#ifndef EVRT_TEST_H
#define EVRT_TEST_H

#include "harness.h"

#include <evrt.h>

/* Status check that names the status and the library's detail message. */
#define ASSERT_ST(expr, want)                                                  \
  do {                                                                         \
    evrt_status_t got_ = (expr);                                               \
    if (got_ != (want))                                                        \
      FAIL_("%s returned %s, want %s (%s)", #expr, evrt_err_name(got_),        \
            evrt_err_name(want), evrt_last_error_message());                   \
  } while (0)
#define ASSERT_OK(expr) ASSERT_ST(expr, EVRT_SUCCESS)

int main(int argc, char **argv) { return harness_run(argc, argv) ? 1 : 0; }

#endif
