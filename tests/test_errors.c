/* Errors: one table makes the enum, names and messages; per-thread detail. */
#include "test.h"

TEST(names_and_messages_come_from_one_table) {
  ASSERT(strcmp(evrt_err_name(EVRT_SUCCESS), "EVRT_SUCCESS") == 0);
  ASSERT(strcmp(evrt_err_name(EVRT_NOT_READY), "EVRT_NOT_READY") == 0);
  ASSERT(strcmp(evrt_err_name(EVRT_ERROR_INVALID_HANDLE),
                "EVRT_ERROR_INVALID_HANDLE") == 0);
  ASSERT(strcmp(evrt_strerror(EVRT_SUCCESS), "success") == 0);
  ASSERT(strstr(evrt_strerror(EVRT_ERROR_TIMEOUT), "timed out") != NULL);
  ASSERT(strcmp(evrt_err_name((evrt_status_t)12345), "EVRT_UNKNOWN") == 0);
  ASSERT_EQ(EVRT_SUCCESS, 0);
  /* every listed status has a distinct name */
#define XX(n, v, m) {EVRT_##n, "EVRT_" #n},
  struct { int v; const char *name; } all[] = {EVRT_ERRNO_MAP(XX)};
#undef XX
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
    ASSERT(strcmp(evrt_err_name((evrt_status_t)all[i].v), all[i].name) == 0);
    ASSERT(strlen(evrt_strerror((evrt_status_t)all[i].v)) > 0);
  }
}

TEST(last_error_carries_detail_per_thread) {
  evrt_clear_last_error();
  ASSERT_EQ(evrt_last_error(), EVRT_SUCCESS);
  ASSERT(strcmp(evrt_last_error_message(), "") == 0);
  ASSERT_ST(evrt_set_device(99), EVRT_ERROR_INVALID_DEVICE);
  ASSERT_EQ(evrt_last_error(), EVRT_ERROR_INVALID_DEVICE);
  ASSERT(strstr(evrt_last_error_message(), "99") != NULL);
  ASSERT_ST(evrt_event_create(NULL, 0), EVRT_ERROR_INVALID_VALUE);
  ASSERT(strstr(evrt_last_error_message(), "event") != NULL);
  evrt_clear_last_error();
  ASSERT(strcmp(evrt_last_error_message(), "") == 0);
}

static void *other_thread(void *p) {
  *(int *)p = evrt_last_error() == EVRT_SUCCESS;
  return NULL;
}

TEST(last_error_is_not_shared_between_threads) {
  ASSERT_ST(evrt_set_device(-5), EVRT_ERROR_INVALID_DEVICE);
  int clean = 0;
  pthread_t t;
  pthread_create(&t, NULL, other_thread, &clean);
  pthread_join(t, NULL);
  ASSERT(clean);
  ASSERT_EQ(evrt_last_error(), EVRT_ERROR_INVALID_DEVICE);
}

TEST(version) {
  ASSERT_EQ(evrt_version(), EVRT_VERSION_HEX);
  char buf[32];
  snprintf(buf, sizeof buf, "%d.%d.%d", EVRT_VERSION_MAJOR, EVRT_VERSION_MINOR,
           EVRT_VERSION_PATCH);
  ASSERT(strcmp(evrt_version_string(), buf) == 0);
}
