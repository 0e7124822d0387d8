#!/bin/sh
# Every function that include/acl/*.h declares is exported by libascendcl.so
# and has a row in docs/acl.md's table of calls ("| name |" or "| name /").
# Usage: exports_check.sh <include-dir> <libascendcl.so> [docs/acl.md]
set -eu
inc=$1
lib=$2
doc=${3:-}
names=$(cat "$inc"/acl/*.h "$inc"/acl/error_codes/*.h | grep -v '^#' | tr '\n' ' ' | sed 's/ACL_FUNC_VISIBILITY/\n/g' |
  sed -n 's/^[^(;{}]*[ *]\([A-Za-z_][A-Za-z0-9_]*\) *(.*/\1/p' | sort -u)
[ -n "$names" ] || { echo "no declarations found under $inc/acl"; exit 1; }
exported=$(nm -D --defined-only "$lib" | awk '{print $3}')
bad=0
for n in $names; do
  if ! printf '%s\n' "$exported" | grep -qx "$n"; then
    echo "declared but not exported: $n"
    bad=1
  fi
  if [ -n "$doc" ] && ! grep -Eq "^\| ([A-Za-z0-9_]+ / )*$n( / [A-Za-z0-9_]+)* \|" "$doc"; then
    echo "declared but missing from the table of $doc: $n"
    bad=1
  fi
done
echo "$(printf '%s\n' "$names" | wc -l) declared calls checked"
exit $bad
