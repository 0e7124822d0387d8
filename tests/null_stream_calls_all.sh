#!/bin/sh
# null_stream_calls_all.sh HEADER TEST - every evrt.h function that takes an
# evrt_stream_t by value is called with a NULL stream somewhere in TEST
# (test_null_stream.c): the NULL-is-the-default-stream contract is tested
# for each, so a new stream-taking call cannot skip it unnoticed.
h=$1
t=$2
names=$(awk '/^EVRT_EXPORT/{d=$0; while (d !~ /;/) {getline l; d=d l};
             if (d ~ /evrt_stream_t[ \t]+[a-z_]*[,)]/) print d}' "$h" |
        sed -n 's/.*[ *]\(evrt_[a-z0-9_]*\)(.*/\1/p')
bad=0
n=0
for f in $names; do
  n=$((n + 1))
  if ! grep -q "$f(" "$t"; then
    echo "null_stream_calls_all: $f takes a stream and is not called in $t" >&2
    bad=1
  fi
done
[ "$n" -gt 20 ] || { echo "null_stream_calls_all: found only $n calls" >&2; exit 1; }
[ $bad -eq 0 ] && echo "null_stream_calls_all: $n stream-taking calls, each called"
exit $bad
