#!/bin/sh
# sched_table.sh CPU_H DESIGN_MD - the stream state word's transition table
# matches the code: every transition function of src/cpu/cpu.h
# (static inline evrt__st_*, but the two helpers that are no transition of
# their own: evrt__st_load reads, evrt__st_cas_mine is the CAS of
# st_try_retake and st_try_kill_mine) has a row in the table at the top of
# cpu.h and in docs/design.md section 4, and no row names a function that
# does not exist.  Exit 1 naming what is missing.
cpu_h=$1
design=$2
bad=0
fns=$(sed -n 's/^static inline [a-z ]*evrt__\(st_[a-z_]*\)(.*/\1/p' "$cpu_h" |
  grep -v -x -e st_load -e st_cas_mine | sort -u)
[ -n "$fns" ] || { echo "no evrt__st_* functions found in $cpu_h"; exit 1; }
# the table: the comment block from "from   to" to the first blank line
table=$(sed -n '/^ \*   from  *to  *by (how)  *function/,/^ \*$/p' "$cpu_h")
dtable=$(sed -n '/^  | from | to | by (how) | function |/,/^$/p' "$design")
for f in $fns; do
  echo "$table" | grep -q "[ (]$f\b" ||
    { echo "cpu.h table lacks $f"; bad=1; }
  echo "$dtable" | grep -q "evrt__$f\`" ||
    { echo "design.md table lacks evrt__$f"; bad=1; }
done
for f in $(echo "$table" | grep -o '\bst_[a-z_]*' | sort -u); do
  echo "$fns" | grep -q -x "$f" ||
    { echo "cpu.h table names $f, which is no transition function"; bad=1; }
done
n=$(echo "$fns" | wc -l)
[ $bad -eq 0 ] && echo "ok: $n transition functions, each in both tables"
exit $bad
