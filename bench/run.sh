#!/bin/sh
# bench/run.sh BUILD_DIR [--json] [scenario...]
#
# Runs every scenario of evrt's benchmark suite, each in its own process (one
# scenario's streams, workers and memory never colour another's figures), and
# the tracing-off comparison.  Tables go to stdout; with --json only the JSON
# lines do (skip reasons go to stderr).  EVRT_BENCH_REPS (default 7, >= 5)
# and EVRT_BENCH_SAMPLE_MS (default 20) tune the repetitions.
set -u
BUILD=${1:-build-bench}
[ $# -gt 0 ] && shift
JSON=""
SEL=""
for a in "$@"; do
  case "$a" in
    --json) JSON="--json" ;;
    *) SEL="$SEL $a" ;;
  esac
done
BIN="$BUILD/bench/evrt-bench"
TRACE_BIN="$BUILD/bench/evrt-bench-tracing"
CHECK_BIN="$BUILD/bench/evrt-bench-check"
CHECK_ON_BIN="$BUILD/bench/evrt-bench-check-on"
if [ ! -x "$BIN" ]; then
  echo "run.sh: $BIN not built (cmake --build $BUILD)" >&2
  exit 2
fi
if [ -z "$SEL" ]; then
  SEL="$("$BIN" --list) tracing_off check_off check_on"
fi
if [ -z "$JSON" ]; then
  echo "evrt benchmark suite: $(uname -srm), $(nproc) cpus, $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "median / min / max over ${EVRT_BENCH_REPS:-7} interleaved repetitions; ratios are evrt / baseline"
fi
rc=0
LOG=$(mktemp "${TMPDIR:-/tmp}/evrt-bench.XXXXXX")
trap 'rm -f "$LOG" "$LOG.fail"' EXIT INT TERM
for s in $SEL; do
  if [ "$s" = tracing_off ]; then
    "$TRACE_BIN" $JSON || echo "$s" >> "$LOG.fail"
  elif [ "$s" = check_off ]; then
    "$CHECK_BIN" $JSON || echo "$s" >> "$LOG.fail"
  elif [ "$s" = check_on ]; then
    "$CHECK_ON_BIN" $JSON || echo "$s" >> "$LOG.fail"
  else
    "$BIN" $JSON "$s" || echo "$s" >> "$LOG.fail"
  fi
done | tee "$LOG"
if [ -s "$LOG.fail" ]; then
  echo "run.sh: failed: $(tr '\n' ' ' < "$LOG.fail")" >&2
  rc=1
fi
if [ -z "$JSON" ]; then
  met=$(grep -c ': met$' "$LOG")
  missed=$(grep -c ': MISSED$' "$LOG")
  echo
  echo "targets: $met met, $missed missed"
fi
exit $rc
