#!/bin/sh
# header_names.sh HEADER - every evrt_* name that include/evrt.h mentions
# (in its comments too) is something the header declares: a function, a
# type or a struct/enum tag.  Catches comments that name a function that
# does not exist (or no longer does).
set -eu
h=$1
names=$(grep -o 'evrt_[a-z0-9_]*' "$h" | sort -u)
# Declared: "name(" after EVRT_EXPORT, typedef names, struct/enum tags.
declared=$( (grep -o 'EVRT_EXPORT[^(]*(' "$h" | grep -o 'evrt_[a-z0-9_]*(' | tr -d '(';
             grep -o '} *evrt_[a-z0-9_]*;' "$h" | grep -o 'evrt_[a-z0-9_]*';
             grep -o 'typedef [a-z]* [a-z_ ]*\*\?evrt_[a-z0-9_]*;' "$h" | grep -o 'evrt_[a-z0-9_]*;' | tr -d ';';
             grep -o '\(struct\|enum\) evrt_[a-z0-9_]*' "$h" | grep -o 'evrt_[a-z0-9_]*';
             grep -o '(\*evrt_[a-z0-9_]*)' "$h" | grep -o 'evrt_[a-z0-9_]*') | sort -u)
bad=0
for n in $names; do
  if ! printf '%s\n' "$declared" | grep -qx "$n"; then
    echo "header_names: $h mentions $n, which it does not declare" >&2
    bad=1
  fi
done
[ $bad -eq 0 ] && echo "header_names: $(printf '%s\n' $names | wc -l) names, all declared"
exit $bad
