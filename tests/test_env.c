/* Environment variables (issue 13, item 11): a bad EVRT_* value falls back
 * to its default with one warning on stderr naming the variable, the bad
 * value and the value used.  Each case runs this program again as a child
 * with the variable set (the values are read once, at initialization) and
 * reads the child's stderr. */
#include "test.h"

#include <sys/wait.h>

/* The child: initialize, use what reads each variable (workers, spin
 * budget, devices, event limit), print what it got, and leave. */
__attribute__((constructor)) static void env_child(void) {
  if (!getenv("EVRT_TEST_ENV_CHILD"))
    return;
  int n = -1;
  uint32_t limit = 0;
  evrt_stream_t s;
  if (evrt_init() || evrt_device_count(&n) ||
      evrt_device_get_event_limit(0, &limit) ||
      evrt_stream_create(&s, 0, 0, 0) || evrt_stream_delay(s, 1000000) ||
      evrt_stream_synchronize(s) || evrt_stream_synchronize(s)) {
    printf("child: %s\n", evrt_last_error_message());
    _exit(1);
  }
  printf("devices=%d limit=%u\n", n, limit);
  fflush(stdout);
  _exit(0);
}

/* Run this program as a child with `assign` (NAME=VALUE) in its
 * environment; its stdout and stderr in out.  Returns its exit status. */
static int run_child(const char *assign, char *out, size_t cap) {
  char exe[512];
  ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (k <= 0)
    return -1;
  exe[k] = 0;
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "EVRT_TEST_ENV_CHILD=1 %s '%s' 2>&1", assign, exe);
  FILE *p = popen(cmd, "r");
  if (!p)
    return -1;
  size_t n = fread(out, 1, cap - 1, p);
  out[n] = 0;
  int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int count(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = hay; (p = strstr(p, needle)) != NULL; p++)
    n++;
  return n;
}

struct bad_case {
  const char *assign;   /* NAME=VALUE */
  const char *name;     /* NAME */
  const char *value;    /* "VALUE" as the warning quotes it */
  const char *used;     /* "using N" */
  const char *got;      /* what the child reports, or NULL */
};

TEST(bad_environment_values_warn_once_naming_variable_value_and_default) {
  static const struct bad_case cases[] = {
      {"EVRT_CPU_DEVICES=65", "EVRT_CPU_DEVICES", "\"65\"", "using 1",
       "devices=1 "},
      {"EVRT_CPU_DEVICES=two", "EVRT_CPU_DEVICES", "\"two\"", "using 1",
       "devices=1 "},
      {"EVRT_WORKERS=-1", "EVRT_WORKERS", "\"-1\"", "using ", NULL},
      {"EVRT_SPIN_NS=abc", "EVRT_SPIN_NS", "\"abc\"", "using 4000", NULL},
      {"EVRT_SPIN_NS=99999999", "EVRT_SPIN_NS", "\"99999999\"", "using 4000",
       NULL},
      {"EVRT_EVENT_LIMIT=0", "EVRT_EVENT_LIMIT", "\"0\"", "using 65535",
       "limit=65535"},
      /* read when a trace starts (EVRT_TRACE: at init); "-5" wrapped to the
       * largest buffer, the others were taken or dropped without a word */
      {"EVRT_TRACE=/dev/null EVRT_TRACE_BUFFER=abc", "EVRT_TRACE_BUFFER",
       "\"abc\"", "using 262144", NULL},
      {"EVRT_TRACE=/dev/null EVRT_TRACE_BUFFER=0", "EVRT_TRACE_BUFFER",
       "\"0\"", "using 262144", NULL},
      {"EVRT_TRACE=/dev/null EVRT_TRACE_BUFFER=12x", "EVRT_TRACE_BUFFER",
       "\"12x\"", "using 262144", NULL},
      {"EVRT_TRACE=/dev/null EVRT_TRACE_BUFFER=-5", "EVRT_TRACE_BUFFER",
       "\"-5\"", "using 262144", NULL},
  };
  char out[4096];
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const struct bad_case *c = &cases[i];
    int st = run_child(c->assign, out, sizeof out);
    if (st != 0)
      FAIL_("%s: child exited %d: %s", c->assign, st, out);
    /* one warning line, naming the variable, quoting the bad value and
     * saying what is used instead */
    if (count(out, "evrt: warning:") != 1 || count(out, c->name) != 1 ||
        !strstr(out, c->value) || !strstr(out, c->used))
      FAIL_("%s: want one warning naming %s, %s and \"%s\"; stderr+stdout "
            "was:\n%s",
            c->assign, c->name, c->value, c->used, out);
    if (c->got && !strstr(out, c->got))
      FAIL_("%s: child reported \"%s\", want %s", c->assign, out, c->got);
  }
}

TEST(good_environment_values_are_used_silently) {
  char out[4096];
  ASSERT_EQ(run_child("EVRT_CPU_DEVICES=3 EVRT_WORKERS=3 EVRT_SPIN_NS=0 "
                      "EVRT_EVENT_LIMIT=77 EVRT_TRACE=/dev/null "
                      "EVRT_TRACE_BUFFER=4096",
                      out, sizeof out),
            0);
  if (strstr(out, "warning") || !strstr(out, "devices=3 limit=77"))
    FAIL_("good values: child printed:\n%s", out);
}
