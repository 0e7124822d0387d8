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
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig:$tmp/prefix/lib/x86_64-linux-gnu/pkgconfig:$tmp/prefix/lib64/pkgconfig"
libdir=$(pkg-config --variable=libdir evrt)
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
  for h in "$inc"/acl/*.h; do set -- "$@" --header "$h"; done
  python3 "$src/abi_check.py" --lib "$libdir/libascendcl.so" \
    --map "$srcdir/src/acl/ascendcl.map" --macro ACL_FUNC_VISIBILITY --prefix acl "$@"
fi
echo "install test OK"
