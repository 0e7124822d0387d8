#!/bin/sh
# make deb: build evrt's Debian binary packages with Debian's own tools
# (dpkg-architecture, dpkg-buildflags, dpkg-shlibdeps, dpkg-deb) from one
# CMake build for the prefix /usr, one package per CMake install component:
#
#   libevrt0      runtime  libevrt.so.0 and libascendcl.so
#   libevrt-dev   dev      headers, libevrt.so, evrt.pc, ascendcl.pc, CMake package
#   evrt-tools    tools    evrt-trace, evrt-check
#   python3-evrt  python   the evrt Python package (whatever python/ installs),
#                          on the shared libevrt.so.0 of libevrt0
#
# Usage: packaging/build-deb.sh [BUILD_DIR [OUT_DIR]]
#   defaults: build-deb and BUILD_DIR/packages (the .deb files land there).
# The Maintainer field is "$DEBFULLNAME <$DEBEMAIL>" when those are set.
# lintian (not run by CI) reports only the placeholder maintainer address
# (set DEBEMAIL), evrt-trace's missing manual page and libascendcl.so's
# unversioned name (CANN's, which ACL programs record).
set -eu
cd "$(dirname "$0")/.."
src=$(pwd)
build=$(realpath -m "${1:-build-deb}")
out=$(realpath -m "${2:-$build/packages}")
JOBS=${JOBS:-2}
die() { echo "build-deb: $*" >&2; exit 1; }
for t in cmake dpkg-deb dpkg-shlibdeps dpkg-architecture dpkg-buildflags strip gzip md5sum; do
  command -v "$t" >/dev/null 2>&1 || die "$t is missing (make deps installs it)"
done
[ -x /usr/bin/python3 ] || die "/usr/bin/python3 is missing"

arch=$(dpkg-architecture -qDEB_HOST_ARCH)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
maint="${DEBFULLNAME:-evrt developers} <${DEBEMAIL:-dev@evrt.local}>"
# The changelog's date and the copyright year: the commit's, so that two
# builds of one commit match.
date=$(git -C "$src" log -1 --format=%cD 2>/dev/null || date -R)
year=$(date -d "$date" +%Y)

# Debian's hardening and optimization flags, as a package build uses them.
CFLAGS="$(dpkg-buildflags --get CFLAGS) $(dpkg-buildflags --get CPPFLAGS)"
CXXFLAGS="$(dpkg-buildflags --get CXXFLAGS) $(dpkg-buildflags --get CPPFLAGS)"
LDFLAGS=$(dpkg-buildflags --get LDFLAGS)
export CFLAGS CXXFLAGS LDFLAGS
mkdir -p "$build"
cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=None -DCMAKE_INSTALL_PREFIX=/usr \
  -DCMAKE_INSTALL_LIBDIR="lib/$multiarch" -DBUILD_TESTING=OFF \
  -DEVRT_RELOCATABLE_PC=OFF -DCMAKE_SKIP_INSTALL_RPATH=ON \
  -DEVRT_PYTHON_INSTALL_DIR=lib/python3/dist-packages \
  -DPython3_EXECUTABLE=/usr/bin/python3 >"$build/configure.log" 2>&1 ||
  { cat "$build/configure.log"; die "cmake configure failed"; }
# Only what the packages install (not the examples, benchmarks or the pip
# build of the tests): a new installed target is added here.
cmake --build "$build" -j"$JOBS" --target evrt ascendcl evrt-trace evrt-check evrt_python \
  >"$build/build.log" 2>&1 ||
  { tail -50 "$build/build.log"; die "build failed (log: $build/build.log)"; }
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
[ -n "$version" ] || die "no project version in $build/CMakeCache.txt"

stage=$build/stage
rm -rf "$stage" "$out"
mkdir -p "$stage" "$out"

# Every installed file belongs to a component: a rule without one would be
# left out of every package without a word.
DESTDIR="$stage/unspecified" cmake --install "$build" --component Unspecified >/dev/null
if [ -d "$stage/unspecified" ] && [ -n "$(find "$stage/unspecified" ! -type d)" ]; then
  find "$stage/unspecified" ! -type d | sed "s|^$stage/unspecified||" >&2
  die "install() rules without COMPONENT installed the files above: give each" \
      "one COMPONENT runtime, dev, tools or python (CMakeLists.txt lists them)"
fi
rm -rf "$stage/unspecified"

is_elf() { [ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = 177ELF ]; }

# stage_pkg <package> <component> <section> <depends> <summary> <description>:
# the package's tree under $stage/<package>, with DEBIAN/control.  Depends
# gets the shared-library dependencies of its ELF files (dpkg-shlibdeps;
# libevrt0's own libraries are found in its stage and depended on exactly
# by the caller).
stage_pkg() {
  name=$1 comp=$2 section=$3 depends=$4 summary=$5 description=$6
  root=$stage/$name
  DESTDIR="$root" cmake --install "$build" --component "$comp" >/dev/null
  [ -d "$root/usr" ] || die "component $comp installed nothing"
  elves=""
  for f in $(find "$root" -type f | sort); do
    is_elf "$f" || continue
    elves="$elves $f"
    # as dh_strip: no debugging symbols in the package
    case $f in
      *.so | *.so.*) strip --remove-section=.comment --remove-section=.note --strip-unneeded "$f" ;;
      *) strip --remove-section=.comment --remove-section=.note "$f" ;;
    esac
  done
  if [ -n "$elves" ]; then
    work=$(mktemp -d)
    mkdir "$work/debian"
    printf 'Source: evrt\n\nPackage: %s\nArchitecture: any\n' "$name" >"$work/debian/control"
    # shellcheck disable=SC2086
    (cd "$work" && dpkg-shlibdeps -O --ignore-missing-info \
       -l"$stage/libevrt0/usr/lib/$multiarch" -e $elves) >"$work/out" 2>"$work/err" ||
      { cat "$work/err" >&2; die "dpkg-shlibdeps failed for $name"; }
    libs=$(sed -n 's/^shlibs:Depends=//p' "$work/out")
    rm -rf "$work"
    [ -n "$libs" ] || die "dpkg-shlibdeps found no dependency for $name"
    depends="$libs${depends:+, $depends}"
  fi
  doc=$root/usr/share/doc/$name
  mkdir -p "$doc"
  cat >"$doc/copyright" <<EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: evrt
Comment: Built from the evrt source tree by packaging/build-deb.sh.

Files: *
Copyright: $year the evrt developers
License: none-stated
 The evrt source tree states no license.
EOF
  printf 'evrt (%s) unstable; urgency=medium\n\n  * Built by packaging/build-deb.sh.\n\n -- %s  %s\n' \
    "$version" "$maint" "$date" | gzip -9n >"$doc/changelog.gz"
  mkdir -p "$root/DEBIAN"
  {
    echo "Package: $name"
    echo "Source: evrt"
    echo "Version: $version"
    echo "Architecture: $arch"
    echo "Maintainer: $maint"
    echo "Installed-Size: $(du -sk "$root" | cut -f1)"
    [ -z "$depends" ] || echo "Depends: $depends"
    [ -z "${RECOMMENDS:-}" ] || echo "Recommends: $RECOMMENDS"
    [ -z "${MULTIARCH:-}" ] || echo "Multi-Arch: $MULTIARCH"
    echo "Section: $section"
    echo "Priority: optional"
    echo "Description: $summary"
    printf '%s\n' "$description" | sed 's/^$/./; s/^/ /'
  } >"$root/DEBIAN/control"
}

about="evrt is a stream-and-event runtime: in-order asynchronous work queues
(streams) and events (record, query, synchronize, stream waits, elapsed
time, interprocess handles) run by a pool of host worker threads, with
Ascend ACL's stream and event API (libascendcl.so) on top.
"

MULTIARCH=same stage_pkg libevrt0 runtime libs "" \
  "stream-and-event runtime (shared libraries)" \
  "$about
This package contains libevrt.so.0 and the ACL layer libascendcl.so."
# For packages built against libevrt0 (python3-evrt below, through
# dpkg-shlibdeps): a symbols file with every exported symbol, by the version
# of its node (EVRT_0.1 -> 0.1; libascendcl.so's are unversioned: this
# version), since libascendcl.so, with no version in its name (as CANN's),
# cannot have a shlibs line; the shlibs line for libevrt.so.0 is the
# fallback of older tools.  ldconfig runs by dpkg's trigger.
lib=$stage/libevrt0/usr/lib/$multiarch
{
  echo "libevrt.so.0 libevrt0 #MINVER#"
  nm -D --defined-only "$lib/libevrt.so.0" | awk '{print $3}' | LC_ALL=C sort |
    sed -n 's/^\([^@]*\)@@\?\(EVRT_\(.*\)\)$/ \1@\2 \3/p'
  echo "libascendcl.so libevrt0 #MINVER#"
  nm -D --defined-only "$lib/libascendcl.so" | awk '{print $3}' | LC_ALL=C sort |
    sed "s/^\(.*\)$/ \1@Base $version/"
} >"$stage/libevrt0/DEBIAN/symbols"
printf 'libevrt 0 libevrt0 (>= %s)\n' "$version" >"$stage/libevrt0/DEBIAN/shlibs"
echo "activate-noawait ldconfig" >"$stage/libevrt0/DEBIAN/triggers"

RECOMMENDS=pkgconf stage_pkg libevrt-dev dev libdevel \
  "libevrt0 (= $version), libc6-dev | libc-dev" \
  "stream-and-event runtime (development files)" \
  "$about
This package contains the headers (evrt.h, acl/acl.h), the pkg-config
files (evrt, ascendcl) and the CMake package (find_package(evrt), target
evrt::evrt)."

stage_pkg evrt-tools tools utils "" \
  "stream-and-event runtime (trace viewer, schedule checker)" \
  "$about
This package contains evrt-trace, which draws a trace written by evrt
(EVRT_TRACE=file.json) as an SVG timeline, and evrt-check, which runs a
program under EVRT_CHECK=1 with several EVRT_CHAOS seeds."

py=$(/usr/bin/python3 -c 'import sys; v = sys.version_info; print("%d.%d %d.%d" % (v[0], v[1], v[0], v[1] + 1))')
stage_pkg python3-evrt python python "python3 (>= ${py% *}), python3 (<< ${py#* })" \
  "stream-and-event runtime (Python 3 module)" \
  "$about
This package contains the evrt Python module: PyTorch-style Event and
Stream classes and the pyACL-style evrt.acl.rt, over libevrt0's
libevrt.so.0 (one runtime per process)."
# Byte code: compiled at configure, and removed (with whatever an import as
# root wrote) before removal, so dpkg -r leaves nothing behind.
cat >"$stage/python3-evrt/DEBIAN/postinst" <<'EOF'
#!/bin/sh
set -e
if [ "$1" = configure ] && command -v py3compile >/dev/null 2>&1; then
  py3compile -p python3-evrt
fi
EOF
cat >"$stage/python3-evrt/DEBIAN/prerm" <<'EOF'
#!/bin/sh
set -e
if command -v py3clean >/dev/null 2>&1; then
  py3clean -p python3-evrt
else
  find /usr/lib/python3/dist-packages/evrt -name __pycache__ -type d -prune -exec rm -rf {} +
fi
EOF
chmod 755 "$stage/python3-evrt/DEBIAN/postinst" "$stage/python3-evrt/DEBIAN/prerm"

for name in libevrt0 libevrt-dev evrt-tools python3-evrt; do
  root=$stage/$name
  (cd "$root" && find . -type f ! -path './DEBIAN/*' -printf '%P\n' | LC_ALL=C sort |
     xargs -d '\n' md5sum) >"$root/DEBIAN/md5sums"
  deb=$out/${name}_${version}_$arch.deb
  dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
  echo "build-deb: $deb"
done
