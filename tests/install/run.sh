#!/bin/sh
# Install the build into a temporary prefix, then build a program against it
# through pkg-config (as C and as C++) and through the CMake package.
set -eu
build=$1
src=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig:$tmp/prefix/lib/x86_64-linux-gnu/pkgconfig:$tmp/prefix/lib64/pkgconfig"
libdir=$(pkg-config --variable=libdir evrt)
cc -std=c11 -Wall -Wextra -Werror $(pkg-config --cflags evrt) "$src/consumer.c" -o "$tmp/c" $(pkg-config --libs evrt)
c++ -std=c++17 -Wall -Wextra -Werror -x c++ $(pkg-config --cflags evrt) "$src/consumer.c" -o "$tmp/cxx" $(pkg-config --libs evrt)
LD_LIBRARY_PATH=$libdir "$tmp/c"
LD_LIBRARY_PATH=$libdir "$tmp/cxx"
mkdir "$tmp/cm"
cp "$src/consumer.c" "$tmp/cm/"
cp "$src/CMakeLists.txt.in" "$tmp/cm/CMakeLists.txt"
cmake -S "$tmp/cm" -B "$tmp/cm/b" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/cm/b" >/dev/null
LD_LIBRARY_PATH=$libdir "$tmp/cm/b/consumer_c"
# the library exports only evrt_* symbols
if nm -D --defined-only "$libdir/libevrt.so" | awk '$2 != "A" {print $3}' | grep -v '^evrt_' | grep -q .; then
  echo "non-evrt symbols exported:"; nm -D --defined-only "$libdir/libevrt.so" | grep -v ' evrt_'
  exit 1
fi
echo "install test OK"
