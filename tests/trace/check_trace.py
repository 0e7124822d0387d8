#!/usr/bin/python3
"""check_trace.py - run a traced program, then check its Chrome trace file and
the SVG that evrt-trace draws from it (tests/trace/CMakeLists.txt runs it).

  check_trace.py --render EVRT_TRACE --dir DIR --workload PROG MODE
  check_trace.py --render EVRT_TRACE --dir DIR --demo PROG
  check_trace.py --render EVRT_TRACE --dir DIR --bad-input

What a trace must satisfy (docs/trace.md):
  - valid JSON; no dropped entries;
  - every slice lies on a named track of its device's process, and the slices
    of a track never overlap (a stream runs its items in order);
  - one record marker per record slice, inside it;
  - every flow starts inside a record slice, steps into the wait that bound
    to that generation and ends in the work the stream resumed with; the
    record's slice ends before the waiting stream's next slice starts;
  - every wait on a generation recorded in the trace has exactly one flow;
  - (workloads) the slices per stream and kind are exactly what was submitted
    (the graph workload: a graph's nodes on its lanes' tracks, launch by launch).
The SVG must be well-formed XML with one lane per stream track.
Exit 0 when all hold; otherwise the first failure is printed and exit 1.
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

EPS = 1e-6  # us; the file has ns resolution
KINDS = {"host_func", "memcpy", "memset", "delay", "record", "wait", "reset",
         "host_task", "value_wait", "value_write", "graph"}
SVG = "{http://www.w3.org/2000/svg}"


class Fail(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Fail(msg)


def run(cmd, env=None, timeout=300):
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run(cmd, env=e, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=timeout, text=True)
    check(p.returncode == 0, "%s exited %d\nstdout:\n%s\nstderr:\n%s" %
          (" ".join(cmd), p.returncode, p.stdout[-4000:], p.stderr[-4000:]))
    return p


def inside(ts, s):
    return s["ts"] - EPS <= ts <= s["ts"] + s["dur"] + EPS


def check_trace(path):
    """Structural checks; returns a summary used by the other checks."""
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    check(isinstance(doc, dict) and isinstance(doc.get("traceEvents"), list),
          "no traceEvents array")
    other = doc.get("otherData", {})
    check(other.get("dropped_entries") == 0,
          "dropped entries: %r" % other.get("dropped_entries"))
    ev = doc["traceEvents"]
    procs, tracks = {}, {}
    for e in ev:
        if e.get("ph") == "M" and e.get("name") == "process_name":
            procs[e["pid"]] = e["args"]["name"]
    device_pids = {p for p, n in procs.items() if re.fullmatch(r"device \d+", n)}
    host_pids = {p for p, n in procs.items() if n == "host"}
    for e in ev:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            check(e["pid"] in procs, "thread_name for unnamed process %r" % e)
            tracks[(e["pid"], e["tid"])] = e["args"]["name"]
    stream_tracks = {k: v for k, v in tracks.items() if k[0] in device_pids}

    by_track = collections.defaultdict(list)
    for e in ev:
        if e.get("ph") != "X":
            continue
        for key in ("ts", "dur"):
            check(isinstance(e.get(key), (int, float)) and e[key] >= 0,
                  "bad %s in %r" % (key, e))
        key = (e["pid"], e["tid"])
        check(key in tracks, "slice on a track with no name: %r" % e)
        if e["pid"] in device_pids:
            check(e["cat"] in KINDS, "unknown kind %r" % e)
            if e["cat"] in ("record", "wait", "reset"):
                check(isinstance(e["args"].get("event"), int) and
                      isinstance(e["args"].get("gen"), int),
                      "event slice without event/gen: %r" % e)
        else:
            check(e["pid"] in host_pids and e["cat"] == "host_wait",
                  "slice outside any stream or host track: %r" % e)
        by_track[key].append(e)
    for key, sl in by_track.items():
        sl.sort(key=lambda s: (s["ts"], s["dur"]))
        for a, b in zip(sl, sl[1:]):
            check(a["ts"] + a["dur"] <= b["ts"] + EPS,
                  "overlapping slices on %s: %r and %r" % (tracks[key], a, b))

    # records: one marker per record slice, inside it
    rec_slices = {}
    for key, sl in by_track.items():
        for s in sl:
            if s["cat"] == "record":
                g = (s["args"]["event"], s["args"]["gen"])
                check(g not in rec_slices, "two record slices for %r" % (g,))
                rec_slices[g] = (key, s)
    markers = [e for e in ev if e.get("ph") == "i"]
    check(len(markers) == len(rec_slices),
          "%d record markers for %d record slices" %
          (len(markers), len(rec_slices)))
    for m in markers:
        g = (m["args"]["event"], m["args"]["gen"])
        check(g in rec_slices, "marker without record slice %r" % m)
        key, s = rec_slices[g]
        check(key == (m["pid"], m["tid"]) and inside(m["ts"], s),
              "marker %r not inside its record slice %r" % (m, s))

    def slice_at(key, ts, cat=None):
        for i, s in enumerate(by_track.get(key, [])):
            if inside(ts, s) and (cat is None or s["cat"] == cat):
                return i, s
        return None, None

    flows = collections.defaultdict(list)
    for e in ev:
        if e.get("ph") in ("s", "t", "f"):
            flows[e["id"]].append(e)
    flowed = collections.Counter()
    for fid, pts in flows.items():
        ph = "".join(sorted((p["ph"] for p in pts), key="stf".index))
        check(ph in ("stf", "sf"), "flow %r has points %s" % (fid, ph))
        pts.sort(key=lambda p: "stf".index(p["ph"]))
        s_pt, f_pt = pts[0], pts[-1]
        event = int(s_pt["name"].split()[-1])
        skey = (s_pt["pid"], s_pt["tid"])
        _, rec = slice_at(skey, s_pt["ts"], "record")
        check(rec is not None and rec["args"]["event"] == event,
              "flow %r does not start inside a record of event %d" %
              (fid, event))
        w_pt = pts[1] if ph == "stf" else f_pt
        wkey = (w_pt["pid"], w_pt["tid"])
        wi, wait = slice_at(wkey, w_pt["ts"], "wait")
        check(wait is not None and wait["args"]["event"] == event and
              wait["args"]["gen"] == rec["args"]["gen"],
              "flow %r does not reach a wait on its generation" % fid)
        nxt = by_track[wkey][wi + 1] if wi + 1 < len(by_track[wkey]) else None
        if ph == "stf":
            check(nxt is not None and (f_pt["pid"], f_pt["tid"]) == wkey and
                  inside(f_pt["ts"], nxt) and f_pt.get("bp") == "e",
                  "flow %r does not end in the slice after the wait" % fid)
        else:
            check(nxt is None, "flow %r ends in the wait but work follows" % fid)
        if nxt is not None:
            check(rec["ts"] + rec["dur"] <= nxt["ts"] + EPS,
                  "record %r ends after the waiting stream resumed with %r" %
                  (rec, nxt))
        check(s_pt["ts"] <= w_pt["ts"] + EPS <= f_pt["ts"] + 2 * EPS,
              "flow %r goes back in time" % fid)
        flowed[(wkey, wait["ts"])] += 1
    nwaits = 0
    for key, sl in by_track.items():
        for s in sl:
            if s["cat"] == "wait" and (s["args"]["event"],
                                       s["args"]["gen"]) in rec_slices:
                nwaits += 1
                check(flowed[(key, s["ts"])] == 1,
                      "wait %r has %d flows" % (s, flowed[(key, s["ts"])]))
    check(sum(flowed.values()) == nwaits, "flows that match no wait")
    counts = collections.Counter()
    for key, sl in by_track.items():
        for s in sl:
            counts[(tracks[key], s["cat"])] += 1
    return {"doc": doc, "tracks": tracks, "stream_tracks": stream_tracks,
            "counts": counts, "flows": flows, "nslices": sum(
                len(v) for v in by_track.values())}


def check_counts(info, expect_path):
    with open(expect_path) as f:
        want = json.load(f)["streams"]
    names = list(info["stream_tracks"].values())
    for name, kinds in want.items():
        check(names.count(name) == 1,
              "stream %r has %d tracks" % (name, names.count(name)))
        for kind, n in kinds.items():
            got = info["counts"][(name, kind)]
            check(got == n, "stream %s: %d %s slices, %d submitted" %
                  (name, got, kind, n))
    extra = set(names) - set(want)
    check(not extra, "tracks for streams not created: %r" % extra)


def check_svg(render, trace, svg, info):
    run([render, trace, "-o", svg])
    root = ET.parse(svg).getroot()
    check(root.tag == SVG + "svg", "root is %r" % root.tag)
    lanes = [g for g in root.iter(SVG + "g") if g.get("class") == "lane"]
    keys = [(int(g.get("data-pid")), int(g.get("data-tid"))) for g in lanes]
    check(len(keys) == len(set(keys)), "a track drawn twice")
    stream_lanes = {k for k, g in zip(keys, lanes)
                    if re.fullmatch(r"device \d+", g.get("data-process"))}
    check(stream_lanes == set(info["stream_tracks"]),
          "lanes %r != stream tracks %r" % (sorted(stream_lanes),
                                            sorted(info["stream_tracks"])))
    for k, g in zip(keys, lanes):
        if k in info["tracks"]:
            check(g.get("data-name") == info["tracks"][k],
                  "lane %r named %r" % (k, g.get("data-name")))
    rects = [r for r in root.iter(SVG + "rect") if r.get("class") == "slice"]
    check(len(rects) == info["nslices"],
          "%d slice rects for %d slices" % (len(rects), info["nslices"]))
    arrows = [p for p in root.iter(SVG + "path") if p.get("class") == "flow"]
    want = sum(len(p) - 1 for p in info["flows"].values())
    check(len(arrows) == want, "%d arrows for %d flow steps" %
          (len(arrows), want))


def bad_inputs(render, d):
    """Malformed files get a message and exit 1, never a crash."""
    good = os.path.join(d, "good.json")
    with open(good, "w") as f:
        json.dump({"traceEvents": [
            {"ph": "M", "name": "thread_name", "pid": 1, "tid": 2,
             "args": {"name": "s \u00e9\u4e2d \"<&>\""}},
            {"ph": "X", "pid": 1, "tid": 2, "ts": 1, "dur": 2, "name": "x",
             "cat": "memcpy"}]}, f)
    text = open(good).read()
    cases = [text[:n] for n in range(0, len(text), 7)]
    cases += ["[" * 100000, '{"traceEvents":[{"name":"\\x"}]}',
              '{"traceEvents":[{"name":"\\ud800"}]}x', '{"traceEvents":7}',
              '"\\u12', "\x00", '{"a":-}']
    # odd but valid: must draw (and finish: no endless axis loop)
    odd = ['{"traceEvents":[1e999999999999999999999999999999999]}',
           json.dumps({"traceEvents": [
               {"ph": "X", "pid": 1, "tid": 1, "ts": 1e20, "dur": 1000,
                "name": "far", "cat": "x"}]}),
           json.dumps({"traceEvents": [
               {"ph": "X", "pid": 1, "tid": 1, "ts": t, "dur": d,
                "name": "n", "cat": "y"} for t, d in
               ((1e300, 1e308), (-1e308, 1), (5, -3))]}),
           '[{"ph":"i","pid":1,"tid":1,"ts":3,"name":"m"},'
           '{"ph":"f","id":9,"pid":1,"tid":2,"ts":1,"name":"lonely"}]']
    for i, c in enumerate(odd):
        p = os.path.join(d, "odd%d.json" % i)
        with open(p, "w") as f:
            f.write(c)
        run([render, p, "-o", os.path.join(d, "odd.svg")], timeout=60)
        ET.parse(os.path.join(d, "odd.svg"))
    for i, c in enumerate(cases):
        p = os.path.join(d, "bad%d.json" % i)
        with open(p, "w") as f:
            f.write(c)
        r = subprocess.run([render, p, "-o", os.path.join(d, "bad.svg")],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=60)
        check(r.returncode == 1 and r.stderr.startswith("evrt-trace: ") and
              "Sanitizer" not in r.stderr,
              "input %r: exit %d, stderr %r" % (c[:60], r.returncode,
                                                r.stderr[-2000:]))
    # and the good file draws, with its odd name escaped
    run([render, good, "-o", os.path.join(d, "good.svg")])
    root = ET.parse(os.path.join(d, "good.svg")).getroot()
    lanes = [g for g in root.iter(SVG + "g") if g.get("class") == "lane"]
    check(len(lanes) == 1 and lanes[0].get("data-name") ==
          "s \u00e9\u4e2d \"<&>\"", "name not kept: %r" %
          [g.attrib for g in lanes])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--render", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--workload", nargs=2, metavar=("PROG", "MODE"))
    ap.add_argument("--demo")
    ap.add_argument("--bad-input", action="store_true")
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    try:
        if a.bad_input:
            bad_inputs(a.render, a.dir)
            print("ok: malformed inputs refused")
            return 0
        if a.workload:
            prog, mode = a.workload
            trace = os.path.join(a.dir, mode + ".json")
            expect = os.path.join(a.dir, mode + ".expect.json")
            for p in (trace, expect):
                if os.path.exists(p):
                    os.remove(p)
            env = {"EVRT_TRACE": trace} if mode == "exit" else {}
            run([prog, mode, trace, expect], env=env)
            info = check_trace(trace)
            check_counts(info, expect)
        else:
            trace = os.path.join(a.dir, "demo.json")
            if os.path.exists(trace):
                os.remove(trace)
            run([a.demo], env={"EVRT_TRACE": trace})
            info = check_trace(trace)
            names = sorted(info["stream_tracks"].values())
            check(len(names) >= 3, "demo has streams %r" % names)
            check(len(info["flows"]) > 0, "demo trace has no flows")
        check_svg(a.render, trace, trace[:-5] + ".svg", info)
        print("ok: %d slices on %d streams, %d flows" %
              (info["nslices"], len(info["stream_tracks"]), len(info["flows"])))
        return 0
    except Fail as e:
        print("FAIL:", e)
        return 1


if __name__ == "__main__":
    sys.exit(main())
