/*
 * evrt-check - run a program under the synchronization checker with several
 * schedules (docs/check.md):
 *
 *   evrt-check [--runs N] [--seed S] [--timeout SEC] [--keep-going]
 *              [--verbose] -- PROGRAM [ARGS...]
 *
 * Runs PROGRAM N times (default 8) with EVRT_CHECK=1 and EVRT_CHAOS set to
 * the seeds S, S+1, ... (default S = 1), each run's stderr captured.  A run
 * fails when the checker reported something (a block starting
 * "evrt-check: KIND", exit status 66), when the program crashed or exited
 * with another non-zero status (a race that computed a wrong result under
 * that schedule), or when it ran past the timeout (default 300 s).  The
 * first failing seed is printed with its report and the command line that
 * replays it; evrt-check then exits with status 1 (0 when every run was
 * clean, 2 on a usage error).  The program's stdout is discarded unless
 * --verbose.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void usage(FILE *f) {
  fprintf(f, "usage: evrt-check [--runs N] [--seed S] [--timeout SEC] "
             "[--keep-going] [--verbose] -- PROGRAM [ARGS...]\n"
             "Runs PROGRAM N times with EVRT_CHECK=1 and EVRT_CHAOS=S, S+1, "
             "...;\nprints the first failing seed and its report.\n");
}

static uint64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

struct run {
  int status; /* waitpid status */
  bool timed_out;
  char *err;  /* the program's stderr */
  size_t nerr;
};

static bool parse_u64(const char *s, uint64_t *out) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 0);
  if (errno || end == s || *end || s[0] == '-')
    return false;
  *out = v;
  return true;
}

static int run_once(char **argv, uint64_t seed, unsigned timeout_s,
                    bool verbose, struct run *r) {
  int fd[2];
  if (pipe(fd) != 0)
    return -1;
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0)
    return -1;
  if (pid == 0) {
    char s[32];
    snprintf(s, sizeof s, "%llu", (unsigned long long)seed);
    setenv("EVRT_CHECK", "1", 1);
    setenv("EVRT_CHAOS", s, 1);
    setenv("EVRT_CHECK_EXITCODE", "66", 1);
    dup2(fd[1], 2);
    close(fd[0]);
    close(fd[1]);
    if (!verbose) {
      int null = open("/dev/null", O_WRONLY);
      if (null >= 0)
        dup2(null, 1);
    }
    execvp(argv[0], argv);
    fprintf(stderr, "evrt-check: cannot run %s: %s\n", argv[0],
            strerror(errno));
    _exit(127);
  }
  close(fd[1]);
  r->err = NULL;
  r->nerr = 0;
  r->timed_out = false;
  size_t cap = 0;
  uint64_t deadline = now_ms() + (uint64_t)timeout_s * 1000;
  for (;;) {
    uint64_t t = now_ms();
    if (t >= deadline) {
      r->timed_out = true;
      kill(pid, SIGKILL);
      break;
    }
    struct pollfd p = {fd[0], POLLIN, 0};
    int n = poll(&p, 1, (int)(deadline - t > 1000 ? 1000 : deadline - t));
    if (n < 0 && errno != EINTR)
      break;
    if (n <= 0)
      continue;
    if (r->nerr + 4096 > cap) {
      cap = cap ? cap * 2 : 65536;
      char *g = realloc(r->err, cap);
      if (!g)
        break;
      r->err = g;
    }
    ssize_t k = read(fd[0], r->err + r->nerr, cap - r->nerr - 1);
    if (k <= 0)
      break;
    r->nerr += (size_t)k;
  }
  close(fd[0]);
  if (r->err)
    r->err[r->nerr] = 0;
  waitpid(pid, &r->status, 0);
  return 0;
}

/* Number of findings (blocks "evrt-check: KIND") in a run's stderr. */
static int findings_in(const char *err) {
  int n = 0;
  for (const char *l = err; l && *l;) {
    if (strncmp(l, "evrt-check: ", 12) == 0 &&
        strncmp(l + 12, "summary:", 8) != 0 && strncmp(l + 12, "note:", 5) != 0)
      n++;
    const char *nl = strchr(l, '\n');
    l = nl ? nl + 1 : NULL;
  }
  return n;
}

int main(int argc, char **argv) {
  uint64_t runs = 8, seed = 1, timeout = 300;
  bool keep_going = false, verbose = false;
  int i = 1;
  for (; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--") == 0) {
      i++;
      break;
    }
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      usage(stdout);
      return 0;
    }
    if (strcmp(a, "--keep-going") == 0) {
      keep_going = true;
      continue;
    }
    if (strcmp(a, "--verbose") == 0) {
      verbose = true;
      continue;
    }
    uint64_t *dst = strcmp(a, "--runs") == 0      ? &runs
                    : strcmp(a, "--seed") == 0    ? &seed
                    : strcmp(a, "--timeout") == 0 ? &timeout
                                                  : NULL;
    if (!dst) {
      if (a[0] == '-') {
        fprintf(stderr, "evrt-check: unknown option %s\n", a);
        usage(stderr);
        return 2;
      }
      break; /* the program, without "--" */
    }
    if (i + 1 >= argc || !parse_u64(argv[i + 1], dst)) {
      fprintf(stderr, "evrt-check: %s needs a non-negative number\n", a);
      return 2;
    }
    i++;
  }
  if (i >= argc) {
    fprintf(stderr, "evrt-check: no program given\n");
    usage(stderr);
    return 2;
  }
  if (runs == 0 || runs > 1000000 || timeout == 0 || timeout > 86400) {
    fprintf(stderr, "evrt-check: --runs must be 1..1000000 and --timeout "
                    "1..86400\n");
    return 2;
  }
  char **prog = argv + i;
  uint64_t failed = 0, first = 0;
  for (uint64_t k = 0; k < runs; k++) {
    uint64_t s = seed + k;
    struct run r;
    if (run_once(prog, s, (unsigned)timeout, verbose, &r) != 0) {
      fprintf(stderr, "evrt-check: cannot start a run: %s\n", strerror(errno));
      return 2;
    }
    int nf = findings_in(r.err);
    char why[128];
    why[0] = 0;
    if (r.timed_out)
      snprintf(why, sizeof why, "ran past the %llu s timeout",
               (unsigned long long)timeout);
    else if (WIFSIGNALED(r.status))
      snprintf(why, sizeof why, "crashed (signal %d, %s)", WTERMSIG(r.status),
               strsignal(WTERMSIG(r.status)));
    else if (nf)
      snprintf(why, sizeof why, "%d finding%s (exit status %d)", nf,
               nf == 1 ? "" : "s", WEXITSTATUS(r.status));
    else if (WEXITSTATUS(r.status) == 127)
      snprintf(why, sizeof why, "could not be run (exit status 127)");
    else if (WEXITSTATUS(r.status))
      snprintf(why, sizeof why, "exit status %d", WEXITSTATUS(r.status));
    if (!why[0]) {
      printf("evrt-check: seed %llu: clean\n", (unsigned long long)s);
      free(r.err);
      continue;
    }
    if (!failed++)
      first = s;
    printf("evrt-check: seed %llu: FAILED: %s\n", (unsigned long long)s, why);
    if (failed == 1) {
      printf("---- report of seed %llu ----\n%s", (unsigned long long)s,
             r.err ? r.err : "");
      if (r.nerr && r.err[r.nerr - 1] != '\n')
        printf("\n");
      printf("---- end; replay with: EVRT_CHECK=1 EVRT_CHAOS=%llu",
             (unsigned long long)s);
      for (char **p = prog; *p; p++)
        printf(" %s", *p);
      printf("\n");
    }
    free(r.err);
    if (!keep_going)
      break;
  }
  if (failed) {
    printf("evrt-check: %llu of the runs failed; first failing seed %llu\n",
           (unsigned long long)failed, (unsigned long long)first);
    return 1;
  }
  printf("evrt-check: %llu runs clean (seeds %llu..%llu)\n",
         (unsigned long long)runs, (unsigned long long)seed,
         (unsigned long long)(seed + runs - 1));
  return 0;
}
