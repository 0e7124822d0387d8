"""Build of the evrt Python package (pip install ./python --no-build-isolation).

One runtime per process: the extension evrt._evrt is linked against the
shared evrt library, libevrt.so.0 (and the ACL layer, libascendcl.so), not
against a private copy.  A C extension, a ctypes user or an ACL program in
the same process that loads libevrt.so.0 gets the same library (the dynamic
loader matches an already loaded library by its soname), so streams, events
and handles are shared with Python.

Where the libraries come from:
  - by default they are built here from the evrt sources (../src, with the
    compiler and flags of the CMake build) and installed inside the package,
    next to the extension, which finds them with RUNPATH=$ORIGIN;
  - with EVRT_LIBDIR=DIR[:DIR...] the extension is linked against the
    libevrt.so (and libascendcl.so, if there is one) found in those
    directories (an installed evrt, or a CMake build tree: build and
    build/src/acl) and nothing is bundled; RUNPATH is those directories
    unless EVRT_LIBDIR_RPATH=0 (system directories the loader searches
    anyway).

Nothing is downloaded: only a C compiler, Python's headers and the
setuptools of the machine are needed (pyproject.toml declares setuptools;
offline, pass --no-build-isolation).  EVRT_PY_BUILD_DIR, if set, holds the
build's intermediate files instead of ./build.
"""

import concurrent.futures
import glob
import os
import re

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SONAME = "libevrt.so.0"
ACL_SONAME = "libascendcl.so"


def _rel(path):
    return os.path.relpath(path, HERE)


def _version():
    with open(os.path.join(ROOT, "include", "evrt.h")) as f:
        text = f.read()
    parts = [re.search(r"#define EVRT_VERSION_%s (\d+)" % k, text).group(1)
             for k in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(parts)


def _core_patterns():
    """The core's source globs, read from the top-level CMakeLists.txt so
    that both builds compile the same files."""
    try:
        with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
            text = f.read()
        m = re.search(r"file\(GLOB EVRT_CORE_SOURCES([^)]*)\)", text)
        pats = re.findall(r"\$\{CMAKE_SOURCE_DIR\}/(\S+\.c)", m.group(1))
        if pats:
            return pats
    except (OSError, AttributeError):
        pass
    return ["src/*.c", "src/cpu/*.c", "src/seq/*.c", "src/unix/*.c"]


def _sources(*patterns):
    out = []
    for p in patterns:
        out.extend(sorted(glob.glob(os.path.join(ROOT, p))))
    return out


class BuildWithLibevrt(build_ext):
    """build_ext that first builds (or finds) the shared libraries the
    extension links against."""

    def build_extensions(self):
        # (self.compiler exists from here on)
        ext = self.extensions[0]
        if LIBDIRS:
            self._link_installed(ext)
        else:
            self._build_bundled(ext)
        super().build_extensions()

    def _link_installed(self, ext):
        ext.library_dirs.extend(LIBDIRS)
        ext.libraries.append("evrt")
        if HAVE_ACL:
            ext.libraries.append("ascendcl")
        if os.environ.get("EVRT_LIBDIR_RPATH", "1") != "0":
            ext.extra_link_args.append("-Wl,-rpath," + ":".join(LIBDIRS))

    def _compile(self, sources, out, macros, extra):
        """Compile sources in parallel (one job per CPU); return objects."""
        inc = [os.path.join(ROOT, "include"), os.path.join(ROOT, "src")]
        args = ["-std=c11", "-pthread"] + extra

        def one(src):
            return self.compiler.compile(
                [src], output_dir=out, macros=macros, include_dirs=inc,
                extra_postargs=args, debug=self.debug)[0]

        jobs = max(1, min(len(sources), os.cpu_count() or 1))
        with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
            return list(pool.map(one, sources))

    def _build_bundled(self, ext):
        # The libraries go where the extension goes: the package directory
        # of the build (or of the source tree, for an in-place build).
        pkgdir = os.path.dirname(self.get_ext_fullpath(ext.name))
        os.makedirs(pkgdir, exist_ok=True)
        tmp = os.path.join(self.build_temp, "libevrt")
        # Flags of the CMake build's libevrt (see CMakeLists.txt).
        objs = self._compile(
            _sources(*_core_patterns()), os.path.join(tmp, "core"),
            [("EVRT_BUILDING_LIBRARY", None), ("_GNU_SOURCE", None)],
            ["-fvisibility=hidden", "-fno-semantic-interposition",
             "-falign-functions=64"])
        lib = os.path.join(pkgdir, SONAME)
        self.compiler.link_shared_object(
            objs, lib, extra_postargs=[
                "-pthread", "-Wl,-soname," + SONAME,
                "-Wl,--version-script=" + os.path.join(ROOT, "src", "evrt.map"),
                "-Wl,--no-undefined", "-Wl,-Bsymbolic-functions"])
        ext.extra_objects.append(lib)
        if HAVE_ACL:
            acl_objs = self._compile(
                ACL_SOURCES, os.path.join(tmp, "acl"),
                [("FUNC_VISIBILITY", None), ("_GNU_SOURCE", None)],
                ["-fvisibility=hidden"])
            acl_lib = os.path.join(pkgdir, ACL_SONAME)
            self.compiler.link_shared_object(
                acl_objs + [lib], acl_lib, extra_postargs=[
                    "-pthread", "-Wl,-soname," + ACL_SONAME,
                    "-Wl,--version-script=" + os.path.join(
                        ROOT, "src", "acl", "ascendcl.map"),
                    "-Wl,--no-undefined", "-Wl,-Bsymbolic-functions",
                    "-Wl,-rpath,$ORIGIN"],
                # the layer's fp16 and random-number code use libm
                libraries=["m"])
            ext.extra_objects.append(acl_lib)
        ext.extra_link_args.append("-Wl,-rpath,$ORIGIN")


LIBDIRS = [os.path.abspath(d) for d in
           os.environ.get("EVRT_LIBDIR", "").split(os.pathsep) if d]
if LIBDIRS:
    if not any(os.path.exists(os.path.join(d, "libevrt.so")) for d in LIBDIRS):
        raise SystemExit("setup.py: no libevrt.so in EVRT_LIBDIR=%s"
                         % os.pathsep.join(LIBDIRS))
    ACL_SOURCES = []
    HAVE_ACL = any(os.path.exists(os.path.join(d, ACL_SONAME))
                   for d in LIBDIRS)
else:
    if not _sources(*_core_patterns()):
        raise SystemExit("setup.py: the evrt sources (../src) were not "
                         "found; build from a checkout of the evrt "
                         "repository, or set EVRT_LIBDIR to the library "
                         "directory of an installed evrt")
    ACL_SOURCES = _sources("src/acl/*.c")
    HAVE_ACL = bool(ACL_SOURCES)
HAVE_ACL = HAVE_ACL and os.path.exists(
    os.path.join(ROOT, "include", "acl", "acl.h"))

macros = [("_GNU_SOURCE", None)]
if HAVE_ACL:
    macros.append(("EVRTPY_HAVE_ACL", "1"))

ext = Extension(
    "evrt._evrt",
    sources=[_rel(p) for p in sorted(glob.glob(os.path.join(HERE, "src",
                                                            "*.c")))],
    include_dirs=[os.path.join(ROOT, "include")],
    define_macros=macros,
    extra_compile_args=["-std=c11", "-fvisibility=hidden", "-Wall",
                        "-Wextra", "-Wno-unused-parameter"],
    extra_link_args=["-pthread"],
)

options = {}
build_dir = os.environ.get("EVRT_PY_BUILD_DIR")
if build_dir:
    options = {"build": {"build_base": build_dir},
               "egg_info": {"egg_base": build_dir}}
    os.makedirs(build_dir, exist_ok=True)

setup(
    name="evrt",
    version=_version(),
    description="torch.cuda / torch.xpu / torch.accelerator-style and "
                "pyACL-style streams and events over evrt",
    packages=["evrt", "evrt.acl"],
    package_data={"evrt": ["py.typed", "*.pyi"], "evrt.acl": ["*.pyi"]},
    ext_modules=[ext],
    cmdclass={"build_ext": BuildWithLibevrt},
    python_requires=">=3.8",
    zip_safe=False,
    options=options,
)
