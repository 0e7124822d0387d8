/*
 * main.c - evrt-bench: runs the scenarios named on the command line (all of
 * them when none is named).  bench/run.sh runs each scenario in its own
 * process, so that one scenario's streams, workers and memory never colour
 * another's figures.
 *
 *   evrt-bench [--json] [--list] [scenario...]
 */
#include "bench.h"

#include "evrt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
  const char *name;
  int (*fn)(void);
} scenarios[] = {
    {"record_idle", scenario_record_idle},
    {"record_sync_idle", scenario_record_sync_idle},
    {"query_complete", scenario_query_complete},
    {"query_pending", scenario_query_pending},
    {"event_create_destroy", scenario_event_create_destroy},
    {"stream_create_destroy", scenario_stream_create_destroy},
    {"sync_wake", scenario_sync_wake},
    {"pingpong_streams", scenario_pingpong_streams},
    {"hostfunc_throughput", scenario_hostfunc_throughput},
    {"fanout_fanin", scenario_fanout_fanin},
    {"streams_scale", scenario_streams_scale},
    {"opencl_pocl", scenario_opencl_pocl},
    {"ipc_pingpong", scenario_ipc_pingpong},
    {"graph_replay", scenario_graph_replay},
    {"device_after", scenario_device_after},
};
#define NSCEN (sizeof scenarios / sizeof scenarios[0])

void bench_die(const char *file, int line, const char *call, int st) {
  fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", file, line, call,
          evrt_err_name((evrt_status_t)st), evrt_last_error_message());
  exit(2);
}

int main(int argc, char **argv) {
  const char *v = getenv("EVRT_BENCH_REPS");
  if (v && atoi(v) >= 5)
    bench_reps = atoi(v) < BENCH_MAX_REPS ? atoi(v) : BENCH_MAX_REPS;
  v = getenv("EVRT_BENCH_SAMPLE_MS");
  if (v && atof(v) > 0)
    bench_sample_ms = atof(v);
  int nsel = 0;
  const char *sel[64];
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--json") == 0) {
      bench_json = true;
    } else if (strcmp(argv[i], "--list") == 0) {
      for (size_t k = 0; k < NSCEN; k++)
        printf("%s\n", scenarios[k].name);
      return 0;
    } else if (nsel < 64) {
      sel[nsel++] = argv[i];
    }
  }
  int rc = 0;
  for (size_t k = 0; k < NSCEN; k++) {
    bool run = nsel == 0;
    for (int i = 0; i < nsel; i++)
      if (strcmp(sel[i], scenarios[k].name) == 0)
        run = true;
    if (run && scenarios[k].fn() != 0)
      rc = 1;
  }
  for (int i = 0; i < nsel; i++) {
    bool known = false;
    for (size_t k = 0; k < NSCEN; k++)
      known |= strcmp(sel[i], scenarios[k].name) == 0;
    if (!known) {
      fprintf(stderr, "evrt-bench: unknown scenario '%s' (--list)\n", sel[i]);
      rc = 2;
    }
  }
  return rc;
}
