/* Notifies on evrt's stream-ordered values: waits park their streams (70 of
 * them leave the recording stream a worker: issue 13 item 5), one record
 * per wait, the timeout in seconds, batch reset, lifetimes, bad input. */
#include "acl_test.h"

static void bump(void *p) { atomic_fetch_add((atomic_int *)p, 1); }

TEST(seventy_notify_waits_hold_no_worker) {
  enum { N = 70 };
  aclrtStream w[N], rec;
  aclrtNotify n[N];
  atomic_int after = 0;
  gate_t g;
  gate_init(&g);
  ASSERT_OK(aclrtCreateStream(&rec));
  for (int i = 0; i < N; i++) {
    ASSERT_OK(aclrtCreateNotify(&n[i], ACL_NOTIFY_DEFAULT));
    ASSERT_OK(aclrtCreateStream(&w[i]));
    ASSERT_OK(aclrtWaitAndResetNotify(n[i], w[i], 0));
    ASSERT_OK(aclrtLaunchHostFunc(w[i], bump, &after));
  }
  /* the recorder runs behind work of its own, once all wait */
  ASSERT_OK(gate_on(rec, &g));
  for (int i = 0; i < N; i++)
    ASSERT_OK(aclrtRecordNotify(n[i], rec));
  sleep_ms(50);
  gate_open(&g);
  ASSERT_OK(aclrtSynchronizeDeviceWithTimeout(30000));
  ASSERT_EQ(atomic_load(&after), N);
  for (int i = 0; i < N; i++) {
    ASSERT_OK(aclrtDestroyStream(w[i]));
    ASSERT_OK(aclrtDestroyNotify(n[i]));
  }
  ASSERT_OK(aclrtDestroyStream(rec));
}

TEST(one_record_releases_one_wait) {
  aclrtStream a, b, r;
  aclrtNotify n;
  atomic_int pa = 0, pb = 0;
  ASSERT_OK(aclrtCreateNotify(&n, 0));
  ASSERT_OK(aclrtCreateStream(&a));
  ASSERT_OK(aclrtCreateStream(&b));
  ASSERT_OK(aclrtCreateStream(&r));
  ASSERT_OK(aclrtWaitAndResetNotify(n, a, 0));
  ASSERT_OK(aclrtLaunchHostFunc(a, bump, &pa));
  ASSERT_OK(aclrtWaitAndResetNotify(n, b, 0));
  ASSERT_OK(aclrtLaunchHostFunc(b, bump, &pb));
  ASSERT_OK(aclrtRecordNotify(n, r));
  ASSERT_OK(aclrtSynchronizeStream(r));
  WAIT_UNTIL(atomic_load(&pa) + atomic_load(&pb) == 1, 10000);
  sleep_ms(30);
  ASSERT_EQ(atomic_load(&pa) + atomic_load(&pb), 1);
  ASSERT_OK(aclrtRecordNotify(n, r));
  ASSERT_OK(aclrtSynchronizeStreamWithTimeout(a, 10000));
  ASSERT_OK(aclrtSynchronizeStreamWithTimeout(b, 10000));
  ASSERT_EQ(atomic_load(&pa) + atomic_load(&pb), 2);
  ASSERT_OK(aclrtDestroyStream(a));
  ASSERT_OK(aclrtDestroyStream(b));
  ASSERT_OK(aclrtDestroyStream(r));
  ASSERT_OK(aclrtDestroyNotify(n));
}

TEST(wait_timeout_is_in_seconds_and_reported_once) {
  aclrtStream s;
  aclrtNotify n;
  atomic_int p = 0;
  ASSERT_OK(aclrtCreateNotify(&n, 0));
  ASSERT_OK(aclrtCreateStream(&s));
  ASSERT_OK(aclrtWaitAndResetNotify(n, s, 1)); /* one second */
  ASSERT_OK(aclrtLaunchHostFunc(s, bump, &p));
  /* not over after 300 ms (a millisecond timeout would be) */
  ASSERT_ACL(aclrtSynchronizeStreamWithTimeout(s, 300),
             ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
  ASSERT_EQ(atomic_load(&p), 0);
  ASSERT_ACL(aclrtSynchronizeStreamWithTimeout(s, 20000),
             ACL_ERROR_RT_WAIT_TIMEOUT);
  ASSERT_EQ(atomic_load(&p), 1); /* the stream went on */
  ASSERT_OK(aclrtSynchronizeStream(s));
  ASSERT_OK(aclrtDestroyStream(s));
  ASSERT_OK(aclrtDestroyNotify(n));
}

TEST(batch_reset_clears_recorded_notifies) {
  aclrtStream s, w;
  aclrtNotify n[3];
  ASSERT_OK(aclrtCreateStream(&s));
  ASSERT_OK(aclrtCreateStream(&w));
  for (int i = 0; i < 3; i++) {
    ASSERT_OK(aclrtCreateNotify(&n[i], 0));
    ASSERT_OK(aclrtRecordNotify(n[i], s));
  }
  ASSERT_OK(aclrtSynchronizeStream(s));
  /* bad input resets nothing */
  aclrtNotify bad[2] = {n[0], (aclrtNotify)&bad};
  ASSERT_ACL(aclrtNotifyBatchReset(bad, 2), ACL_ERROR_RT_INVALID_HANDLE);
  ASSERT_ACL(aclrtNotifyBatchReset(NULL, 1), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtNotifyBatchReset(n, 0), ACL_ERROR_INVALID_PARAM);
  ASSERT_OK(aclrtWaitAndResetNotify(n[0], w, 0)); /* still set: passes */
  ASSERT_OK(aclrtSynchronizeStreamWithTimeout(w, 10000));
  ASSERT_OK(aclrtNotifyBatchReset(&n[1], 2));
  atomic_int p = 0;
  ASSERT_OK(aclrtWaitAndResetNotify(n[1], w, 0));
  ASSERT_OK(aclrtLaunchHostFunc(w, bump, &p));
  ASSERT_ACL(aclrtSynchronizeStreamWithTimeout(w, 100),
             ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
  ASSERT_EQ(atomic_load(&p), 0);
  ASSERT_OK(aclrtRecordNotify(n[1], s));
  ASSERT_OK(aclrtSynchronizeStreamWithTimeout(w, 10000));
  ASSERT_EQ(atomic_load(&p), 1);
  for (int i = 0; i < 3; i++)
    ASSERT_OK(aclrtDestroyNotify(n[i]));
  ASSERT_OK(aclrtDestroyStream(s));
  ASSERT_OK(aclrtDestroyStream(w));
}

TEST(destroy_with_queued_tasks_keeps_the_word_until_they_pass) {
  /* Under ASan a word freed early is a use after free of the record. */
  aclrtStream s, w;
  aclrtNotify n;
  gate_t g;
  gate_init(&g);
  ASSERT_OK(aclrtCreateStream(&s));
  ASSERT_OK(aclrtCreateStream(&w));
  ASSERT_OK(aclrtCreateNotify(&n, 0));
  ASSERT_OK(gate_on(s, &g));
  ASSERT_OK(aclrtRecordNotify(n, s));
  ASSERT_OK(aclrtWaitAndResetNotify(n, w, 0));
  ASSERT_OK(aclrtDestroyNotify(n));
  ASSERT_ACL(aclrtDestroyNotify(n), ACL_ERROR_RT_INVALID_HANDLE);
  ASSERT_ACL(aclrtRecordNotify(n, s), ACL_ERROR_RT_INVALID_HANDLE);
  gate_open(&g);
  ASSERT_OK(aclrtSynchronizeStreamWithTimeout(s, 10000));
  ASSERT_OK(aclrtSynchronizeStreamWithTimeout(w, 10000));
  ASSERT_OK(aclrtDestroyStream(s));
  ASSERT_OK(aclrtDestroyStream(w));
}

TEST(bad_input) {
  aclrtNotify n;
  uint32_t id;
  ASSERT_ACL(aclrtCreateNotify(NULL, 0), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtCreateNotify(&n, 2), ACL_ERROR_INVALID_PARAM);
  ASSERT_OK(aclrtCreateNotify(&n, ACL_NOTIFY_DEVICE_USE_ONLY));
  ASSERT_OK(aclrtGetNotifyId(n, &id));
  ASSERT_ACL(aclrtGetNotifyId(n, NULL), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtRecordNotify(NULL, NULL), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtWaitAndResetNotify((aclrtNotify)&id, NULL, 0),
             ACL_ERROR_RT_INVALID_HANDLE);
  char key[65];
  ASSERT_ACL(aclrtNotifyGetExportKey(n, key, 64, 0), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtNotifyGetExportKey(n, key, 65, 1), ACL_ERROR_INVALID_PARAM);
  int32_t pid = 1;
  ASSERT_ACL(aclrtNotifySetImportPid(n, &pid, 1), ACL_ERROR_RT_PARAM_INVALID);
  aclrtNotify m;
  ASSERT_ACL(aclrtNotifyImportByKey(&m, "nonsense", 0), ACL_ERROR_RT_IPC_ERROR);
  ASSERT_OK(aclrtNotifyGetExportKey(n, key, 65, 0));
  ASSERT_ACL(aclrtNotifyImportByKey(&m, key, 0), ACL_ERROR_RT_IPC_ERROR);
  ASSERT_OK(aclrtDestroyNotify(n));
  ASSERT_ACL(aclrtGetNotifyId(n, &id), ACL_ERROR_RT_INVALID_HANDLE);
  (void)aclGetRecentErrMsg();
}
