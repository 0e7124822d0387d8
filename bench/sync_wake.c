#include "bench.h"
int scenario_sync_wake(void) { bench_skip("sync_wake", "not written yet"); return 0; }
