"""How soon Ctrl-C interrupts evrt's blocking Python calls.

    PYTHONPATH=build/python/site python3 bench/python_sigint.py [--json]

For each blocking call, a child process holds a stream with a callable that
never returns by itself, enters the call and reports that it waits; the
parent sends SIGINT and the child prints the CLOCK_MONOTONIC time at which
it caught KeyboardInterrupt.  The latency is that time minus the parent's
time just before os.kill (the same clock in both processes).  Each call is
measured TRIALS times (EVRT_BENCH_REPS, default 9); the table gives the
median and the maximum.  Target (issue 13 item 7): within 100 ms.
"""
import json
import os
import signal
import statistics
import subprocess
import sys
import time

TRIALS = int(os.environ.get("EVRT_BENCH_REPS", "9"))

EVRT = """
import sys, threading, time, evrt
gate = threading.Event()
s = evrt.Stream()
s.launch(gate.wait)
e = s.record_event()
"""
ACL = """
import sys, threading, time, evrt
from evrt import acl
rt = acl.rt
acl.init(); rt.set_device(0)
gate = threading.Event()
stream, _ = rt.create_stream()
event, _ = rt.create_event_with_flag(acl.ACL_EVENT_SYNC)
rt.launch_host_func(stream, lambda _: gate.wait(), None)
rt.record_event(event, stream)
rt.subscribe_report(threading.get_ident(), stream)
"""
CALLS = [
    ("evrt.synchronize()", EVRT, "evrt.synchronize()"),
    ("Stream.synchronize()", EVRT, "s.synchronize()"),
    ("Event.synchronize()", EVRT, "e.synchronize()"),
    ("acl.rt.synchronize_stream", ACL, "rt.synchronize_stream(stream)"),
    ("acl.rt.synchronize_device", ACL, "rt.synchronize_device()"),
    ("acl.rt.synchronize_event", ACL, "rt.synchronize_event(event)"),
    ("acl.rt.process_report(-1)", ACL, "rt.process_report(-1)"),
]
CHILD = """%s
print('waiting', flush=True)
try:
    %s
    print('returned', flush=True)
except KeyboardInterrupt:
    print('caught %%.9f' %% time.monotonic(), flush=True)
gate.set()
"""


def one(prelude, call):
    p = subprocess.Popen([sys.executable, "-c", CHILD % (prelude, call)],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         text=True)
    try:
        if p.stdout.readline().strip() != "waiting":
            return None
        time.sleep(0.2)  # well inside the call
        t0 = time.monotonic()
        os.kill(p.pid, signal.SIGINT)
        line = p.stdout.readline().split()
        p.wait(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    if len(line) != 2 or line[0] != "caught":
        return None
    return (float(line[1]) - t0) * 1e3


def main():
    as_json = "--json" in sys.argv
    try:
        import evrt.acl  # noqa: F401
        have_acl = True
    except ImportError:
        have_acl = False
    if not as_json:
        print("evrt Ctrl-C latency: SIGINT -> KeyboardInterrupt, ms, %d "
              "trials each (target: <= 100 ms)" % TRIALS)
        print("   %-30s %9s %9s" % ("call", "median", "max"))
    failed = 0
    for name, prelude, call in CALLS:
        if prelude is ACL and not have_acl:
            continue
        xs = [one(prelude, call) for _ in range(TRIALS)]
        if any(x is None for x in xs):
            failed += 1
            print("   %-30s not interrupted" % name)
            continue
        med, worst = statistics.median(xs), max(xs)
        met = worst <= 100.0
        failed += not met
        if as_json:
            print(json.dumps({"scenario": "python_sigint", "variant": name,
                              "median_ms": round(med, 2),
                              "max_ms": round(worst, 2),
                              "target": "<= 100 ms", "met": met}))
        else:
            print("   %-30s %9.1f %9.1f   %s" % (name, med, worst,
                                                 "met" if met else "MISSED"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
