#!/bin/sh
# order.sh CHECK_ORDER: the checker's findings do not depend on the order in
# which racing accesses reach it, nor on EVRT_CHAOS.  check_order runs with
# its kernel forced first, forced last, then 20 times as timing decides and
# under 4 EVRT_CHAOS seeds; each run's findings, as a set of (kind, the
# unordered pair of its operations' call sites), must equal the first's.
prog=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
n=0
one() { # label, args...
  label=$1
  shift
  n=$((n + 1))
  EVRT_CHECK=1 EVRT_CHECK_REPORT="$dir/r$n.json" "$prog" "$@" \
    >/dev/null 2>"$dir/e$n"
  code=$?
  [ $code -eq 66 ] || { echo "FAIL: $label: exit status $code"; cat "$dir/e$n"; exit 1; }
  echo "$label" >"$dir/l$n"
}
one "kernel first" kernel
one "host first" host
i=0
while [ $i -lt 20 ]; do
  one "timing, run $i"
  i=$((i + 1))
done
for seed in 1 2 3 4; do
  EVRT_CHAOS=$seed one "EVRT_CHAOS=$seed"
done
python3 - "$dir" "$n" <<'PY'
import json, sys
d, n = sys.argv[1], int(sys.argv[2])
def site(op):
    s = op.get("enqueued_at") or op.get("site") or {}
    a = op.get("annotated_at") or {}
    return (op["access"], op["operation"], s.get("function"), s.get("line"),
            a.get("function"), a.get("line"))
def findings(i):
    rep = json.load(open("%s/r%d.json" % (d, i)))
    return sorted({(x["kind"],) + tuple(sorted(site(o) for o in x["operations"]))
                   for x in rep["findings"]})
first = findings(1)
bad = 0
for i in range(1, n + 1):
    got = findings(i)
    label = open("%s/l%d" % (d, i)).read().strip()
    if got != first:
        bad += 1
        print("FAIL: %s: %s\n  first run: %s" % (label, got, first))
if not first:
    print("FAIL: no finding")
    bad += 1
if bad:
    sys.exit(1)
print("ok   %d runs, the same %d findings each: %s" %
      (n, len(first), ", ".join(f[0] for f in first)))
PY
