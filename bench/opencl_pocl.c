#include "bench.h"
int scenario_opencl_pocl(void) { bench_skip("opencl_pocl", "not written yet"); return 0; }
