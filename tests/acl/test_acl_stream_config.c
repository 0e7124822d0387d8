/* Stream configuration handles, aclrtCreateStreamV2, aclrtStreamGetFlags and
 * aclrtStreamGetPriority; bad input gets CANN's codes and changes nothing. */
#include "acl_test.h"

TEST(config_handle_creates_stream) {
  aclrtStreamConfigHandle *h = aclrtCreateStreamConfigHandle();
  ASSERT(h != NULL);
  ASSERT(h->flag == 0 && h->priority == 0 && h->workptr == NULL);
  uint32_t prio = 5;
  size_t flag = ACL_STREAM_FAST_LAUNCH | ACL_STREAM_FAST_SYNC;
  ASSERT_OK(aclrtSetStreamConfigOpt(h, ACL_RT_STREAM_PRIORITY, &prio, sizeof prio));
  ASSERT_OK(aclrtSetStreamConfigOpt(h, ACL_RT_STREAM_FLAG, &flag, sizeof flag));
  char work[64];
  void *wp = work;
  size_t ws = sizeof work;
  ASSERT_OK(aclrtSetStreamConfigOpt(h, ACL_RT_STREAM_WORK_ADDR_PTR, &wp, sizeof wp));
  ASSERT_OK(aclrtSetStreamConfigOpt(h, ACL_RT_STREAM_WORK_SIZE, &ws, sizeof ws));
  ASSERT(h->priority == 5 && h->flag == 3 && h->workptr == work && h->workSize == 64);
  aclrtStream s = NULL;
  ASSERT_OK(aclrtCreateStreamV2(&s, h));
  uint32_t got = 99;
  ASSERT_OK(aclrtStreamGetPriority(s, &got));
  ASSERT_EQ(got, 5);
  ASSERT_OK(aclrtStreamGetFlags(s, &got));
  ASSERT_EQ(got, 3);
  /* the stream works */
  gate_t g;
  gate_init(&g);
  gate_open(&g);
  ASSERT_OK(gate_on(s, &g));
  ASSERT_OK(aclrtSynchronizeStream(s));
  ASSERT_EQ(atomic_load(&g.passed), 1);
  ASSERT_OK(aclrtDestroyStream(s));
  ASSERT_OK(aclrtDestroyStreamConfigHandle(h));
}

TEST(flag_as_uint32_and_null_handle) {
  aclrtStreamConfigHandle *h = aclrtCreateStreamConfigHandle();
  ASSERT(h != NULL);
  uint32_t flag32 = ACL_STREAM_PERSISTENT;
  ASSERT_OK(aclrtSetStreamConfigOpt(h, ACL_RT_STREAM_FLAG, &flag32, sizeof flag32));
  ASSERT_EQ(h->flag, ACL_STREAM_PERSISTENT);
  ASSERT_OK(aclrtDestroyStreamConfigHandle(h));
  aclrtStream s = NULL;
  uint32_t got = 99;
  ASSERT_OK(aclrtCreateStreamV2(&s, NULL)); /* default configuration */
  ASSERT_OK(aclrtStreamGetFlags(s, &got));
  ASSERT_EQ(got, 0);
  ASSERT_OK(aclrtDestroyStream(s));
}

TEST(with_config_and_default_stream) {
  aclrtStream s;
  uint32_t got = 99;
  ASSERT_OK(aclrtCreateStreamWithConfig(&s, 3, ACL_STREAM_HUGE));
  ASSERT_OK(aclrtStreamGetPriority(s, &got));
  ASSERT_EQ(got, 3);
  ASSERT_OK(aclrtStreamGetFlags(s, &got));
  ASSERT_EQ(got, ACL_STREAM_HUGE);
  ASSERT_OK(aclrtDestroyStream(s));
  ASSERT_OK(aclrtStreamGetFlags(NULL, &got)); /* default stream */
  ASSERT_EQ(got, 0);
  ASSERT_OK(aclrtStreamGetPriority(NULL, &got));
  ASSERT_EQ(got, 0);
}

TEST(bad_input) {
  aclrtStreamConfigHandle *h = aclrtCreateStreamConfigHandle();
  ASSERT(h != NULL);
  uint32_t prio = 8;
  uint64_t wide = 1;
  uint16_t narrow = 1;
  ASSERT_ACL(aclrtSetStreamConfigOpt(h, ACL_RT_STREAM_PRIORITY, &prio, sizeof prio),
             ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtSetStreamConfigOpt(h, ACL_RT_STREAM_PRIORITY, &wide, sizeof wide),
             ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtSetStreamConfigOpt(h, ACL_RT_STREAM_FLAG, &narrow, sizeof narrow),
             ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtSetStreamConfigOpt(h, ACL_RT_STREAM_WORK_SIZE, &narrow, sizeof narrow),
             ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtSetStreamConfigOpt(h, (aclrtStreamConfigAttr)4, &wide, sizeof wide),
             ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtSetStreamConfigOpt(h, ACL_RT_STREAM_FLAG, NULL, 8), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtSetStreamConfigOpt(NULL, ACL_RT_STREAM_FLAG, &wide, 8), ACL_ERROR_INVALID_PARAM);
  ASSERT(h->priority == 0 && h->flag == 0 && h->workSize == 0); /* unchanged */
  ASSERT_ACL(aclrtCreateStreamV2(NULL, h), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtDestroyStreamConfigHandle(NULL), ACL_ERROR_INVALID_PARAM);
  ASSERT_OK(aclrtDestroyStreamConfigHandle(h));
  aclrtStream s;
  uint32_t got = 77;
  ASSERT_OK(aclrtCreateStream(&s));
  ASSERT_ACL(aclrtStreamGetFlags(s, NULL), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtStreamGetPriority(s, NULL), ACL_ERROR_INVALID_PARAM);
  ASSERT_OK(aclrtDestroyStream(s));
  ASSERT_ACL(aclrtStreamGetFlags(s, &got), ACL_ERROR_RT_INVALID_HANDLE);
  ASSERT_ACL(aclrtStreamGetPriority(s, &got), ACL_ERROR_RT_INVALID_HANDLE);
  ASSERT_EQ(got, 77);
  (void)aclGetRecentErrMsg();
}

/* aclrtStreamGetId: ids count per device from the default stream's 0 and a
 * destroyed stream's id is taken again (CANN's stream_config_query sample
 * prints 1 for the first stream it creates after aclrtSetDevice). */
TEST(stream_ids_per_device_and_reused) {
  int32_t def = -1, a = -1, b = -1, c = -1, d1 = -1, d1s = -1;
  ASSERT_OK(aclrtStreamGetId(NULL, &def));
  ASSERT_EQ(def, 0);
  aclrtStream s1, s2, s3, t;
  ASSERT_OK(aclrtCreateStream(&s1));
  ASSERT_OK(aclrtCreateStream(&s2));
  ASSERT_OK(aclrtStreamGetId(s1, &a));
  ASSERT_OK(aclrtStreamGetId(s2, &b));
  ASSERT_EQ(a, 1);
  ASSERT_EQ(b, 2);
  ASSERT_OK(aclrtDestroyStream(s1));
  ASSERT_OK(aclrtCreateStream(&s3));
  ASSERT_OK(aclrtStreamGetId(s3, &c));
  ASSERT_EQ(c, 1); /* the smallest free id */
  /* another device counts on its own */
  uint32_t n = 0;
  ASSERT_OK(aclrtGetDeviceCount(&n));
  if (n > 1) {
    ASSERT_OK(aclrtSetDevice(1));
    ASSERT_OK(aclrtStreamGetId(NULL, &d1));
    ASSERT_EQ(d1, 0);
    ASSERT_OK(aclrtCreateStream(&t));
    ASSERT_OK(aclrtStreamGetId(t, &d1s));
    ASSERT_EQ(d1s, 1);
    ASSERT_OK(aclrtDestroyStream(t));
    ASSERT_OK(aclrtResetDevice(1));
    ASSERT_OK(aclrtSetDevice(0));
  }
  ASSERT_OK(aclrtDestroyStream(s2));
  ASSERT_OK(aclrtDestroyStream(s3));
  /* bad input: NULL output, a destroyed stream; nothing changes */
  ASSERT_ACL(aclrtStreamGetId(NULL, NULL), ACL_ERROR_INVALID_PARAM);
  ASSERT(aclrtStreamGetId(s2, &a) != ACL_SUCCESS);
}
