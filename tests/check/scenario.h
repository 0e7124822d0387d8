/*
 * scenario.h - racy and correct programs for EVRT_CHECK (docs/check.md).
 *
 * A test program holds scenarios, each a small program that is either racy
 * on purpose (it names the kind of finding it must produce) or correct (it
 * must produce none).  `PROG expect NAME` runs `PROG run NAME` as a child
 * with EVRT_CHECK=1 and checks what the checker said:
 *  - racy: exit status 66 and at least one "evrt-check: KIND" block, every
 *    one of the expected kind;
 *  - correct: exit status 0 and no "evrt-check:" line at all;
 *  - and every report whole: from its "evrt-check: KIND" line to its
 *    "  fix:" line, each line is the report's own (indented), whatever
 *    else the program writes to stderr meanwhile;
 *  - a scenario with REPORT_LINES: each pattern (fnmatch: `*` for the
 *    addresses) matches a whole line of its stderr, in the given order
 *    (what a report says, line by line); a pattern that starts with '|'
 *    may match any line (for the two sides of a race, whose order in the
 *    report is the order they ran in).
 * A scenario that finds its own behaviour wrong (a call that should fail
 * did not) exits with status 3.  `PROG` alone runs every scenario.
 */
#ifndef EVRT_CHECK_SCENARIO_H
#define EVRT_CHECK_SCENARIO_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fnmatch.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CLEAN NULL
struct scenario {
  const char *name;
  const char *expect; /* the finding kind, or CLEAN */
  void (*fn)(void);
};
static struct scenario scenarios_[128];
static int nscenarios_;

/* The lines a scenario's report must have (REPORT_LINES). */
struct report_lines {
  const char *name;
  const char *const *lines;
};
static struct report_lines report_lines_[32];
static int nreport_lines_;
#define REPORT_LINES(sname, ...)                                               \
  static const char *const lines_##sname[] = {__VA_ARGS__, NULL};              \
  __attribute__((constructor)) static void reg_lines_##sname(void) {           \
    report_lines_[nreport_lines_++] =                                          \
        (struct report_lines){#sname, lines_##sname};                          \
  }

#define SCENARIO(sname, kind)                                                  \
  static void scn_##sname(void);                                               \
  __attribute__((constructor)) static void reg_##sname(void) {                 \
    scenarios_[nscenarios_++] =                                                \
        (struct scenario){#sname, kind, scn_##sname};                          \
  }                                                                            \
  static void scn_##sname(void)

/* A scenario's own check: exit 3 with a message. */
#define EXPECT(c)                                                              \
  do {                                                                         \
    if (!(c)) {                                                                \
      fprintf(stderr, "scenario: %s:%d: %s is false\n", __FILE__, __LINE__,    \
              #c);                                                             \
      exit(3);                                                                 \
    }                                                                          \
  } while (0)

static inline void sleep_ms_(unsigned ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* A gate: a host function that holds its stream until gate_open(). */
static atomic_int gate_;
static inline void gate_fn(void *arg) {
  (void)arg;
  for (int i = 0; i < 60000 && !atomic_load(&gate_); i++)
    sleep_ms_(1);
}
static inline void gate_open(void) { atomic_store(&gate_, 1); }

static int run_child(const char *self, const struct scenario *sc, char *err,
                     size_t cap) {
  const char *name = sc->name;
  int fd[2];
  if (pipe(fd) != 0)
    return -1;
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fd[1], 2);
    close(fd[0]);
    close(fd[1]);
    setenv("EVRT_CHECK", "1", 1);
    unsetenv("EVRT_CHECK_EXITCODE");
#ifdef EVRT_CHECK_TSAN_SUPP
    /* A racy program's own accesses race for real: ThreadSanitizer (in the
     * sanitizer job) must not stop it before the checker has spoken. */
    if (sc->expect) {
      static char opts[1024];
      const char *o = getenv("TSAN_OPTIONS");
      snprintf(opts, sizeof opts, "%s suppressions=%s", o ? o : "",
               EVRT_CHECK_TSAN_SUPP);
      setenv("TSAN_OPTIONS", opts, 1);
    }
#endif
    execl(self, self, "run", name, (char *)NULL);
    _exit(127);
  }
  close(fd[1]);
  size_t n = 0;
  ssize_t r;
  while ((r = read(fd[0], err + n, cap - 1 - n > 0 ? cap - 1 - n : 0)) > 0)
    n += (size_t)r;
  char sink[4096];
  while (read(fd[0], sink, sizeof sink) > 0)
    ;
  err[n] = 0;
  close(fd[0]);
  int st = 0;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The report that starts at `line` ends at its "  fix:" line with no
 * line of other output in between. */
static bool report_whole_(const char *line) {
  for (const char *l = strchr(line, '\n'); l && l[1]; l = strchr(l + 1, '\n')) {
    if (strncmp(l + 1, "  fix:", 6) == 0)
      return true;
    if (strncmp(l + 1, "  ", 2) != 0)
      return false;
  }
  return false;
}

/* The first pattern of the scenario's REPORT_LINES that no line of err
 * matches in order, or NULL. */
static const char *missing_line_(const char *name, const char *err) {
  const char *const *want = NULL;
  for (int i = 0; i < nreport_lines_; i++)
    if (strcmp(report_lines_[i].name, name) == 0)
      want = report_lines_[i].lines;
  if (!want)
    return NULL;
  const char *l = err;
  for (; *want; want++) {
    bool hit = false, any = **want == '|';
    const char *from = l;
    if (any)
      l = err;
    while (!hit && l && *l) {
      const char *nl = strchr(l, '\n');
      size_t n = nl ? (size_t)(nl - l) : strlen(l);
      char line[4096];
      snprintf(line, sizeof line, "%.*s", (int)n, l);
      hit = fnmatch(*want + any, line, 0) == 0;
      l = nl ? nl + 1 : NULL;
    }
    if (!hit)
      return *want;
    if (any)
      l = from;
  }
  return NULL;
}

/* Check one scenario in a child; 0 if it behaved. */
static int expect_one(const char *self, const struct scenario *sc) {
  static char err[1 << 20];
  int code = run_child(self, sc, err, sizeof err);
  int findings = 0, wrong = 0, split = 0;
  for (char *line = err; line && *line;) {
    char *nl = strchr(line, '\n');
    if (strncmp(line, "evrt-check: ", 12) == 0) {
      const char *k = line + 12;
      if (strncmp(k, "summary:", 8) != 0 && strncmp(k, "note:", 5) != 0) {
        findings++;
        if (!sc->expect || strncmp(k, sc->expect, strlen(sc->expect)) != 0)
          wrong++;
        if (!report_whole_(line))
          split++;
      }
    }
    line = nl ? nl + 1 : NULL;
  }
  bool ok = sc->expect ? code == 66 && findings > 0 && wrong == 0 && !split
                       : code == 0 && findings == 0 && !strstr(err, "evrt-check:");
  const char *miss = missing_line_(sc->name, err);
  if (miss) {
    ok = false;
    printf("     %s: no line (in order) matches \"%s\"\n", sc->name, miss);
  }
  printf("%s %s: %s, exit status %d, %d finding%s%s%s\n", ok ? "ok  " : "FAIL",
         sc->name, sc->expect ? sc->expect : "clean", code, findings,
         findings == 1 ? "" : "s", wrong ? " (some of another kind)" : "",
         split ? " (a report split by other output)" : "");
  if (!ok || getenv("SCENARIO_VERBOSE"))
    fprintf(stderr, "---- stderr of %s ----\n%s---- end ----\n", sc->name, err);
  return ok ? 0 : 1;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "run") == 0) {
    for (int i = 0; i < nscenarios_; i++)
      if (strcmp(scenarios_[i].name, argv[2]) == 0) {
        scenarios_[i].fn();
        return 0;
      }
    fprintf(stderr, "no scenario %s\n", argv[2]);
    return 2;
  }
  if (argc == 2 && strcmp(argv[1], "list") == 0) {
    for (int i = 0; i < nscenarios_; i++)
      printf("%s\n", scenarios_[i].name);
    return 0;
  }
  int failed = 0, ran = 0;
  for (int i = 0; i < nscenarios_; i++) {
    if (argc == 3 && strcmp(argv[1], "expect") == 0 &&
        strcmp(argv[2], scenarios_[i].name) != 0)
      continue;
    failed += expect_one("/proc/self/exe", &scenarios_[i]);
    ran++;
  }
  if (!ran) {
    fprintf(stderr, "no such scenario\n");
    return 2;
  }
  printf("%d passed, %d failed\n", ran - failed, failed);
  return failed ? 1 : 0;
}

#endif
