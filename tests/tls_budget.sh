#!/bin/sh
# tls_budget.sh LIB [MAX_BYTES] - the library's static TLS stays small.
#
# libevrt's thread-locals use the initial-exec model (one instruction to
# reach them on hot paths).  A library loaded with dlopen (Python's ctypes,
# the bench's traced and compiled-out copies side by side) takes that
# storage from glibc's small static TLS surplus: past it, dlopen fails
# with "cannot allocate memory in static TLS block".  That happened once
# (a 384-byte per-worker array in TLS): large per-thread state goes on the
# heap, and this test keeps the segment under budget.
lib=$1
max=${2:-1024}
if ! command -v readelf >/dev/null 2>&1; then
  echo "SKIP: readelf not found"
  exit 77
fi
size=$(readelf -lW "$lib" | awk '$1 == "TLS" { print $6 }')
if [ -z "$size" ]; then
  echo "$lib has no TLS segment"
  exit 0
fi
n=$(printf '%d' "$size")
echo "static TLS of $lib: $n bytes (budget $max)"
[ "$n" -le "$max" ]
