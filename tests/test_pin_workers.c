/*
 * test_pin_workers.c - EVRT_PIN_WORKERS=1 pins each base worker to its own
 * CPU (of those the process may use); unset or any other value leaves the
 * workers free.
 *
 * The library reads the variable once, at initialization, so every case
 * runs in a forked child that sets it before its first evrt call.  In the
 * child, host functions on two streams meet at a barrier (so two different
 * workers run them at the same time) and report the CPU set each one may
 * run on.
 */
#include "test.h"

#include <sched.h>
#include <sys/wait.h>

struct probe {
  pthread_barrier_t *meet;
  int ncpus; /* CPUs the worker that ran it may use */
  int first; /* the lowest of them */
};

static void report(void *arg) {
  struct probe *p = arg;
  pthread_barrier_wait(p->meet);
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0) {
    p->ncpus = -1;
    return;
  }
  p->ncpus = CPU_COUNT(&set);
  for (int c = 0; c < CPU_SETSIZE; c++)
    if (CPU_ISSET(c, &set)) {
      p->first = c;
      break;
    }
}

/* Exit codes of the child. */
enum { PINNED_APART = 10, FREE = 11, OTHER = 12, BROKEN = 13 };

static int child(const char *value) {
  if (value)
    setenv("EVRT_PIN_WORKERS", value, 1);
  else
    unsetenv("EVRT_PIN_WORKERS");
  cpu_set_t all;
  if (sched_getaffinity(0, sizeof all, &all) != 0)
    return BROKEN;
  pthread_barrier_t meet;
  pthread_barrier_init(&meet, NULL, 2);
  struct probe p[2] = {{&meet, 0, 0}, {&meet, 0, 0}};
  evrt_stream_t s[2];
  for (int i = 0; i < 2; i++)
    if (evrt_stream_create(&s[i], 0, 0, 0) ||
        evrt_launch_host_func(s[i], report, &p[i]))
      return BROKEN;
  for (int i = 0; i < 2; i++)
    if (evrt_stream_synchronize(s[i]))
      return BROKEN;
  if (p[0].ncpus < 0 || p[1].ncpus < 0)
    return BROKEN;
  if (p[0].ncpus == 1 && p[1].ncpus == 1 && p[0].first != p[1].first)
    return PINNED_APART;
  if (p[0].ncpus == CPU_COUNT(&all) && p[1].ncpus == CPU_COUNT(&all))
    return FREE;
  return OTHER;
}

static int run_child(const char *value) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0)
    _exit(child(value));
  int st = 0;
  if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
    return -1;
  return WEXITSTATUS(st);
}

static int usable_cpus(void) {
  cpu_set_t all;
  return sched_getaffinity(0, sizeof all, &all) == 0 ? CPU_COUNT(&all) : 0;
}

TEST(pinned_one_cpu_each_with_the_variable) {
  if (usable_cpus() < 2) {
    printf("  skipped: this process may use one CPU only, so pinned and free "
           "workers look the same\n");
    return;
  }
  ASSERT_EQ(run_child("1"), PINNED_APART);
}

TEST(free_by_default) {
  if (usable_cpus() < 2) {
    printf("  skipped: one usable CPU\n");
    return;
  }
  ASSERT_EQ(run_child(NULL), FREE);
  ASSERT_EQ(run_child("0"), FREE);
}

TEST(other_values_leave_workers_free) {
  if (usable_cpus() < 2) {
    printf("  skipped: one usable CPU\n");
    return;
  }
  ASSERT_EQ(run_child("yes"), FREE);
  ASSERT_EQ(run_child(""), FREE);
}
