#!/bin/sh
# expect.sh KIND|clean COMMAND [ARGS...]: run COMMAND with EVRT_CHECK=1 and
# judge it as scenario.h does: with a KIND ("data race", "use after free",
# "unsynchronized host access", "deadlock") it must exit with status 66 and
# every "evrt-check: " finding must be of that kind; "clean" must exit 0
# with no "evrt-check:" line at all.
kind=$1
shift
err=$(mktemp)
trap 'rm -f "$err"' EXIT
EVRT_CHECK=1 "$@" 2>"$err" >/dev/null
code=$?
findings=$(grep '^evrt-check: ' "$err" | grep -v '^evrt-check: \(summary\|note\):' | wc -l)
wrong=0
if [ "$kind" != clean ]; then
  wrong=$(grep '^evrt-check: ' "$err" | grep -v '^evrt-check: \(summary\|note\):' |
          grep -v "^evrt-check: $kind" | wc -l)
fi
ok=0
if [ "$kind" = clean ]; then
  [ "$code" -eq 0 ] && ! grep -q 'evrt-check:' "$err" && ok=1
else
  [ "$code" -eq 66 ] && [ "$findings" -gt 0 ] && [ "$wrong" -eq 0 ] && ok=1
fi
if [ $ok = 1 ]; then
  echo "ok   $kind: exit status $code, $findings findings: $*"
  exit 0
fi
echo "FAIL $kind: exit status $code, $findings findings ($wrong of another kind): $*"
cat "$err"
exit 1
