/*
 * ipc_proc.c - this process's identity (pid and start time) and whether a
 * peer process is alive, from /proc/<pid>/stat.
 */
#include "ipc.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

uint64_t evrt__ipc_my_start;
int evrt__ipc_my_pid;

/* Start time (clock ticks since boot) and liveness of a process, from
 * /proc/<pid>/stat.  A zombie counts as dead. */
bool evrt__ipc_proc_info(int pid, uint64_t *start) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0)
    return false;
  buf[n] = 0;
  char *p = strrchr(buf, ')'); /* the command may contain spaces */
  if (!p || p[1] != ' ')
    return false;
  char state = p[2];
  if (state == 'Z' || state == 'X' || state == 'x')
    return false;
  /* field 3 is the state; starttime is field 22 */
  p += 2;
  for (int field = 3; field < 22; field++) {
    p = strchr(p, ' ');
    if (!p)
      return false;
    p++;
  }
  *start = strtoull(p, NULL, 10);
  return true;
}

/* Start times are compared on 42 bits, the width the recorders' table
 * keeps (ipc.h): 1,394 years of clock ticks at 100 Hz. */
#define START_MASK ((1ull << (64 - EVRT__IPC_PID_BITS)) - 1)

bool evrt__ipc_alive(int pid, uint64_t start) {
  if (pid <= 0)
    return false;
  if (pid == evrt__ipc_my_pid &&
      (start & START_MASK) == (evrt__ipc_my_start & START_MASK))
    return true;
  uint64_t s;
  return evrt__ipc_proc_info(pid, &s) &&
         (s & START_MASK) == (start & START_MASK);
}

void evrt__ipc_init_self(void) {
  int pid = getpid();
  if (pid != evrt__ipc_my_pid) { /* first use, or a forked child */
    evrt__ipc_my_pid = pid;
    if (!evrt__ipc_proc_info(pid, &evrt__ipc_my_start))
      evrt__ipc_my_start = 0;
  }
}
