#!/bin/sh
# setuid_env.sh PROBE - a set-user-ID program linked with evrt ignores the
# environment variables that name a file or a library (issue 23, item 5):
# its caller must not make it truncate a file only root may write.
#
# The probe is copied into a fresh folder, owned by root and made
# set-user-ID, and run as nobody with EVRT_TRACE pointing at a root-only
# file, EVRT_CHECK_REPORT at a path in a folder only root may write and
# EVRT_BACKEND at a backend that does not exist: the file stays as it was,
# the report is not written, the program runs on the built-in backend.  A
# control run as root without the set-user-ID bit shows the variables are
# read.  Skips (77) only where it cannot run: not root, no setpriv, no
# filesystem that allows set-user-ID programs, or a set-user-ID bit that
# does not take effect (no_new_privs).
set -u
probe=$1
[ "$(id -u)" = 0 ] || { echo "skip: not root"; exit 77; }
command -v setpriv >/dev/null || { echo "skip: no setpriv (util-linux)"; exit 77; }
nosuid() { findmnt -n -o OPTIONS --target "$1" 2>/dev/null | tr , '\n' | grep -qx nosuid; }
dir=
for base in "${TMPDIR:-/tmp}" /tmp "$(dirname "$probe")"; do
  if [ -d "$base" ] && ! nosuid "$base"; then
    dir=$(mktemp -d "$base/evrt-setuid.XXXXXX") && break
  fi
done
[ -n "$dir" ] || { echo "skip: every candidate folder is mounted nosuid"; exit 77; }
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; ls -l "$dir"; cat "$dir/secret" | head -c 300; exit 1; }

chmod 755 "$dir"
cp "$probe" "$dir/probe"
chown root:root "$dir/probe"
chmod 4755 "$dir/probe"
echo "root's file" > "$dir/secret"
chmod 644 "$dir/secret"

# control: as root, not set-user-ID (a copy without the bit), the
# variables are obeyed
cp "$probe" "$dir/plain"
EVRT_TRACE="$dir/control.json" EVRT_CHECK=1 EVRT_CHECK_REPORT="$dir/control-report.json" \
  "$dir/plain" >/dev/null 2>&1 || fail "the control run failed"
[ -s "$dir/control.json" ] || fail "the control run wrote no trace: EVRT_TRACE unread?"
[ -s "$dir/control-report.json" ] || fail "the control run wrote no report"
EVRT_BACKEND=no-such-backend "$dir/plain" >/dev/null 2>&1 &&
  fail "the control run took EVRT_BACKEND=no-such-backend"

# the set-user-ID runs, as nobody: the files, then the backend (apart:
# a backend obeyed fails the initialization before the trace is opened)
asnobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$dir/probe" 2>&1; }
# a process under no_new_privs (some containers) runs set-user-ID
# programs without the bit: nothing to test there
asnobody | grep -qx "euid=0" ||
  { echo "skip: the set-user-ID bit does not take effect here (no_new_privs?)"; exit 77; }
out=$(EVRT_TRACE="$dir/secret" EVRT_CHECK=1 EVRT_CHECK_REPORT="$dir/report.json" asnobody)
rc=$?
echo "$out"
[ "$(cat "$dir/secret")" = "root's file" ] ||
  fail "the root-only file was overwritten through EVRT_TRACE"
[ ! -e "$dir/report.json" ] ||
  fail "the report was written where only root may write (EVRT_CHECK_REPORT)"
[ $rc = 0 ] || fail "the set-user-ID probe failed (status $rc)"
echo "$out" | grep -q "probe ran" || fail "the probe did not run"
echo "$out" | grep -q "EVRT_TRACE is ignored" ||
  fail "no warning that EVRT_TRACE was ignored"
out=$(EVRT_BACKEND=no-such-backend asnobody)
rc=$?
echo "$out"
[ $rc = 0 ] || fail "the set-user-ID probe took EVRT_BACKEND (status $rc)"
echo "ok: set-user-ID probe ignored EVRT_TRACE, EVRT_CHECK_REPORT, EVRT_BACKEND"
