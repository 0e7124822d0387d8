/* Virtual and physical memory: granularity, physical allocations mapped at
 * several addresses, access rights, the freed-while-mapped rule, export to a
 * shareable handle and import by another process (fork+exec of
 * acl_vmm_helper) with and without the pid whitelist, fabric handles, and
 * bad input with CANN's codes (nothing changed). */
#include "acl_test.h"

#include <signal.h>
#include <sys/wait.h>

#ifndef ACL_VMM_HELPER
#define ACL_VMM_HELPER "acl_vmm_helper"
#endif

#define MB2 ((size_t)2 << 20)

static aclrtPhysicalMemProp dev_prop(aclrtMemAttr attr) {
  aclrtPhysicalMemProp p;
  memset(&p, 0, sizeof p);
  p.handleType = ACL_MEM_HANDLE_TYPE_NONE;
  p.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
  p.memAttr = attr;
  p.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
  p.location.id = 0;
  return p;
}

TEST(granularity) {
  aclrtPhysicalMemProp p = dev_prop(ACL_HBM_MEM_NORMAL);
  size_t g = 0;
  ASSERT_OK(aclrtMemGetAllocationGranularity(&p, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &g));
  ASSERT_EQ(g, MB2); /* HBM normal is allocated as huge pages */
  p.memAttr = ACL_MEM_HUGE1G;
  ASSERT_OK(aclrtMemGetAllocationGranularity(&p, ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED, &g));
  ASSERT_EQ(g, (size_t)1 << 30);
  p.memAttr = ACL_MEM_NORMAL;
  ASSERT_OK(aclrtMemGetAllocationGranularity(&p, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &g));
  ASSERT_EQ(g, (size_t)sysconf(_SC_PAGESIZE));
  g = 7;
  p.memAttr = ACL_DDR_MEM_NORMAL; /* host only */
  ASSERT_ACL(aclrtMemGetAllocationGranularity(&p, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &g),
             ACL_ERROR_RT_PARAM_INVALID);
  p.memAttr = ACL_HBM_MEM_NORMAL;
  ASSERT_ACL(aclrtMemGetAllocationGranularity(&p, ACL_RT_MEM_ALLOC_GRANULARITY_UNDEF, &g),
             ACL_ERROR_RT_PARAM_INVALID);
  p.location.id = 9;
  ASSERT_ACL(aclrtMemGetAllocationGranularity(&p, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &g),
             ACL_ERROR_RT_INVALID_DEVICEID);
  ASSERT_EQ(g, 7);
  ASSERT_ACL(aclrtMemGetAllocationGranularity(NULL, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &g),
             ACL_ERROR_INVALID_PARAM);
  (void)aclGetRecentErrMsg();
}

TEST(map_one_allocation_twice) {
  aclrtPhysicalMemProp p = dev_prop(ACL_HBM_MEM_HUGE);
  aclrtDrvMemHandle h = NULL;
  ASSERT_OK(aclrtMallocPhysical(&h, MB2, &p, 0));
  void *va1 = NULL, *va2 = NULL;
  ASSERT_OK(aclrtReserveMemAddress(&va1, 2 * MB2, 0, NULL, 0));
  ASSERT_OK(aclrtReserveMemAddress(&va2, MB2, 0, NULL, 0));
  ASSERT((uintptr_t)va1 % MB2 == 0);
  ASSERT_OK(aclrtMapMem((char *)va1 + MB2, MB2, 0, h, 0)); /* an offset range */
  ASSERT_OK(aclrtMapMem(va2, MB2, 0, h, 0));
  ((int *)((char *)va1 + MB2))[5] = 77;
  ASSERT_EQ(((int *)va2)[5], 77); /* one physical allocation, two views */
  /* the copy calls treat reserved memory as device memory */
  int out = 0;
  ASSERT_OK(aclrtMemcpy(&out, sizeof out, (int *)va2 + 5, sizeof out, ACL_MEMCPY_DEVICE_TO_HOST));
  ASSERT_EQ(out, 77);
  aclrtPtrAttributes pa;
  ASSERT_OK(aclrtPointerGetAttributes(va2, &pa));
  ASSERT_EQ(pa.location.type, ACL_MEM_LOCATION_TYPE_DEVICE);
  void *base = NULL;
  size_t sz = 0;
  ASSERT_OK(aclrtMemGetAddressRange((char *)va1 + MB2 + 8, &base, &sz));
  ASSERT(base == va1 && sz == 2 * MB2);
  aclrtDrvMemHandle again = NULL;
  ASSERT_OK(aclrtMemRetainAllocationHandle(va2, &again));
  ASSERT(again == h);
  ASSERT_OK(aclrtFreePhysical(again)); /* drops the retain */
  aclrtPhysicalMemProp back;
  ASSERT_OK(aclrtMemGetAllocationPropertiesFromHandle(h, &back));
  ASSERT_EQ(back.memAttr, ACL_HBM_MEM_HUGE);
  /* bad mappings change nothing */
  ASSERT_OK(aclrtMapMem(va1, MB2, 0, h, 0)); /* a third view */
  ASSERT_ACL(aclrtMapMem((char *)va1 + 4096, MB2, 0, h, 0), ACL_ERROR_RT_PARAM_INVALID); /* overlaps */
  ASSERT_ACL(aclrtMapMem(va2, MB2 / 2, 0, h, 0), ACL_ERROR_RT_PARAM_INVALID);           /* size */
  ASSERT_ACL(aclrtMapMem(va2, MB2, 4096, h, 0), ACL_ERROR_RT_PARAM_INVALID);            /* offset */
  ASSERT_ACL(aclrtReleaseMemAddress(va2), ACL_ERROR_RT_PARAM_INVALID);                  /* mapped */
  ASSERT_EQ(((int *)va2)[5], 77);
  ASSERT_OK(aclrtUnmapMem(va1));
  ASSERT_OK(aclrtUnmapMem((char *)va1 + MB2));
  ASSERT_ACL(aclrtUnmapMem((char *)va1 + MB2), ACL_ERROR_RT_PARAM_INVALID);
  /* freed while mapped: stays readable until the last unmap */
  ASSERT_OK(aclrtFreePhysical(h));
  ASSERT_EQ(((int *)va2)[5], 77);
  ASSERT_ACL(aclrtFreePhysical(h), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclrtMapMem(va1, MB2, 0, h, 0), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_OK(aclrtUnmapMem(va2));
  ASSERT_OK(aclrtReleaseMemAddress(va1));
  ASSERT_OK(aclrtReleaseMemAddress(va2));
  ASSERT_ACL(aclrtReleaseMemAddress(va2), ACL_ERROR_RT_PARAM_INVALID);
  (void)aclGetRecentErrMsg();
}

TEST(physical_bad_input) {
  aclrtPhysicalMemProp p = dev_prop(ACL_HBM_MEM_HUGE);
  aclrtDrvMemHandle h = (aclrtDrvMemHandle)1;
  ASSERT_ACL(aclrtMallocPhysical(NULL, MB2, &p, 0), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtMallocPhysical(&h, 0, &p, 0), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtMallocPhysical(&h, MB2, NULL, 0), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclrtMallocPhysical(&h, MB2, &p, 1), ACL_ERROR_INVALID_PARAM);
  p.allocationType = (aclrtMemAllocationType)3;
  ASSERT_ACL(aclrtMallocPhysical(&h, MB2, &p, 0), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT(h == (aclrtDrvMemHandle)1);
  ASSERT_ACL(aclrtFreePhysical((aclrtDrvMemHandle)0x1234), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclrtFreePhysical(NULL), ACL_ERROR_INVALID_PARAM);
  void *va = (void *)1;
  ASSERT_ACL(aclrtReserveMemAddress(&va, 0, 0, NULL, 0), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtReserveMemAddress(&va, MB2, 3, NULL, 0), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclrtReserveMemAddress(&va, MB2, 0, NULL, 2), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtReserveMemAddress(NULL, MB2, 0, NULL, 0), ACL_ERROR_INVALID_PARAM);
  ASSERT(va == (void *)1);
  char local[8] = {0};
  ASSERT_ACL(aclrtReleaseMemAddress(local), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclrtUnmapMem(local), ACL_ERROR_RT_PARAM_INVALID);
  (void)aclGetRecentErrMsg();
}

/* Write through a read-only mapping in a child: it must die of SIGSEGV. */
static int child_write_faults(volatile int *p) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    *p = 1; /* no evrt call in the child */
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV;
}

TEST(access_rights) {
  aclrtPhysicalMemProp p = dev_prop(ACL_HBM_MEM_HUGE);
  aclrtDrvMemHandle h;
  void *va;
  ASSERT_OK(aclrtMallocPhysical(&h, MB2, &p, 0));
  ASSERT_OK(aclrtReserveMemAddress(&va, MB2, 0, NULL, 0));
  ASSERT_OK(aclrtMemMapNoAccess(va, MB2, 0, h, 0));
  aclrtMemLocation loc = {0, ACL_MEM_LOCATION_TYPE_DEVICE};
  uint64_t f = 99;
  ASSERT_OK(aclrtMemGetAccess(va, &loc, &f));
  ASSERT_EQ(f, ACL_RT_MEM_ACCESS_FLAGS_NONE);
  aclrtMemAccessDesc d;
  memset(&d, 0, sizeof d);
  d.flags = ACL_RT_MEM_ACCESS_FLAGS_READWRITE;
  d.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
  ASSERT_OK(aclrtMemSetAccess(va, MB2, &d, 1));
  ((int *)va)[0] = 5;
  ASSERT_OK(aclrtMemGetAccess(va, &loc, &f));
  ASSERT_EQ(f, ACL_RT_MEM_ACCESS_FLAGS_READWRITE);
  d.flags = ACL_RT_MEM_ACCESS_FLAGS_READ;
  ASSERT_OK(aclrtMemSetAccess(va, MB2, &d, 1));
  ASSERT_EQ(((int *)va)[0], 5);
  ASSERT(child_write_faults((volatile int *)va));
  /* bad input keeps the rights */
  d.flags = (aclrtMemAccessFlags)2;
  ASSERT_ACL(aclrtMemSetAccess(va, MB2, &d, 1), ACL_ERROR_RT_PARAM_INVALID);
  d.flags = ACL_RT_MEM_ACCESS_FLAGS_READWRITE;
  ASSERT_ACL(aclrtMemSetAccess(va, MB2 / 2, &d, 1), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclrtMemSetAccess(va, MB2, &d, 0), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclrtMemSetAccess(va, MB2, NULL, 1), ACL_ERROR_RT_PARAM_INVALID);
  loc.type = ACL_MEM_LOCATION_TYPE_MANAGED;
  ASSERT_ACL(aclrtMemGetAccess(va, &loc, &f), ACL_ERROR_RT_PARAM_INVALID);
  loc.type = ACL_MEM_LOCATION_TYPE_HOST;
  ASSERT_OK(aclrtMemGetAccess(va, &loc, &f));
  ASSERT_EQ(f, ACL_RT_MEM_ACCESS_FLAGS_READ);
  ASSERT_OK(aclrtUnmapMem(va));
  ASSERT_OK(aclrtReleaseMemAddress(va));
  ASSERT_OK(aclrtFreePhysical(h));
  (void)aclGetRecentErrMsg();
}

/* Start the helper with a pipe on each side; returns its pid. */
static pid_t spawn(const char *mode, const char *arg, int *to, int *from) {
  int in[2], out[2];
  if (pipe(in) || pipe(out))
    return -1;
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    close(in[1]);
    close(out[0]);
    execl(ACL_VMM_HELPER, ACL_VMM_HELPER, mode, arg, (char *)NULL);
    _exit(99);
  }
  close(in[0]);
  close(out[1]);
  *to = in[1];
  *from = out[0];
  return pid;
}

static int finish(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The helper prints its pid; whitelist it (or not), tell it to go. */
static int run_rw(const char *arg, uint64_t sh, bool whitelist) {
  int to, from;
  pid_t pid = spawn("rw", arg, &to, &from);
  if (pid < 0)
    return -1;
  char buf[32] = {0};
  ssize_t n = read(from, buf, sizeof buf - 1);
  int32_t hp = n > 0 ? atoi(buf) : -1;
  if (whitelist && aclrtMemSetPidToShareableHandle(sh, &hp, 1) != ACL_SUCCESS)
    hp = -1;
  (void)!write(to, "go\n", 3);
  close(to);
  close(from);
  int rc = finish(pid);
  return hp < 0 ? -2 : rc;
}

TEST(export_import_across_processes) {
  aclrtPhysicalMemProp p = dev_prop(ACL_HBM_MEM_HUGE);
  aclrtDrvMemHandle h;
  void *va;
  ASSERT_OK(aclrtMallocPhysical(&h, MB2, &p, 0));
  ASSERT_OK(aclrtReserveMemAddress(&va, MB2, 0, NULL, 0));
  ASSERT_OK(aclrtMapMem(va, MB2, 0, h, 0));
  *(int *)va = 123;
  uint64_t sh = 0;
  ASSERT_OK(aclrtMemExportToShareableHandle(h, ACL_MEM_HANDLE_TYPE_NONE, ACL_RT_VMM_EXPORT_FLAG_DEFAULT, &sh));
  uint64_t sh2 = 5;
  ASSERT_ACL(aclrtMemExportToShareableHandle(h, ACL_MEM_HANDLE_TYPE_NONE, 0, &sh2), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_EQ(sh2, 5); /* one shareable handle per allocation */
  aclrtDrvMemHandle imp = NULL;
  ASSERT_ACL(aclrtMemImportFromShareableHandle(sh, 0, &imp), ACL_ERROR_RT_PARAM_INVALID); /* same process */
  char hex[32];
  snprintf(hex, sizeof hex, "%016llx", (unsigned long long)sh);
  /* not whitelisted: refused with 207006 */
  int to, from;
  pid_t pid = spawn("refused", hex, &to, &from);
  ASSERT(pid > 0);
  close(to);
  close(from);
  ASSERT_EQ(finish(pid), 0);
  /* whitelisted: reads 123 and writes 456 into our memory */
  ASSERT_EQ(run_rw(hex, sh, true), 0);
  ASSERT_EQ(*(int *)va, 456);
  /* a forged handle (right pid and fd, wrong nonce) */
  snprintf(hex, sizeof hex, "%016llx", (unsigned long long)(sh ^ 1));
  ASSERT_EQ(run_rw(hex, sh, true), 6);
  ASSERT_ACL(aclrtMemSetPidToShareableHandle(sh ^ 1, (int32_t[]){1}, 1), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclrtMemSetPidToShareableHandle(sh, NULL, 1), ACL_ERROR_INVALID_PARAM);
  ASSERT_OK(aclrtUnmapMem(va));
  ASSERT_OK(aclrtReleaseMemAddress(va));
  ASSERT_OK(aclrtFreePhysical(h));
  (void)aclGetRecentErrMsg();
}

TEST(fabric_handle_without_pid_check) {
  aclrtPhysicalMemProp p = dev_prop(ACL_HBM_MEM_HUGE);
  aclrtDrvMemHandle h;
  void *va;
  ASSERT_OK(aclrtMallocPhysical(&h, MB2, &p, 0));
  ASSERT_OK(aclrtReserveMemAddress(&va, MB2, 0, NULL, 0));
  ASSERT_OK(aclrtMapMem(va, MB2, 0, h, 0));
  *(int *)va = 123;
  aclrtMemFabricHandle fh;
  memset(&fh, 0, sizeof fh);
  ASSERT_ACL(aclrtMemExportToShareableHandleV2(h, 0, (aclrtMemSharedHandleType)7, &fh),
             ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_OK(aclrtMemExportToShareableHandleV2(h, ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION,
                                              ACL_MEM_SHARE_HANDLE_TYPE_FABRIC, &fh));
  char hex[2 * sizeof fh.data + 1];
  for (size_t i = 0; i < sizeof fh.data; i++)
    snprintf(hex + 2 * i, 3, "%02x", fh.data[i]);
  ASSERT_EQ(run_rw(hex, 0, false), 0); /* no whitelist needed */
  ASSERT_EQ(*(int *)va, 456);
  ASSERT_OK(aclrtUnmapMem(va));
  ASSERT_OK(aclrtReleaseMemAddress(va));
  ASSERT_OK(aclrtFreePhysical(h));
  (void)aclGetRecentErrMsg();
}
