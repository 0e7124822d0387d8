#!/bin/sh
# report_not_utf8.sh CHECK_NATIVE: the EVRT_CHECK_REPORT file is valid JSON
# (strict UTF-8, no raw control byte) when stream names and call sites hold
# bytes that are not UTF-8 (scenario names_not_utf8; issue 23, item 9).
prog=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
EVRT_CHECK=1 EVRT_CHECK_REPORT="$dir/report.json" "$prog" run names_not_utf8 \
  >/dev/null 2>"$dir/stderr"
code=$?
[ $code -eq 66 ] || { echo "FAIL: exit status $code"; cat "$dir/stderr"; exit 1; }
python3 - "$dir/report.json" <<'PY'
import json, sys
raw = open(sys.argv[1], "rb").read()
text = raw.decode("utf-8")          # strict: a stray byte fails here
rep = json.loads(text)              # strict: a raw control byte fails here
f = rep["findings"]
assert f and all(x["kind"] == "data race" for x in f), f
names = {op.get("stream_name") for x in f for op in x["operations"]}
assert 'writer ?? "q" \x01' in names, names
assert "reader ?" in names, names
sites = {op["enqueued_at"]["file"] + "|" + op["enqueued_at"]["function"]
         for x in f for op in x["operations"]}
assert any("caf?" in s for s in sites), sites
print("ok   %d findings, names %s" % (len(f), sorted(names)))
PY
