"""Stand-in for OpenReg's torch_openreg package (issue 26's acceptance run):
the evrt device registered under the name "openreg", so that OpenReg's test
files run unchanged against evrt (docs/torch.md, "PyTorch's own tests").
Put torch_device/openreg_standin and torch_device on PYTHONPATH, with
EVRT_TORCH_BACKEND_NAME=openreg in the environment (torch's autoload
imports evrt_torch at `import torch`, before this package)."""
import os

os.environ.setdefault("EVRT_TORCH_BACKEND_NAME", "openreg")

import evrt_torch  # noqa: E402,F401

if evrt_torch.BACKEND_NAME != "openreg":
    raise ImportError("torch_openreg stand-in: evrt_torch was registered as "
                      f"{evrt_torch.BACKEND_NAME!r}; set EVRT_TORCH_BACKEND_NAME=openreg")
