/* Second process of test_acl_vmm.  Usage:
 *   acl_vmm_helper refused <hex u64>   import must fail with 207006
 *   acl_vmm_helper rw <hex handle>     prints its pid, waits for a line on
 *                                      stdin, imports the handle (16 hex
 *                                      digits: a u64; 256: a fabric handle),
 *                                      maps it, checks the int there is 123,
 *                                      writes 456 and unmaps.
 * Exit 0 = ok; anything else names the step that failed. */
#include <acl/acl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fail(int code, const char *what, aclError r) {
  const char *m = aclGetRecentErrMsg();
  fprintf(stderr, "vmm helper: %s failed %d: %s\n", what, r, m ? m : "");
  return code;
}

int main(int argc, char **argv) {
  if (argc < 3)
    return 2;
  if (aclrtSetDevice(0) != ACL_SUCCESS)
    return 3;
  aclrtDrvMemHandle h = NULL;
  aclError r;
  size_t len = strlen(argv[2]);
  if (!strcmp(argv[1], "refused")) {
    uint64_t sh = strtoull(argv[2], NULL, 16);
    r = aclrtMemImportFromShareableHandle(sh, 0, &h);
    return r == ACL_ERROR_RT_NO_PERMISSION ? 0 : fail(4, "refused import", r);
  }
  printf("%d\n", (int)getpid());
  fflush(stdout);
  char line[16];
  if (!fgets(line, sizeof line, stdin))
    return 5;
  if (len == 16) {
    r = aclrtMemImportFromShareableHandle(strtoull(argv[2], NULL, 16), 0, &h);
  } else {
    aclrtMemFabricHandle fh;
    for (size_t i = 0; i < sizeof fh.data && 2 * i + 1 < len; i++) {
      unsigned v;
      sscanf(argv[2] + 2 * i, "%2x", &v);
      fh.data[i] = (uint8_t)v;
    }
    r = aclrtMemImportFromShareableHandleV2(&fh, ACL_MEM_SHARE_HANDLE_TYPE_FABRIC, 0, &h);
  }
  if (r)
    return fail(6, "import", r);
  size_t size = (size_t)2 << 20;
  void *va = NULL;
  if ((r = aclrtReserveMemAddress(&va, size, 0, NULL, 0)))
    return fail(7, "reserve", r);
  if ((r = aclrtMapMem(va, size, 0, h, 0)))
    return fail(8, "map", r);
  if (*(int *)va != 123)
    return 9;
  *(int *)va = 456;
  if ((r = aclrtUnmapMem(va)) || (r = aclrtReleaseMemAddress(va)) ||
      (r = aclrtFreePhysical(h)))
    return fail(10, "release", r);
  aclrtResetDevice(0);
  return 0;
}
