"""`%load_ext x` imports x (IPython's extension manager): a missing x is a certain ModuleNotFoundError
(checks/rules/imports.py, kernel/probe/imports.py), except IPython's own fallbacks (autoreload, storemagic).
Each cell is transformed and run by a real IPython shell in a fresh interpreter, and the claims compared."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

pytest.importorskip("IPython")

RUN = """
import json, sys
from IPython.core.interactiveshell import InteractiveShell
from crane_jupyterlab.checks import check
from crane_jupyterlab.kernel import probe
shell = InteractiveShell.instance()
out = []
for cell in json.loads(sys.argv[1]):
    python = shell.transform_cell(cell)
    claims = [f.message for f in check(python, probe.run(python, {}, namespace={}))]
    result = shell.run_cell(cell, silent=True)
    error = result.error_in_exec or result.error_before_exec
    out.append({"claims": claims, "real": f"{type(error).__name__}: {error}" if error else "ran"})
print("RESULT " + json.dumps(out))
"""

CELLS: dict[str, bool] = {
    "%load_ext crane_no_such_extension": True,
    "import os\n%load_ext crane_no_such_extension\nx = 1": True,
    "%load_ext crane_no_such_extension.sub": True,
    "%load_ext autoreload\n%autoreload 2": False,
    "%load_ext storemagic": False,
    (
        "try:\n    get_ipython().run_line_magic('load_ext', 'crane_no_such_extension')\n"
        "except ImportError:\n    pass"
    ): False,
    "%load_ext IPython.extensions.storemagic\nimport crane_no_such_module": False,  # its code ran first
    "%load_ext json": False,  # loaded: no load function, no error
}


@pytest.fixture(scope="module")
def outcomes() -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", RUN, json.dumps(list(CELLS))], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stdout.splitlines() if x.startswith("RESULT "))
    return dict(zip(CELLS, json.loads(line[len("RESULT ") :]), strict=True))


@pytest.mark.parametrize("cell", list(CELLS))
def test_load_ext_of_a_missing_module(cell: str, outcomes: dict[str, Any]) -> None:
    seen = outcomes[cell]
    if CELLS[cell]:
        assert seen["real"].startswith("ModuleNotFoundError: No module named 'crane_no_such_extension"), seen
        (claim,) = seen["claims"]
        assert claim.startswith("ModuleNotFoundError: No module named 'crane_no_such_extension")
    else:
        assert seen["claims"] == [], seen
