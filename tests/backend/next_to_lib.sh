#!/bin/sh
# next_to_lib.sh CMAKE BUILD_DIR COUNTING_BACKEND PROBE - EVRT_BACKEND=name
# finds libevrt-backend-<name>.so.0 next to libevrt.so.0 in a prefix that is
# not on the library path (docs/backends.md; issue 23, item 9): the runtime
# is installed into a fresh prefix, the test backend copied next to it, and
# a program loads that libevrt.so.0 by its path with LD_LIBRARY_PATH unset.
set -u
cmake=$1 build=$2 backend=$3 probe=$4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
"$cmake" --install "$build" --prefix "$dir/prefix" --component runtime >/dev/null ||
  fail "cmake --install of the runtime failed"
lib=$(find "$dir/prefix" -name libevrt.so.0 | head -n 1)
[ -n "$lib" ] || fail "no libevrt.so.0 in the installed prefix"
libdir=$(dirname "$lib")
cp "$backend" "$libdir/libevrt-backend-counting.so.0"
out=$(env -u LD_LIBRARY_PATH EVRT_BACKEND=counting "$probe" "$lib" 2>&1)
rc=$?
echo "$out"
[ $rc = 0 ] || fail "EVRT_BACKEND=counting was not found next to $lib"
echo "$out" | grep -qF "backend $libdir/libevrt-backend-counting.so.0" ||
  fail "the backend was loaded from elsewhere"
# a name with no library there still fails init, naming the library
out=$(env -u LD_LIBRARY_PATH EVRT_BACKEND=absent "$probe" "$lib" 2>&1) &&
  fail "EVRT_BACKEND=absent was taken"
echo "$out" | grep -q "libevrt-backend-absent.so.0" ||
  fail "the failure does not name the library: $out"
echo "ok: the backend next to the installed libevrt.so.0 was loaded"
