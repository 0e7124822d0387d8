#!/bin/sh
# Install, from Debian's package registry, whatever the build and the tests
# need and this machine lacks.  Does nothing when everything is present.
# Needs root (or sudo) only when something is missing.  Every name exists on
# Debian 12 and 13 (libclang-rt-dev, not libclang-rt-14-dev: 13 has clang 19).
set -e
PKGS="cmake make gcc g++ pkg-config python3 python3-dev python3-pytest
python3-setuptools python3-pip clang libclang-rt-dev valgrind
pocl-opencl-icd ocl-icd-opencl-dev opencl-headers
dpkg-dev binutils util-linux libdw-dev libunwind8"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "install-deps: installing:$missing"
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq || true
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing
