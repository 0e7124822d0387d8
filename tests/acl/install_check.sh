#!/bin/sh
# Install the build tree into a temporary prefix, compile a sample against
# the installed acl/acl.h through `pkg-config ascendcl`, run it and check
# its output.  --define-prefix relocates the .pc to the temporary prefix.
# Usage: install_check.sh <build-dir> <sample.c> [extra compiler flags]
set -eu
build=$1
sample=$2
extra=${3:-}
command -v pkg-config >/dev/null 2>&1 || { echo "skip: pkg-config not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log"; exit 1; }
pc=$(dirname "$(find "$tmp/prefix" -name ascendcl.pc | head -n1)")
[ -n "$pc" ] || { echo "ascendcl.pc was not installed"; exit 1; }
export PKG_CONFIG_PATH="$pc"
cflags=$(pkg-config --define-prefix --cflags ascendcl)
libs=$(pkg-config --define-prefix --libs ascendcl)
libdir=$(pkg-config --define-prefix --variable=libdir ascendcl)
${CC:-cc} -std=c11 -Wall -Wextra -Werror $extra $cflags "$sample" -o "$tmp/sample" $libs \
  -lpthread -Wl,-rpath,"$libdir"
"$tmp/sample" >"$tmp/out.txt"
cat "$tmp/out.txt"
grep -q "After create event, current event status is 0." "$tmp/out.txt"
grep -q "After record but before synchronize, current event status is 0." "$tmp/out.txt"
grep -q "After synchronize, current event status is 1." "$tmp/out.txt"
grep -q "The answer is 1." "$tmp/out.txt"
echo "install + pkg-config ascendcl: ok"
