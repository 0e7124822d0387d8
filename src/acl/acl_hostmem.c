/*
 * acl_hostmem.c - is a range the layer did not allocate host memory of this
 * process with the access a call needs?  The slow path of aclrtMemset and
 * of the host sides of aclrtMemcpy(Async) for pointers outside every block
 * of the layer (acl_memory.c): CANN accepts host memory there (the memory/12
 * sample sets a stack structure), and a stray pointer must still be ACL's
 * invalid parameter with no effect, not a crash (issue 13 item 2).
 *
 * The kernel answers: process_vm_readv on ourselves reads one byte of each
 * page of the range (EFAULT, or a short count, where one is not readable),
 * and for a destination process_vm_writev writes the same bytes back (the
 * call is about to overwrite the whole range anyway; a failure on a later
 * page leaves the earlier ones as they were).  Where those calls are
 * refused (a seccomp filter: EPERM, ENOSYS), /proc/self/maps is read.
 * Any thread, no lock held; system calls only.
 */
#include "acl_internal.h"

#include <errno.h>
#include <stdio.h>
#include <sys/uio.h>
#include <unistd.h>

#define PROBES 64

/* 1: all probes transferred, 0: a fault, -1: the call is refused. */
static int probe(bool write, struct iovec *local, struct iovec *remote,
                 int k) {
  pid_t self = getpid();
  ssize_t r = write ? process_vm_writev(self, local, (unsigned long)k, remote,
                                        (unsigned long)k, 0)
                    : process_vm_readv(self, local, (unsigned long)k, remote,
                                       (unsigned long)k, 0);
  if (r == k)
    return 1;
  if (r < 0 && (errno == EPERM || errno == ENOSYS))
    return -1;
  return 0;
}

/* [a, end) lies in mappings of /proc/self/maps that follow each other with
 * no gap, each readable (and writable if write). */
static bool maps_cover(uintptr_t a, uintptr_t end, bool write) {
  FILE *f = fopen("/proc/self/maps", "re");
  if (!f)
    return false;
  char line[512];
  uintptr_t cur = a;
  while (cur < end && fgets(line, sizeof line, f)) {
    unsigned long lo, hi;
    char perms[5];
    if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) != 3)
      continue;
    if (hi <= cur)
      continue;
    if (lo > cur || perms[0] != 'r' || (write && perms[1] != 'w'))
      break; /* a gap, or no access */
    cur = hi;
  }
  fclose(f);
  return cur >= end;
}

bool acl__host_range_ok(const void *p, size_t n, bool write) {
  uintptr_t a = (uintptr_t)p;
  if (!p || a + (n ? n : 1) < a)
    return false; /* NULL, or wraps the address space */
  uintptr_t end = a + (n ? n : 1);
  uintptr_t ps = (uintptr_t)sysconf(_SC_PAGESIZE);
  unsigned char byte[PROBES];
  struct iovec local[PROBES], remote[PROBES];
  uintptr_t at = a;
  while (at < end) {
    int k = 0;
    /* one byte at `at`, then at each following page start in range */
    for (; k < PROBES && at < end; k++) {
      local[k] = (struct iovec){&byte[k], 1};
      remote[k] = (struct iovec){(void *)at, 1};
      at = (at & ~(ps - 1)) + ps;
    }
    int r = probe(false, local, remote, k);
    if (r == 1 && write)
      r = probe(true, local, remote, k);
    if (r < 0)
      return maps_cover(a, end, write);
    if (r == 0)
      return false;
  }
  return true;
}
