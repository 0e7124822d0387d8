/* Interprocess event (the flow the ACL doc gives for IPC events): process A
 * creates aclrtCreateEventExWithFlag(ACL_EVENT_IPC), exports it and records
 * it after a long task; process B (this program run with the handle as its
 * argument) opens it, makes a stream wait on it and synchronizes. */
#include "sample_common.h"

#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int child(const char *hex) {
  aclrtIpcEventHandle h;
  for (size_t i = 0; i < sizeof h.reserved; i++) {
    unsigned v = 0;
    sscanf(hex + 2 * i, "%2x", &v);
    h.reserved[i] = (char)v;
  }
  aclrtEvent e;
  aclrtStream s;
  CHECK_ERROR(aclrtSetDevice(0));
  CHECK_ERROR(aclrtIpcOpenEventHandle(h, &e));
  CHECK_ERROR(aclrtCreateStream(&s));
  CHECK_ERROR(aclrtStreamWaitEvent(s, e));
  CHECK_ERROR(aclrtSynchronizeStream(s));
  INFO_LOG("Process B: the wait on process A's event is complete.");
  CHECK_ERROR(aclrtDestroyEvent(e));
  CHECK_ERROR(aclrtDestroyStream(s));
  CHECK_ERROR(aclrtResetDevice(0));
  return 0;
}

int main(int argc, char **argv) {
  if (argc > 1)
    return child(argv[1]);
  aclrtEvent e;
  aclrtStream s;
  aclrtIpcEventHandle h;
  unsigned *x;
  CHECK_ERROR(aclInit(NULL));
  CHECK_ERROR(aclrtSetDevice(0));
  CHECK_ERROR(aclrtCreateStream(&s));
  CHECK_ERROR(aclrtCreateEventExWithFlag(&e, ACL_EVENT_IPC));
  CHECK_ERROR(aclrtIpcGetEventHandle(e, &h));
  CHECK_ERROR(aclrtMalloc((void **)&x, sizeof *x, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK_ERROR(aclrtMemset(x, sizeof *x, 0, sizeof *x));
  CHECK_ERROR(LongOP(s, x));
  CHECK_ERROR(aclrtRecordEvent(e, s));
  INFO_LOG("Process A: event exported and recorded after a long task.");
  char hex[2 * ACL_IPC_EVENT_HANDLE_SIZE + 1];
  for (size_t i = 0; i < sizeof h.reserved; i++)
    snprintf(hex + 2 * i, 3, "%02x", (unsigned char)h.reserved[i]);
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    execl("/proc/self/exe", argv[0], hex, (char *)NULL);
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    ERROR_LOG("process B failed (status 0x%x)", status);
    return 1;
  }
  CHECK_ERROR(aclrtSynchronizeStream(s));
  INFO_LOG("Process A: long task result x = %u.", *x);
  CHECK_ERROR(aclrtFree(x));
  CHECK_ERROR(aclrtDestroyEvent(e));
  CHECK_ERROR(aclrtDestroyStream(s));
  CHECK_ERROR(aclrtResetDevice(0));
  CHECK_ERROR(aclFinalize());
  INFO_LOG("Resource cleanup completed.");
  return 0;
}
