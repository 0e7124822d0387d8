#include "bench.h"
int scenario_streams_scale(void) { bench_skip("streams_scale", "not written yet"); return 0; }
