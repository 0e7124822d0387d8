#!/bin/sh
# native_all_coverage.sh HEADER FUZZER - every function that HEADER
# (include/evrt.h) declares with EVRT_EXPORT is called by FUZZER
# (tests/fuzz/fuzz_native_all.c) between its "ops begin" and "ops end"
# markers, the code that the opcodes run.  A function added to evrt.h
# without an opcode fails this test (CTest fuzz_native_all_covers_evrt_h).
set -eu
h=$1
f=$2
declared=$(grep -A1 'EVRT_EXPORT' "$h" | grep -o 'evrt_[a-z0-9_]* *(' |
           tr -d ' (' | sort -u)
ops=$(sed -n '/\/\* ops begin \*\//,/\/\* ops end \*\//p' "$f")
if [ -z "$ops" ]; then
  echo "native_all_coverage: no ops begin/end markers in $f" >&2
  exit 1
fi
called=$(printf '%s\n' "$ops" | grep -o 'evrt_[a-z0-9_]* *(' | tr -d ' (' |
         sort -u)
bad=0
n=0
for name in $declared; do
  n=$((n + 1))
  if ! printf '%s\n' "$called" | grep -qx "$name"; then
    echo "native_all_coverage: $name (evrt.h) is called by no opcode of $f" >&2
    bad=1
  fi
done
[ "$n" -gt 0 ] || { echo "native_all_coverage: no EVRT_EXPORT in $h" >&2; exit 1; }
[ $bad -eq 0 ] && echo "native_all_coverage: all $n EVRT_EXPORT functions reached"
exit $bad
