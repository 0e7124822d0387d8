#!/bin/sh
# report_files.sh DEMO LINES: EVRT_CHECK_REPORT writes the findings as JSON,
# and with EVRT_TRACE the timeline marks the operations involved.  LINES=1:
# the build has libdw and debug information, so every call site must have
# its file:line (demo.c); LINES=0 (a Release build, or one without libdw):
# a site has what the build can know, a function (a symbol, or
# object+offset) and its pc, and a file:line only where one is found.
demo=$1
lines=${2:-1}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
EVRT_CHECK=1 EVRT_CHECK_REPORT="$dir/report.json" EVRT_TRACE="$dir/trace.json" \
  "$demo" --forget-wait >/dev/null 2>"$dir/stderr"
code=$?
[ $code -eq 66 ] || { echo "FAIL: exit status $code"; cat "$dir/stderr"; exit 1; }
python3 - "$dir/report.json" "$dir/trace.json" "$lines" <<'PY'
import json, re, sys
rep = json.load(open(sys.argv[1]))
tr = json.load(open(sys.argv[2]))
lines = sys.argv[3] == "1"
def check_site(site):
    if lines or site["file"]:
        assert site["file"] == "demo.c" and site["line"] > 0, site
    else:
        # no file:line in this build: a function name or object+offset
        assert site["line"] == 0, site
        assert re.match(r"^([A-Za-z_]\w*|\S*evrt-demo\+0x[0-9a-f]+)$",
                        site["function"]), site
    assert int(site["pc"], 16) != 0, site
f = rep["findings"]
assert f and all(x["kind"] == "data race" for x in f), f
assert rep["total"] >= len(f)
for x in f:
    a, b = x["operations"]
    for op in (a, b):
        assert op["access"] in ("read", "write"), op
        assert op["stream"] > 0 and op["work_item"] > 0, op
        assert int(op["range"][1], 16) > int(op["range"][0], 16), op
        check_site(op["enqueued_at"])
    assert x["fix"].startswith("fix: ")
marks = [e for e in tr["traceEvents"] if e.get("cat") == "evrt-check"]
assert marks, "no marks in the trace"
streams = {(e["pid"], e["tid"]) for e in tr["traceEvents"] if e.get("ph") == "X"}
for m in marks:
    assert m["ph"] == "i" and m["name"] == "check: data race", m
    assert (m["pid"], m["tid"]) in streams, m
print("ok   %d findings in the JSON report, %d marks in the trace" % (len(f), len(marks)))
PY
