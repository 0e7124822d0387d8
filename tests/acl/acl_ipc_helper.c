/* Second process of test_acl_ipc: opens the IPC event handle given in hex
 * on the command line, makes a stream wait on it and synchronizes, then
 * checks the event is complete.  With a device argument (CANN's
 * multi-device IPC sample: the consumer on device 1) it works on that
 * device and then records the event on its stream and synchronizes it.
 * Exit 0 = ok, 77 = IPC not supported. */
#include <acl/acl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  aclrtIpcEventHandle h;
  if (argc < 2 || strlen(argv[1]) != 2 * sizeof h.reserved) {
    fprintf(stderr, "helper: usage: acl_ipc_helper <hex handle> [device]\n");
    return 2;
  }
  int32_t dev = argc > 2 ? atoi(argv[2]) : 0;
  for (size_t i = 0; i < sizeof h.reserved; i++) {
    unsigned v;
    sscanf(argv[1] + 2 * i, "%2x", &v);
    h.reserved[i] = (char)v;
  }
  if (aclrtSetDevice(dev) != ACL_SUCCESS)
    return 3;
  aclrtEvent e;
  aclError r = aclrtIpcOpenEventHandle(h, &e);
  if (r == ACL_ERROR_RT_FEATURE_NOT_SUPPORT)
    return 77;
  if (r != ACL_SUCCESS) {
    const char *m = aclGetRecentErrMsg();
    fprintf(stderr, "helper: open failed %d: %s\n", r, m ? m : "");
    return 4;
  }
  aclrtStream s;
  if (aclrtCreateStream(&s) || aclrtStreamWaitEvent(s, e) ||
      aclrtSynchronizeStream(s)) {
    const char *m = aclGetRecentErrMsg();
    fprintf(stderr, "helper: wait failed: %s\n", m ? m : "");
    return 5;
  }
  if (argc > 2 && (aclrtRecordEvent(e, s) || aclrtSynchronizeEvent(e))) {
    const char *m = aclGetRecentErrMsg();
    fprintf(stderr, "helper: record on device %d failed: %s\n", (int)dev,
            m ? m : "");
    return 7;
  }
  aclrtEventRecordedStatus st = ACL_EVENT_RECORDED_STATUS_NOT_READY;
  if (aclrtQueryEventStatus(e, &st) || st != ACL_EVENT_RECORDED_STATUS_COMPLETE)
    return 6;
  printf("helper: waited on the exporter's record\n");
  aclrtDestroyEvent(e);
  aclrtDestroyStream(s);
  aclrtResetDevice(dev);
  return 0;
}
