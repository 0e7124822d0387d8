"""Python overhead of evrt's calls against a no-op C method call.

    PYTHONPATH=build/python/site python3 bench/python_overhead.py [--json]

Each case is a statement timed in a loop by timeit (the loop's own cost is
in every case alike); the baseline is ``n.noop()``, a C method that does
nothing (evrt._evrt._Noop), called the same way.  Every case and the
baseline run one sample per repetition, in an order that rotates between
repetitions, in this one process; the figure is the median over the
repetitions and the ratio is a case's median over the baseline's (so it
holds up on a loaded machine better than the absolute numbers).  The
targets are the issue's: record and query within 3x the no-op call,
current_stream within 2x.

The cases: record on an idle stream (explicit stream, and the current
stream), query and synchronize of a complete event, current_stream (evrt's
and evrt.cuda's), and the enqueue of a launched callable.
"""
import json
import os
import statistics
import sys
import timeit

import evrt
import evrt.cuda

REPS = int(os.environ.get("EVRT_BENCH_REPS", "9"))
SAMPLE_S = float(os.environ.get("EVRT_BENCH_SAMPLE_MS", "40")) / 1000.0


def setup_namespace():
    s = evrt.Stream()
    e = evrt.Event()
    e.record(s)
    s.synchronize()
    ce = evrt.cuda.Event()
    return {
        "n": evrt._evrt._Noop(), "s": s, "e": e, "ce": ce,
        "evrt": evrt, "cuda": evrt.cuda, "noop_fn": (lambda: None),
    }


# (name, statement, target ratio or None)
CASES = [
    ("noop C method call (baseline)", "n.noop()", None),
    ("Event.record(stream), idle stream", "e.record(s)", 3.0),
    ("Event.record(), current stream", "e.record()", 3.0),
    ("evrt.cuda.Event.record()", "ce.record()", 3.0),
    ("Event.query(), complete", "e.query()", 3.0),
    ("Event.synchronize(), complete", "e.synchronize()", None),
    ("evrt.current_stream()", "evrt.current_stream()", 2.0),
    ("evrt.cuda.current_stream()", "cuda.current_stream()", 2.0),
    ("Stream.launch(fn) (enqueue)", "s.launch(noop_fn)", None),
]


def calibrate(timer):
    n = 1000
    while True:
        t = timer.timeit(n)
        if t >= SAMPLE_S / 4 or n > 10**8:
            return max(1000, int(n * SAMPLE_S / max(t, 1e-9)))
        n *= 4


def main():
    as_json = "--json" in sys.argv
    ns = setup_namespace()
    timers = [timeit.Timer(stmt, globals=ns) for _, stmt, _ in CASES]
    iters = [calibrate(t) for t in timers]
    samples = [[] for _ in CASES]
    for rep in range(REPS):
        order = list(range(len(CASES)))
        k = rep % len(order)
        for i in order[k:] + order[:k]:
            t = timers[i].timeit(iters[i])
            samples[i].append(t / iters[i] * 1e9)
            if CASES[i][1].startswith("s.launch"):
                ns["s"].synchronize()  # drain before the next sample
    base = statistics.median(samples[0])
    if not as_json:
        print("evrt Python overhead: %s, Python %s, %d cpus" % (
            " ".join(os.uname()[0:3:2]), sys.version.split()[0],
            os.cpu_count()))
        print("median / min / max over %d interleaved repetitions (ns per "
              "call, loop included); ratio to the no-op C method call" % REPS)
        print("   %-36s %9s %9s %9s %7s" % ("case", "median", "min", "max",
                                             "ratio"))
    failed = 0
    for (name, stmt, target), xs in zip(CASES, samples):
        med = statistics.median(xs)
        ratio = med / base
        met = None if target is None else ratio <= target
        if target is not None and not met:
            failed += 1
        if as_json:
            rec = {"scenario": "python_overhead", "variant": name,
                   "median_ns": round(med, 2), "baseline": "noop_c_method",
                   "baseline_median_ns": round(base, 2),
                   "ratio": round(ratio, 3)}
            if target is not None:
                rec["target"] = "<= %gx" % target
                rec["met"] = met
            print(json.dumps(rec))
        else:
            tail = "" if target is None else "   target <= %gx: %s" % (
                target, "met" if met else "MISSED")
            print("   %-36s %9.1f %9.1f %9.1f %6.2fx%s" % (
                name, med, min(xs), max(xs), ratio, tail))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
