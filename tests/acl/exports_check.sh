#!/bin/sh
# Every function that include/acl/*.h declares is exported by libascendcl.so
# and has a row in docs/acl.md's table of calls ("| name |" or "| name /");
# an Impl entry point of acl/acl_rt_impl.h counts as documented by its call.
# Usage: exports_check.sh <include-dir> <libascendcl.so> [docs/acl.md]
set -eu
inc=$1
lib=$2
doc=${3:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat "$inc"/acl/*.h "$inc"/acl/error_codes/*.h | grep -v '^#' | tr '\n' ' ' | sed 's/ACL_FUNC_VISIBILITY/\n/g' |
  sed -n 's/^[^(;{}]*[ *]\([A-Za-z_][A-Za-z0-9_]*\) *(.*/\1/p' | sort -u > "$tmp/declared"
[ -s "$tmp/declared" ] || { echo "no declarations found under $inc/acl"; exit 1; }
nm -D --defined-only "$lib" | awk '{print $3}' | sort -u > "$tmp/exported"
bad=0
for n in $(comm -23 "$tmp/declared" "$tmp/exported"); do
  echo "declared but not exported: $n"
  bad=1
done
if [ -n "$doc" ]; then
  # the names of the tables' first cells ("| a / b / c |")
  grep -E '^\| [A-Za-z0-9_]+( / [A-Za-z0-9_]+)* \|' "$doc" |
    sed 's/^| \([^|]*\) |.*/\1/' | tr '/' '\n' | tr -d ' ' | sort -u > "$tmp/documented"
  # an Impl entry point whose call is declared is documented with it
  sed -n 's/^\(.*\)Impl$/\1/p' "$tmp/declared" | sort -u > "$tmp/impl_bases"
  comm -12 "$tmp/impl_bases" "$tmp/declared" | sed 's/$/Impl/' | sort -u > "$tmp/impl"
  for n in $(comm -23 "$tmp/declared" "$tmp/documented" | comm -23 - "$tmp/impl"); do
    echo "declared but missing from the table of $doc: $n"
    bad=1
  done
fi
echo "$(wc -l < "$tmp/declared") declared calls checked"
exit $bad
