#include "bench.h"
int scenario_fanout_fanin(void) { bench_skip("fanout_fanin", "not written yet"); return 0; }
double evrt_case_fanout(void *ctx, long iters) { (void)ctx; (void)iters; return 0; }
