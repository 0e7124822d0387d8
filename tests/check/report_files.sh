#!/bin/sh
# report_files.sh DEMO: EVRT_CHECK_REPORT writes the findings as JSON, and
# with EVRT_TRACE the timeline marks the operations involved.
demo=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
EVRT_CHECK=1 EVRT_CHECK_REPORT="$dir/report.json" EVRT_TRACE="$dir/trace.json" \
  "$demo" --forget-wait >/dev/null 2>"$dir/stderr"
code=$?
[ $code -eq 66 ] || { echo "FAIL: exit status $code"; cat "$dir/stderr"; exit 1; }
python3 - "$dir/report.json" "$dir/trace.json" <<'PY'
import json, sys
rep = json.load(open(sys.argv[1]))
tr = json.load(open(sys.argv[2]))
f = rep["findings"]
assert f and all(x["kind"] == "data race" for x in f), f
assert rep["total"] >= len(f)
for x in f:
    a, b = x["operations"]
    for op in (a, b):
        assert op["access"] in ("read", "write"), op
        assert op["stream"] > 0 and op["work_item"] > 0, op
        assert int(op["range"][1], 16) > int(op["range"][0], 16), op
        site = op["enqueued_at"]
        assert site["file"] == "demo.c" and site["line"] > 0, site
    assert x["fix"].startswith("fix: ")
marks = [e for e in tr["traceEvents"] if e.get("cat") == "evrt-check"]
assert marks, "no marks in the trace"
streams = {(e["pid"], e["tid"]) for e in tr["traceEvents"] if e.get("ph") == "X"}
for m in marks:
    assert m["ph"] == "i" and m["name"] == "check: data race", m
    assert (m["pid"], m["tid"]) in streams, m
print("ok   %d findings in the JSON report, %d marks in the trace" % (len(f), len(marks)))
PY
