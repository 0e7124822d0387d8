#!/bin/sh
# Run an ACL sample and compare its output with the expected file.
# Usage: example_check.sh <binary> <expected-output-file>
set -u
out=$("$1" 2>&1)
rc=$?
if [ $rc -ne 0 ]; then
  echo "$out"
  echo "sample exited with $rc"
  exit 1
fi
if [ "$out" != "$(cat "$2")" ]; then
  echo "--- got"; echo "$out"; echo "--- want"; cat "$2"
  exit 1
fi
echo "$out"
echo "output matches $(basename "$2")"
