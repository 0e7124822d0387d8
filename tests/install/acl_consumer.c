/* An ACL program built against the installed tree with nothing but
 * `pkg-config --cflags --libs ascendcl` (run.sh, and the Debian package
 * check packaging/deb-check.sh). */
#include <acl/acl.h>

#include <stdio.h>

int main(void) {
  aclrtStream s = NULL;
  aclrtEvent e = NULL;
  aclrtEventRecordedStatus st = ACL_EVENT_RECORDED_STATUS_NOT_READY;
  if (aclInit(NULL) || aclrtSetDevice(0) || aclrtCreateStream(&s) ||
      aclrtCreateEvent(&e) || aclrtRecordEvent(e, s) ||
      aclrtSynchronizeEvent(e) || aclrtQueryEventStatus(e, &st) ||
      st != ACL_EVENT_RECORDED_STATUS_COMPLETE || aclrtDestroyEvent(e) ||
      aclrtDestroyStream(s) || aclrtResetDevice(0) || aclFinalize()) {
    printf("FAILED: %s\n", aclGetRecentErrMsg());
    return 1;
  }
  printf("installed ascendcl works\n");
  return 0;
}
