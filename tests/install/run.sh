#!/bin/sh
# Install the build into a temporary prefix, then build a program against it
# through pkg-config (as C and as C++) and through the CMake package, and
# check the installed libraries' ABI against the version scripts.
# Usage: run.sh <build-dir> <source-dir>
set -eu
build=$1
srcdir=$2
src=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
pcdir=$(dirname "$(find "$tmp/prefix" -name evrt.pc | head -n1)")
export PKG_CONFIG_PATH="$pcdir"
libdir=$(pkg-config --variable=libdir evrt)

# Both .pc files are relocatable: with no --define-prefix, every -I and -L
# that pkg-config gives for evrt and ascendcl lies inside the prefix the
# tree was installed into (ascendcl.pc pointed at /usr/local).
pc_paths_inside() {
  root=$(cd "$1" && pwd -P)
  for flag in $(pkg-config --cflags --libs evrt ascendcl); do
    case $flag in
      -I*|-L*)
        d=${flag#-?}
        real=$(cd "$d" 2>/dev/null && pwd -P) ||
          { echo "pkg-config --cflags --libs evrt ascendcl gives $flag: no such directory"; exit 1; }
        case "$real/" in
          "$root"/*) ;;
          *) echo "pkg-config --cflags --libs evrt ascendcl gives $flag, outside $1"; exit 1 ;;
        esac ;;
    esac
  done
}
if [ -e "$libdir/libascendcl.so" ]; then
  pc_paths_inside "$tmp/prefix"
  cc -std=c11 -Wall -Wextra -Werror "$src/acl_consumer.c" -o "$tmp/acl" \
    $(pkg-config --cflags --libs ascendcl)
  LD_LIBRARY_PATH=$libdir "$tmp/acl"
  # and still inside it once the tree is moved
  cp -a "$tmp/prefix" "$tmp/moved"
  export PKG_CONFIG_PATH="$tmp/moved${pcdir#"$tmp/prefix"}"
  pc_paths_inside "$tmp/moved"
  export PKG_CONFIG_PATH="$pcdir"
  rm -rf "$tmp/moved"
fi
cc -std=c11 -Wall -Wextra -Werror $(pkg-config --cflags evrt) "$src/consumer.c" -o "$tmp/c" $(pkg-config --libs evrt)
c++ -std=c++17 -Wall -Wextra -Werror -x c++ $(pkg-config --cflags evrt) "$src/consumer.c" -o "$tmp/cxx" $(pkg-config --libs evrt)
# One version everywhere: the library, its header, both .pc files and the
# CMake package (below) say the same (include/evrt.h is where it is written).
version=$(pkg-config --modversion evrt)
LD_LIBRARY_PATH=$libdir "$tmp/c" | tee "$tmp/c.out"
grep -qx "installed evrt $version works" "$tmp/c.out" ||
  { echo "evrt.pc says $version, the library and header say otherwise"; exit 1; }
LD_LIBRARY_PATH=$libdir "$tmp/cxx"
[ "$(pkg-config --modversion ascendcl)" = "$version" ] ||
  { echo "ascendcl.pc says $(pkg-config --modversion ascendcl), evrt.pc $version"; exit 1; }
mkdir "$tmp/cm"
cp "$src/consumer.c" "$tmp/cm/"
cp "$src/CMakeLists.txt.in" "$tmp/cm/CMakeLists.txt"
cmake -S "$tmp/cm" -B "$tmp/cm/b" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
  -DEVRT_EXPECTED_VERSION="$version" >/dev/null
cmake --build "$tmp/cm/b" >/dev/null
LD_LIBRARY_PATH=$libdir "$tmp/cm/b/consumer_c"
# The installed libraries export exactly what their version scripts list,
# and the installed headers declare exactly that.
inc=$(pkg-config --variable=includedir evrt)
python3 "$src/abi_check.py" --lib "$libdir/libevrt.so" --map "$srcdir/src/evrt.map" \
  --macro EVRT_EXPORT --prefix evrt_ --header "$inc/evrt.h" --tags --no-symtab evrt__test_
if [ -e "$libdir/libascendcl.so" ]; then
  set --
  for h in $(find "$inc/acl" -name '*.h' | sort); do set -- "$@" --header "$h"; done
  python3 "$src/abi_check.py" --lib "$libdir/libascendcl.so" \
    --map "$srcdir/src/acl/ascendcl.map" --macro ACL_FUNC_VISIBILITY --prefix acl "$@"
fi
# The Python package installed with the tree imports from there, with the
# installed libevrt.so.0 (its RUNPATH is relative to the package).
pydir=$(find "$tmp/prefix" -name __init__.py -path '*/evrt/__init__.py' | head -n1)
if [ -n "$pydir" ]; then
  root=$(cd "$tmp/prefix" && pwd -P)
  py=python3
  [ ! -x /usr/bin/python3 ] || py=/usr/bin/python3 # the one CMake built for
  (cd "$tmp" && env -u PYTHONPATH PYTHONPATH="$(dirname "$(dirname "$pydir")")" \
    PYTHONDONTWRITEBYTECODE=1 $py -c '
import sys, evrt, evrt.acl
root, version = sys.argv[1], sys.argv[2]
libs = {l.split()[-1] for l in open("/proc/self/maps") if "libevrt.so" in l}
assert evrt.__file__.startswith(root + "/"), evrt.__file__
assert evrt.__version__ == version, (evrt.__version__, version)
assert libs and all(p.startswith(root + "/") for p in libs), libs
s = evrt.Stream(); e = evrt.Event(); e.record(s); e.synchronize()
print("installed python package works:", evrt.__file__)
' "$root" "$version")
fi
echo "install test OK"
