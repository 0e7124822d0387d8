/* Compiled as C11 -pedantic (acl_header_c) and, through header_check.cpp, as
 * C++17: acl/acl.h must be usable from both.  Runs a tiny program so the
 * link against libascendcl.so is checked too. */
#include <acl/acl.h>

#include <stdio.h>

int main(void) {
  aclrtRunMode mode;
  aclrtIpcEventHandle h;
  int ok = sizeof h.reserved == ACL_IPC_EVENT_HANDLE_SIZE &&
           ACL_EVENT_RECORDED_STATUS_COMPLETE == 1 &&
           ACL_EVENT_STATUS_COMPLETE == 0 && ACL_ERROR_RT_INVALID_HANDLE == 107017 &&
           ACL_ERROR_INVALID_PARAM == 100000 &&
           aclrtGetRunMode(&mode) == ACL_SUCCESS && mode == ACL_HOST;
  printf("%s\n", ok ? "headers ok" : "headers WRONG");
  return ok ? 0 : 1;
}
