"""evrt_torch: evrt as a PyTorch device (PrivateUse1 renamed "evrt").

Built against the installed torch (2.13.0) and the libevrt.so.0 of an evrt
build tree (EVRT_BUILD_DIR, default ../build), which the extension finds
through its RPATH.  `make torch-check` at the top of the repository builds
it in place and runs its tests; see docs/torch.md.
"""
import os

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CppExtension

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BUILD = os.path.abspath(os.environ.get("EVRT_BUILD_DIR", os.path.join(ROOT, "build")))

if not os.path.exists(os.path.join(BUILD, "libevrt.so.0")):
    raise SystemExit(f"evrt_torch: no libevrt.so.0 in {BUILD} (run `make build` first)")

setup(
    name="evrt_torch",
    version="0.1.0",
    description="evrt streams and events as a PyTorch device",
    packages=["evrt_torch"],
    ext_modules=[
        CppExtension(
            "evrt_torch._C",
            ["csrc/runtime.cpp", "csrc/ops.cpp", "csrc/module.cpp", "csrc/check.cpp"],
            include_dirs=[os.path.join(ROOT, "include")],
            library_dirs=[BUILD],
            # The one libevrt.so.0 of the build (by soname, so that the evrt
            # Python package, if loaded too, shares the same runtime).
            extra_link_args=[f"-Wl,-rpath,{BUILD}", "-l:libevrt.so.0"],
            extra_compile_args=["-O2", "-Wall", "-Wno-unused-parameter"],
        )
    ],
    cmdclass={"build_ext": BuildExtension},
    entry_points={"torch.backends": ["evrt = evrt_torch:_autoload"]},
)
