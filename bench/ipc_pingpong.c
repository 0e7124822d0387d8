#include "bench.h"
int scenario_ipc_pingpong(void) { bench_skip("ipc_pingpong", "not written yet"); return 0; }
