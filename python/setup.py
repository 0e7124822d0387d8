"""Build of the evrt Python package (pip install ./python --no-build-isolation).

The extension evrt._evrt compiles the evrt core sources (and the ACL
compatibility layer) into itself, so it needs no installed libevrt and
nothing from the network: only a C compiler, Python's headers and the
setuptools of the machine.  All the library's symbols are hidden: only
PyInit__evrt is exported, so a libevrt.so loaded into the same process
cannot be interposed.
"""

import glob
import os
import re

from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _sources(*patterns):
    out = []
    for p in patterns:
        out.extend(sorted(glob.glob(os.path.join(ROOT, p))))
    return out


def _version():
    with open(os.path.join(ROOT, "include", "evrt.h")) as f:
        text = f.read()
    parts = [re.search(r"#define EVRT_VERSION_%s (\d+)" % k, text).group(1)
             for k in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(parts)


core = _sources("src/*.c", "src/cpu/*.c", "src/unix/*.c", "src/check/*.c")
acl = _sources("src/acl/*.c")
if not core:
    raise SystemExit("setup.py: the evrt sources (../src) were not found; "
                     "build from a checkout of the evrt repository")

# The core is compiled into this dlopen'd module: its thread-locals must use
# the general-dynamic TLS model (initial-exec ones may not fit the static TLS
# block that is left for modules loaded late).
macros = [("_GNU_SOURCE", None), ("EVRT_TLS_DYNAMIC", "1")]
if acl and os.path.exists(os.path.join(ROOT, "include", "acl", "acl.h")):
    macros.append(("EVRTPY_HAVE_ACL", "1"))
else:
    acl = []

ext = Extension(
    "evrt._evrt",
    sources=_sources("python/src/*.c") + core + acl,
    include_dirs=[os.path.join(ROOT, "include"), os.path.join(ROOT, "src")],
    define_macros=macros,
    extra_compile_args=["-std=c11", "-fvisibility=hidden", "-Wall",
                        "-Wextra", "-Wno-unused-parameter"],
    extra_link_args=["-pthread"],
)

setup(
    name="evrt",
    version=_version(),
    description="PyTorch-style and pyACL-style events and streams over evrt",
    packages=["evrt", "evrt.acl"],
    ext_modules=[ext],
    python_requires=">=3.8",
    zip_safe=False,
)
