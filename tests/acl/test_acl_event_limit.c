/* Event resources: taken at record time, limited per device (65535 by
 * default), 207007 past the limit, free again after a reset or destroy.
 * Events the doc calls unlimited (ExWithFlag without SYNC, TIME_LINE-only)
 * take none. */
#include "acl_test.h"

#define LIMIT 65535u

static aclrtEvent ev[LIMIT + 1];

TEST(event_resource_limit) {
  uint32_t avail = 0;
  ASSERT_OK(aclrtGetEventAvailNum(&avail));
  ASSERT_EQ(avail, LIMIT);
  aclrtStream s;
  ASSERT_OK(aclrtCreateStream(&s));
  /* creation takes nothing */
  for (uint32_t i = 0; i <= LIMIT; i++)
    ASSERT_OK(aclrtCreateEventWithFlag(&ev[i], ACL_EVENT_SYNC));
  ASSERT_OK(aclrtGetEventAvailNum(&avail));
  ASSERT_EQ(avail, LIMIT);
  for (uint32_t i = 0; i < LIMIT; i++)
    ASSERT_OK(aclrtRecordEvent(ev[i], s));
  ASSERT_OK(aclrtGetEventAvailNum(&avail));
  ASSERT_EQ(avail, 0);
  ASSERT_ACL(aclrtRecordEvent(ev[LIMIT], s), ACL_ERROR_RT_NO_EVENT_RESOURCE);
  const char *msg = aclGetRecentErrMsg(); /* consumed by ASSERT_ACL on failure only */
  ASSERT(msg != NULL && strstr(msg, "event resource") != NULL);
  /* unlimited kinds still work at the limit */
  aclrtEvent ex, tl;
  ASSERT_OK(aclrtCreateEventExWithFlag(&ex, ACL_EVENT_TIME_LINE));
  ASSERT_OK(aclrtRecordEvent(ex, s));
  ASSERT_OK(aclrtCreateEventWithFlag(&tl, ACL_EVENT_TIME_LINE));
  ASSERT_OK(aclrtRecordEvent(tl, s));
  /* re-recording an event that holds a resource takes no new one */
  ASSERT_OK(aclrtRecordEvent(ev[0], s));
  /* a destroy frees one */
  ASSERT_OK(aclrtDestroyEvent(ev[0]));
  ASSERT_OK(aclrtGetEventAvailNum(&avail));
  ASSERT_EQ(avail, 1);
  ASSERT_OK(aclrtRecordEvent(ev[LIMIT], s));
  ASSERT_OK(aclrtGetEventAvailNum(&avail));
  ASSERT_EQ(avail, 0);
  ASSERT_OK(aclrtRecordEvent(ev[LIMIT], s)); /* already holds one */
  /* a reset frees one, once the reset task has run */
  ASSERT_OK(aclrtResetEvent(ev[1], s));
  ASSERT_OK(aclrtSynchronizeStream(s));
  ASSERT_OK(aclrtGetEventAvailNum(&avail));
  ASSERT_EQ(avail, 1);
  for (uint32_t i = 1; i <= LIMIT; i++)
    ASSERT_OK(aclrtDestroyEvent(ev[i]));
  ASSERT_OK(aclrtDestroyEvent(ex));
  ASSERT_OK(aclrtDestroyEvent(tl));
  ASSERT_OK(aclrtGetEventAvailNum(&avail));
  ASSERT_EQ(avail, LIMIT);
  ASSERT_OK(aclrtDestroyStream(s));
}
