#!/bin/sh
# make deb-check (and .ci/run): install the packages of `make deb` with
# dpkg -i, use them as a user of the installed system would (nothing from
# the source tree on any search path), then purge them and check that
# nothing they installed is left.  Needs root (or sudo) for dpkg.
# Usage: packaging/deb-check.sh [PACKAGE_DIR]   (default build-deb/packages)
set -eu
cd "$(dirname "$0")/.."
src=$(pwd)
dir=$(realpath "${1:-build-deb/packages}")
pkgs="libevrt0 libevrt-dev evrt-tools python3-evrt"
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
die() { echo "deb-check: FAILED: $*" >&2; exit 1; }
installed() { dpkg-query -W -f='${Status}\n' "$1" 2>/dev/null | grep -q ' installed$'; }
purge() {
  present=""
  for p in $pkgs; do dpkg-query -W "$p" >/dev/null 2>&1 && present="$present $p"; done
  # shellcheck disable=SC2086
  [ -z "$present" ] || $SUDO dpkg --purge $present >/dev/null
}

debs=""
for p in $pkgs; do
  f=$(find "$dir" -maxdepth 1 -name "${p}_*.deb" | head -n1)
  [ -n "$f" ] || die "no ${p}_*.deb in $dir (run make deb)"
  debs="$debs $f"
done
version=$(dpkg-deb -f "$(find "$dir" -maxdepth 1 -name 'libevrt0_*.deb' | head -n1)" Version)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)

# One check at a time on this machine (sessions share it), and never with
# the packages of an earlier, interrupted run still installed.
exec 9>/tmp/evrt-deb-check.lock
flock 9
tmp=$(mktemp -d)
trap 'purge; rm -rf "$tmp"' EXIT
for p in $pkgs; do
  if dpkg-query -W "$p" >/dev/null 2>&1; then
    echo "deb-check: $p is installed from an earlier run: purging it first"
  fi
done
purge

# shellcheck disable=SC2086
$SUDO dpkg -i $debs >"$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log"; die "dpkg -i"; }
for p in $pkgs; do installed "$p" || die "$p is not installed after dpkg -i"; done
# What they installed (files and links; directories may be shared).
for p in $pkgs; do dpkg -L "$p"; done | sort -u | while read -r f; do
  [ -d "$f" ] && [ ! -L "$f" ] || echo "$f"
done >"$tmp/files"
echo "deb-check: installed $(echo $pkgs) $version ($(wc -l <"$tmp/files") files)"

# Use them as a user would: no variable pointing into the source tree.
cd "$tmp"
unset PKG_CONFIG_PATH PYTHONPATH LD_LIBRARY_PATH CMAKE_PREFIX_PATH 2>/dev/null || true
echo "deb-check: pkg-config --cflags --libs evrt ascendcl: $(pkg-config --cflags --libs evrt ascendcl)"
[ "$(pkg-config --modversion evrt)" = "$version" ] || die "evrt.pc says $(pkg-config --modversion evrt)"
[ "$(pkg-config --modversion ascendcl)" = "$version" ] || die "ascendcl.pc says $(pkg-config --modversion ascendcl)"
cc -std=c11 -Wall -Wextra -Werror "$src/tests/install/consumer.c" -o c $(pkg-config --cflags --libs evrt)
./c | grep -qx "installed evrt $version works" || die "the evrt consumer"
c++ -std=c++17 -Wall -Wextra -Werror -x c++ "$src/tests/install/consumer.c" -o cxx \
  $(pkg-config --cflags --libs evrt)
./cxx | grep -qx "installed evrt $version works" || die "the evrt consumer as C++"
ldd ./c | grep -q "/lib/$multiarch/libevrt.so.0 " || { ldd ./c; die "libevrt.so.0 not the packaged one"; }
cc -std=c11 -Wall -Wextra -Werror "$src/tests/install/acl_consumer.c" -o acl \
  $(pkg-config --cflags --libs ascendcl)
./acl | grep -qx "installed ascendcl works" || die "the ACL consumer"
mkdir cm
cp "$src/tests/install/consumer.c" cm/
cp "$src/tests/install/CMakeLists.txt.in" cm/CMakeLists.txt
cmake -S cm -B cm/b -DEVRT_EXPECTED_VERSION="$version" >cm.log 2>&1 || { cat cm.log; die "find_package(evrt)"; }
cmake --build cm/b >>cm.log 2>&1 || { cat cm.log; die "building with the CMake package"; }
cm/b/consumer_c | grep -qx "installed evrt $version works" || die "the CMake consumer"
[ "$(command -v evrt-trace)" = /usr/bin/evrt-trace ] || die "evrt-trace is not /usr/bin/evrt-trace"
EVRT_TRACE="$tmp/trace.json" ./c >/dev/null
evrt-trace "$tmp/trace.json" -o "$tmp/trace.svg"
grep -q '<svg' "$tmp/trace.svg" || die "evrt-trace wrote no SVG"
evrt-check --runs 2 -- ./c >check.log 2>&1 || { cat check.log; die "evrt-check on the consumer"; }
# Debian's python3 (not a pyenv one earlier on PATH).  Byte code written by
# this import (as root) must go with the package too.
/usr/bin/python3 - "$version" "$multiarch" <<'EOF' || die "python3 -c 'import evrt'"
import sys, evrt, evrt.acl
version, multiarch = sys.argv[1], sys.argv[2]
assert evrt.__file__.startswith("/usr/lib/python3/dist-packages/evrt/"), evrt.__file__
assert evrt.__version__ == version, evrt.__version__
libs = {l.split()[-1] for l in open("/proc/self/maps") if "libevrt.so" in l}
assert libs and all(("/lib/%s/libevrt.so.0" % multiarch) in p for p in libs), libs
s = evrt.Stream(); e = evrt.Event(); s.launch(print, "python3-evrt works"); e.record(s)
e.synchronize()
EOF
echo "deb-check: used: C and C++ via pkg-config, ACL via pkg-config, CMake package, evrt-trace, evrt-check, python3 import evrt"

# Remove them: nothing they installed may be left.
cd "$src"
# shellcheck disable=SC2086
$SUDO dpkg --purge $pkgs >"$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log"; die "dpkg --purge"; }
left=""
while read -r f; do
  if [ -e "$f" ] || [ -L "$f" ]; then left="$left $f"; fi
done <"$tmp/files"
for d in /usr/lib/python3/dist-packages/evrt /usr/include/acl "/usr/lib/$multiarch/cmake/evrt" \
         /usr/share/doc/libevrt0 /usr/share/doc/libevrt-dev /usr/share/doc/evrt-tools \
         /usr/share/doc/python3-evrt; do
  [ ! -e "$d" ] || left="$left $d"
done
[ -z "$left" ] || die "left behind after dpkg --purge:$left"
for p in $pkgs; do ! installed "$p" || die "$p still installed"; done
! ldconfig -p | grep -q 'libevrt\|libascendcl' || die "the loader cache still lists libevrt"
! /usr/bin/python3 -c "import evrt" 2>/dev/null || die "import evrt still works after the purge"
echo "deb-check: purged, nothing left behind"
echo "deb check OK"
