#include "bench.h"
int scenario_hostfunc_throughput(void) { bench_skip("hostfunc_throughput", "not written yet"); return 0; }
double evrt_case_hostfunc_one(void *ctx, long iters) { (void)ctx; (void)iters; return 0; }
