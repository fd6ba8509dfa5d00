"""The payload on the oldest Python a kernel may run (crane_jupyterlab.kernel.OLDEST_PYTHON).

The kernel's interpreter can be older than the server's. The payload is stdlib-only, so the test needs no
kernel: a bare interpreter of that version installs it exactly as a kernel does and runs the probe.
"""

from __future__ import annotations

import glob
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from crane_jupyterlab.kernel import OLDEST_PYTHON


def oldest_python() -> str | None:
    """An interpreter of OLDEST_PYTHON: $CRANE_OLDEST_PYTHON, pythonX.Y on PATH, or a pyenv version."""
    version = ".".join(map(str, OLDEST_PYTHON))
    candidates = [os.environ.get("CRANE_OLDEST_PYTHON")]
    candidates += sorted(glob.glob(str(Path.home() / f".pyenv/versions/{version}.*/bin/python")))
    candidates.append(shutil.which(f"python{version}"))
    # pyenv's shims answer for versions that are installed but not selected, with an error.
    return next((c for c in candidates if c and Path(c).exists() and "/shims/" not in c), None)


PYTHON = oldest_python()

pytestmark = pytest.mark.skipif(
    PYTHON is None,
    reason=f"no Python {'.'.join(map(str, OLDEST_PYTHON))} here (set CRANE_OLDEST_PYTHON to one)",
)

BODY = """
import json, collections, sys
assert sys.version_info[:2] == %r, sys.version
def helper(a, b=1):
    return a + undefined_global
ns = {"x": 3, "items": [1, 2.5, "a"], "conf": {"lr": 0.1}, "helper": helper,
      "Point": collections.namedtuple("Point", "x y"), "path": "/nonexistent/data.csv"}
cell = "%%matplotlib inline\\nfor i in range(x):\\n    print(f'{items[i]}', conf['lr'], conf.missing)\\n"
cell += "helper(1, 2, 3)\\nopen(path)\\n!ls\\nz = [w for w in items] + y"
r = run(cell, {"docs": True, "history": True, "budget_ms": 500}, ns)
print(json.dumps(r))
"""


def test_the_probe_runs_on_the_oldest_supported_python(payload_run: Callable[..., Any]) -> None:
    assert PYTHON is not None
    result = payload_run(BODY % (OLDEST_PYTHON,), python=PYTHON)
    assert result["error"] is None, result["error"]
    assert result["python"].startswith(".".join(map(str, OLDEST_PYTHON)))
    assert result["undefined"] == ["y"]
    exprs = {e["expr"]: e for e in result["objects"]}
    assert {"x", "items", "conf", "helper"} <= set(exprs)
    assert any(f["key"] == "undefined_globals" for f in exprs["helper"]["facts"])
    assert exprs["conf.missing"]["missing"]
    assert any(e["type"] == "call" for e in result["objects"])  # helper(1, 2, 3) cannot bind
