#include "bench.h"
int scenario_pingpong_streams(void) { bench_skip("pingpong_streams", "not written yet"); return 0; }
double evrt_case_pingpong(void *ctx, long iters) { (void)ctx; (void)iters; return 0; }
