#!/bin/sh
# valgrind_load.sh BINARY SANITIZER - the reduced load under
# valgrind --leak-check=full: fails on any definite (or indirect) leak or
# memory error.  Exit 77 (CTest: skipped) with the reason when valgrind is
# missing or the build uses a sanitizer (valgrind cannot run those).
bin=$1
san=$2
if [ -n "$san" ]; then
  echo "skip: built with -DEVRT_SANITIZE=$san; valgrind cannot run sanitizer builds"
  exit 77
fi
if ! command -v valgrind >/dev/null 2>&1; then
  echo "skip: valgrind is not installed (tools/install-deps.sh installs it)"
  exit 77
fi
EVRT_LOAD=small exec valgrind --quiet --leak-check=full \
  --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect \
  --error-exitcode=3 "$bin"
