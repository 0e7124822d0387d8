#!/bin/sh
# layering.sh SRC - the core reaches the cpu scheduler only through the
# backend ops (src/backend.h): no core file (src/*.c, src/check/*.c)
# includes src/cpu/cpu.h, names a symbol that only cpu.h declares (the
# scheduler's functions, its state word's states and transitions), calls a
# cpu hook directly (evrt__cpu_*, reserved to backend.h's dispatch) or
# touches a stream's state word.  Comments are left out (the C
# preprocessor strips them), so a comment may still name the scheduler.
set -eu
src=$1
cpp=${CPP:-cpp}
strip() { "$cpp" -fpreprocessed -P -w "$1" 2>/dev/null; }
# Identifiers cpu.h mentions and no core header does: the scheduler's own.
core_names=$(for h in "$src"/*.h; do strip "$h"; done |
             grep -o '\b\(evrt__\|EVRT__\)[A-Za-z0-9_]*' | sort -u)
cpu_only=$(strip "$src/cpu/cpu.h" | grep -o '\b\(evrt__\|EVRT__\)[A-Za-z0-9_]*' |
           sort -u | grep -vxF "$core_names" || true)
[ -n "$cpu_only" ] || { echo "layering: no scheduler names found in $src/cpu/cpu.h" >&2; exit 2; }
pat=$(printf '%s\n' $cpu_only | paste -sd'|' -)
# evrt__cpu_* names a core file may use: those of internal.h and the
# per-subsystem headers it includes (core_*.h: evrt__cpu_relax, ...) and the
# built-in table, which init.c selects.
cpu_ok=$( (for h in "$src/internal.h" "$src"/core_*.h; do strip "$h"; done | grep -o '\bevrt__cpu_[a-z0-9_]*'; echo evrt__cpu_backend) | sort -u)
bad=0
n=0
for f in "$src"/*.c "$src"/check/*.c; do
  n=$((n + 1))
  if grep -n '#include *"\(cpu/\)\?cpu\.h"' "$f" >/dev/null; then
    echo "layering: $f includes the cpu scheduler's header" >&2
    bad=1
  fi
  hits=$(strip "$f" | grep -oE "\\b($pat|evrt__cpu_[a-z0-9_]*)\\b|\\b(s|stream)->state\\b" |
         sort -u | grep -vxF "$cpu_ok" || true)
  if [ -n "$hits" ]; then
    echo "layering: $f uses the scheduler directly: $(echo $hits)" >&2
    bad=1
  fi
done
[ $bad -eq 0 ] && echo "layering: $n core files, none names any of $(printf '%s\n' $cpu_only | wc -l) scheduler symbols"
exit $bad
