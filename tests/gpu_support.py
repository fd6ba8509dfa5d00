"""Whether this machine can run the `cuda`-marked tests, found without touching CUDA in the test process.

Asking torch.cuda.is_available() here would initialise the CUDA driver in pytest's own process (and
poison every fork after it); a build without CUDA needs no question at all, and otherwise one fresh
interpreter is asked, once per session. Plain functions: test folders import this module directly, also
when scripts/gpu-check runs pytest without the folder conftests (no jupyter server plugin there).
"""

from __future__ import annotations

import functools
import subprocess
import sys
from typing import Any

import pytest


@functools.cache
def cuda_reason() -> str | None:
    """None when CUDA can be used here, else why not."""
    try:
        import torch
    except ImportError:
        return "torch is not installed"
    if torch.version.cuda is None:
        return f"torch {torch.__version__} is built without CUDA"
    probe = "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 3)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, timeout=120, check=False)
    return None if done.returncode == 0 else "no usable CUDA device"


def cuda_marks() -> list[Any]:
    """`pytestmark = cuda_marks()`: the `cuda` marker, and a skip where there is no GPU."""
    reason = cuda_reason()
    return [pytest.mark.cuda, pytest.mark.skipif(reason is not None, reason=reason or "")]
