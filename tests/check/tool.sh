#!/bin/sh
# tool.sh EVRT_CHECK_TOOL DEMO: evrt-check's runs, report and exit statuses.
tool=$1
demo=$2
fail() {
  echo "FAIL: $*"
  exit 1
}
out=$("$tool" --runs 2 -- "$demo")
[ $? -eq 0 ] || fail "the demo is clean, yet: $out"
echo "$out" | grep -q "2 runs clean (seeds 1..2)" || fail "no summary: $out"

out=$("$tool" --runs 3 --seed 7 -- "$demo" --forget-wait)
[ $? -eq 1 ] || fail "a racy demo must fail: $out"
echo "$out" | grep -q "first failing seed 7" || fail "no first seed: $out"
echo "$out" | grep -q "^evrt-check: data race" || fail "no report: $out"
echo "$out" | grep -q "replay with: EVRT_CHECK=1 EVRT_CHAOS=7 $demo --forget-wait" ||
  fail "no replay line: $out"

# The replay line reproduces the finding: the same kinds, sizes and call
# sites (addresses and the order of the blocks vary between runs), twice.
norm() {
  grep -E '^evrt-check: [a-z]|enqueued at|annotated at' | grep -v summary |
    sed 's/0x[0-9a-f]*/ADDR/g; s/^ *//' | sort -u
}
first=$(echo "$out" | sed -n '/^---- report of seed 7/,/^---- end/p' | norm)
[ -n "$first" ] || fail "no report of seed 7: $out"
for i in 1 2; do
  again=$(EVRT_CHECK=1 EVRT_CHAOS=7 "$demo" --forget-wait 2>&1 >/dev/null | norm)
  [ "$again" = "$first" ] || fail "replay $i differs:
$again
---- first:
$first"
done

out=$("$tool" --runs 1 -- sh -c 'kill -SEGV $$')
[ $? -eq 1 ] || fail "a crash must fail"
echo "$out" | grep -q "crashed (signal 11" || fail "crash not named: $out"

out=$("$tool" --runs 1 -- sh -c 'exit 3')
[ $? -eq 1 ] || fail "a non-zero exit must fail"
echo "$out" | grep -q "exit status 3" || fail "status not named: $out"

out=$("$tool" --runs 1 --timeout 1 -- sleep 30)
[ $? -eq 1 ] || fail "a hang must fail"
echo "$out" | grep -q "timeout" || fail "timeout not named: $out"

"$tool" --runs x -- true >/dev/null 2>&1
[ $? -eq 2 ] || fail "a bad --runs is a usage error"
"$tool" >/dev/null 2>&1
[ $? -eq 2 ] || fail "no program is a usage error"
"$tool" --bogus -- true >/dev/null 2>&1
[ $? -eq 2 ] || fail "an unknown option is a usage error"
echo "ok   evrt-check"
