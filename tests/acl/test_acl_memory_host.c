/* aclrtMemset and the host sides of aclrtMemcpy on host memory the layer
 * did not allocate: accepted where the whole range is memory of this
 * process with the access the call needs (CANN's memory/12 sample sets a
 * stack structure); an unmapped, inaccessible or wrapping range is still
 * ACL's invalid parameter with no effect (issue 13 item 2).  The check
 * also works where process_vm_readv/writev are refused (a seccomp filter
 * on one thread: /proc/self/maps is read instead). */
#include "acl_test.h"

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

static size_t page(void) { return (size_t)sysconf(_SC_PAGESIZE); }

/* Three pages: [0] rw, [1] unmapped, [2] rw; plus a read-only page and a
 * PROT_NONE page. */
struct pages {
  unsigned char *hole; /* 3 pages, the middle one unmapped */
  unsigned char *ro;
  unsigned char *none;
};

static int pages_map(struct pages *m) {
  size_t ps = page();
  m->hole = mmap(NULL, 3 * ps, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  m->ro = mmap(NULL, ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
               -1, 0);
  m->none = mmap(NULL, ps, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m->hole == MAP_FAILED || m->ro == MAP_FAILED || m->none == MAP_FAILED)
    return -1;
  memset(m->hole, 0x11, ps);
  memset(m->hole + 2 * ps, 0x22, ps);
  memset(m->ro, 0x33, ps);
  if (munmap(m->hole + ps, ps) || mprotect(m->ro, ps, PROT_READ))
    return -1;
  return 0;
}

static void pages_unmap(struct pages *m) {
  size_t ps = page();
  munmap(m->hole, ps);
  munmap(m->hole + 2 * ps, ps);
  munmap(m->ro, ps);
  munmap(m->none, ps);
}

static int all(const unsigned char *p, size_t n, unsigned char v) {
  for (size_t i = 0; i < n; i++)
    if (p[i] != v)
      return 0;
  return 1;
}

/* The memset cases, run as is and under the seccomp filter. */
static void memset_cases(void) {
  size_t ps = page();
  struct {
    int a;
    char b[20];
  } on_stack;
  memset(&on_stack, 0x5a, sizeof on_stack);
  ASSERT_OK(aclrtMemset(&on_stack, sizeof on_stack, 0, sizeof on_stack));
  ASSERT(all((unsigned char *)&on_stack, sizeof on_stack, 0));

  unsigned char *heap = malloc(3 * ps);
  ASSERT(heap != NULL);
  ASSERT_OK(aclrtMemset(heap, 3 * ps, 0x44, 3 * ps));
  ASSERT(all(heap, 3 * ps, 0x44));
  ASSERT_OK(aclrtMemset(heap + 1, 10, 0x45, 0)); /* count 0 */
  ASSERT_EQ(heap[1], 0x44);
  free(heap);

  struct pages m;
  ASSERT(pages_map(&m) == 0);
  /* into the hole: refused, the mapped first page untouched */
  ASSERT_ACL(aclrtMemset(m.hole + ps - 8, 16, 0, 16), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtMemset(m.hole, 3 * ps, 0, 3 * ps), ACL_ERROR_INVALID_PARAM);
  ASSERT(all(m.hole, ps, 0x11));
  ASSERT(all(m.hole + 2 * ps, ps, 0x22));
  ASSERT_ACL(aclrtMemset(m.hole + ps, 8, 0, 8), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtMemset(m.hole + ps, 8, 0, 0), ACL_ERROR_INVALID_PARAM);
  /* read-only and inaccessible pages */
  ASSERT_ACL(aclrtMemset(m.ro, 64, 0, 64), ACL_ERROR_INVALID_PARAM);
  ASSERT(all(m.ro, ps, 0x33));
  ASSERT_ACL(aclrtMemset(m.none, 64, 0, 64), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtMemset((void *)"a string literal", 4, 0, 4),
             ACL_ERROR_INVALID_PARAM);
  /* a range that wraps the address space */
  ASSERT_ACL(aclrtMemset((void *)(UINTPTR_MAX - 15), 64, 0, 64),
             ACL_ERROR_INVALID_PARAM);
  /* the mapped parts on their own are fine */
  ASSERT_OK(aclrtMemset(m.hole + ps - 8, 8, 0x66, 8));
  ASSERT(all(m.hole + ps - 8, 8, 0x66));
  ASSERT_OK(aclrtMemset(m.hole + 2 * ps, ps, 0x67, ps));
  ASSERT(all(m.hole + 2 * ps, ps, 0x67));
  pages_unmap(&m);
}

TEST(memset_takes_host_memory_of_this_process) { memset_cases(); }

TEST(memset_async_and_freed_blocks_still_refused) {
  char buf[64];
  memset(buf, 1, sizeof buf);
  aclrtStream s;
  ASSERT_OK(aclrtCreateStream(&s));
  /* asynchronous fills need the layer's memory (the task runs later) */
  ASSERT_ACL(aclrtMemsetAsync(buf, 64, 0, 64, s), ACL_ERROR_INVALID_PARAM);
  ASSERT_OK(aclrtSynchronizeStream(s));
  ASSERT_EQ(buf[0], 1);
  /* a block freed by aclrtFree is not host memory, though still mapped */
  void *dev = NULL;
  ASSERT_OK(aclrtMalloc(&dev, 64, ACL_MEM_MALLOC_HUGE_FIRST));
  ASSERT_OK(aclrtFree(dev));
  ASSERT_ACL(aclrtMemset(dev, 64, 0, 64), ACL_ERROR_INVALID_PARAM);
  ASSERT_OK(aclrtDestroyStream(s));
  (void)aclGetRecentErrMsg();
}

static void memcpy_cases(void) {
  size_t ps = page();
  void *dev = NULL;
  ASSERT_OK(aclrtMalloc(&dev, 256, ACL_MEM_MALLOC_HUGE_FIRST));
  ASSERT_OK(aclrtMemset(dev, 256, 0x7e, 256));
  unsigned char *heap = malloc(256);
  ASSERT(heap != NULL);
  memset(heap, 0, 256);
  char src[256];
  memset(src, 0x31, sizeof src);
  /* host sides outside the layer's blocks */
  ASSERT_OK(aclrtMemcpy(heap, 256, src, 256, ACL_MEMCPY_HOST_TO_HOST));
  ASSERT(all(heap, 256, 0x31));
  ASSERT_OK(aclrtMemcpy(heap, 256, dev, 256, ACL_MEMCPY_DEVICE_TO_HOST));
  ASSERT(all(heap, 256, 0x7e));
  ASSERT_OK(aclrtMemcpy(dev, 256, src, 256, ACL_MEMCPY_HOST_TO_DEVICE));
  ASSERT_OK(aclrtMemcpy(heap, 256, dev, 256, ACL_MEMCPY_DEFAULT));
  ASSERT(all(heap, 256, 0x31));

  struct pages m;
  ASSERT(pages_map(&m) == 0);
  /* a read-only source is fine; a read-only destination is not */
  ASSERT_OK(aclrtMemcpy(dev, 256, m.ro, 256, ACL_MEMCPY_HOST_TO_DEVICE));
  ASSERT_OK(aclrtMemcpy(heap, 256, dev, 256, ACL_MEMCPY_DEVICE_TO_HOST));
  ASSERT(all(heap, 256, 0x33));
  ASSERT_OK(aclrtMemset(dev, 256, 0x7e, 256));
  ASSERT_ACL(aclrtMemcpy(m.ro, 256, dev, 256, ACL_MEMCPY_DEVICE_TO_HOST),
             ACL_ERROR_INVALID_PARAM);
  ASSERT(all(m.ro, ps, 0x33));
  /* unmapped, inaccessible, wrapping host sides: refused, nothing written */
  ASSERT_ACL(aclrtMemcpy(m.hole + ps - 128, 256, dev, 256,
                         ACL_MEMCPY_DEVICE_TO_HOST),
             ACL_ERROR_INVALID_PARAM);
  ASSERT(all(m.hole, ps, 0x11));
  ASSERT_ACL(aclrtMemcpy(dev, 256, m.hole + ps - 128, 256,
                         ACL_MEMCPY_HOST_TO_DEVICE),
             ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtMemcpy(dev, 256, m.none, 256, ACL_MEMCPY_HOST_TO_DEVICE),
             ACL_ERROR_INVALID_PARAM);
  void *bogus = (void *)(uintptr_t)0x1000;
  ASSERT_ACL(aclrtMemcpy(bogus, 64, src, 64, ACL_MEMCPY_HOST_TO_HOST),
             ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtMemcpy(dev, 64, bogus, 64, ACL_MEMCPY_HOST_TO_DEVICE),
             ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtMemcpy(bogus, 64, dev, 64, ACL_MEMCPY_DEFAULT),
             ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtMemcpy((void *)(UINTPTR_MAX - 15), 64, src, 64,
                         ACL_MEMCPY_HOST_TO_HOST),
             ACL_ERROR_INVALID_PARAM);
  /* the device block kept its bytes through every refusal */
  ASSERT_OK(aclrtMemcpy(heap, 256, dev, 256, ACL_MEMCPY_DEVICE_TO_HOST));
  ASSERT(all(heap, 256, 0x7e));
  pages_unmap(&m);

  /* a host side inside a block of the layer must fit in it */
  void *pinned = NULL;
  ASSERT_OK(aclrtMallocHost(&pinned, 64));
  char big[4096];
  ASSERT_ACL(aclrtMemcpy(big, sizeof big, pinned, sizeof big,
                         ACL_MEMCPY_HOST_TO_HOST),
             ACL_ERROR_INVALID_PARAM);
  ASSERT_OK(aclrtMemcpy(big, sizeof big, pinned, 64, ACL_MEMCPY_HOST_TO_HOST));
  ASSERT_OK(aclrtFreeHost(pinned));
  free(heap);
  ASSERT_OK(aclrtFree(dev));
  (void)aclGetRecentErrMsg();
}

TEST(memcpy_host_sides_take_host_memory_of_this_process) { memcpy_cases(); }

/* ---------------------------------- without process_vm_readv/writev */
static int refuse_process_vm(void) {
  struct sock_filter f[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_process_vm_readv, 2, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_process_vm_writev, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 1 /* EPERM */),
  };
  struct sock_fprog prog = {sizeof f / sizeof f[0], f};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
    return -1;
  /* this thread only (no TSYNC) */
  return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
}

static int filtered_ok;
static void *filtered(void *arg) {
  (void)arg;
  if (refuse_process_vm() != 0)
    return NULL;
  char b[8];
  struct iovec l = {b, 1}, r = {b + 1, 1};
  if (syscall(__NR_process_vm_readv, getpid(), &l, 1, &r, 1, 0) != -1)
    return NULL; /* the filter did not take */
  filtered_ok = 1;
  if (aclrtSetDevice(0) != ACL_SUCCESS)
    return NULL;
  memset_cases();
  memcpy_cases();
  aclrtResetDevice(0);
  return NULL;
}

TEST(the_check_reads_proc_maps_where_process_vm_is_refused) {
  pthread_t t;
  ASSERT(pthread_create(&t, NULL, filtered, NULL) == 0);
  pthread_join(t, NULL);
  ASSERT(filtered_ok);
}
