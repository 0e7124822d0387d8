#!/bin/sh
# above_core.sh ROOT - no core-internal name above the core: the layers built
# on evrt (the ACL layer src/acl/, the Python extension python/src/, the
# public headers, examples, benchmarks, tools) reach it through include/evrt.h
# only, so none names an evrt__ / EVRT__ identifier (the core's internals;
# the ACL layer's own are acl__ / ACL__).  Comments are left out (the C
# preprocessor strips them), so a comment may still name a core internal.
set -eu
root=$1

bad=$(for f in $(find "$root/src/acl" "$root/python/src" "$root/include" "$root/examples" \
                      "$root/bench" "$root/tools" -name '*.[ch]' | sort); do
        ${CPP:-cpp} -fpreprocessed -P -w "$f" 2>/dev/null |
        grep -oE '\b(evrt|EVRT)__[A-Za-z0-9_]*' | sed "s|^|$f: |"; done | sort -u)
[ -z "$bad" ] || { echo "above_core: core internals named above the core:" >&2; echo "$bad" >&2; exit 1; }
echo "above_core: $(find "$root/src/acl" "$root/python/src" "$root/include" "$root/examples" \
  "$root/bench" "$root/tools" -name '*.[ch]' | wc -l) files above the core, none names evrt__/EVRT__"
