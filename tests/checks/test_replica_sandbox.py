"""The replica judge's variants run in the trial's own OS sandbox, within one budget.

Requests go to the real runner process (`checks/replica/process.py`), as the server sends them: what a
variant writes lands in a private copy or is refused, what it starts or connects to is refused (and the
variant then says nothing), and a variant that outlasts the budget is ended and says nothing.
"""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest

from crane_jupyterlab.checks import replica
from crane_jupyterlab.server.trial import platform_sandbox

pytestmark = pytest.mark.skipif(
    not platform_sandbox().available,
    reason=f"no OS sandbox on this machine ({platform_sandbox().reason}): the replica judge runs nothing",
)

ARRAY = {"kind": "ndarray", "shape": [4, 3], "values": {"dtype": "float64", "n": 12, "min": 0.0, "max": 1.0}}


def _ask(cell: str, budget_s: float = 2.0) -> dict[str, Any]:
    assert replica.warm_up(120), "the replica process did not warm up"
    request = {"cell": cell, "definitions": ["import numpy as np"], "specs": {"X": ARRAY}, "variants": 2,
               "budget_s": budget_s}  # fmt: skip
    return replica.run(request)


def test_every_variant_runs_in_the_os_sandbox_and_its_crash_is_seen() -> None:
    answer = _ask("X.sum(axis=2)")
    assert str(answer["sandbox"]).startswith("seccomp"), answer
    assert [v["status"] for v in answer["variants"]] == ["raised", "raised"], answer
    assert {v["exception"] for v in answer["variants"]} == {"AxisError"}


def test_files_written_from_c_code_land_in_a_private_copy(tmp_path: Path) -> None:
    existing = tmp_path / "weights.bin"
    existing.write_bytes(b"trained weights")
    new = tmp_path / "new.bin"
    answer = _ask(f"X.tofile({str(new)!r})\nX.tofile({str(existing)!r})\nX.sum(axis=2)")
    assert [v["status"] for v in answer["variants"]] == ["raised", "raised"], answer
    assert "private copy" in answer["variants"][0]["writes"]
    assert not new.exists()
    assert existing.read_bytes() == b"trained weights"


@pytest.mark.parametrize(
    "cell",
    [
        "import os\nos.system('touch {marker}')",
        "import ctypes\nctypes.CDLL(None).system(b'touch {marker}')",
        "import subprocess\nsubprocess.run(['touch', '{marker}'])",
    ],
)
def test_a_process_runs_inside_the_sandbox_and_changes_nothing(cell: str, tmp_path: Path) -> None:
    # The program runs under every layer of the variant's sandbox: its file lands in the private copy
    # (the real one is never made), and what the cell does after it is seen.
    marker = tmp_path / "ran"
    answer = _ask(
        cell.format(marker=marker) + f"\nimport os\nassert os.path.exists({str(marker)!r})\nX.sum(axis=2)"
    )
    assert [v["status"] for v in answer["variants"]] == ["raised", "raised"], answer
    assert not marker.exists()


def test_a_process_that_would_leave_the_sandbox_makes_the_variant_say_nothing() -> None:
    answer = _ask("import subprocess\nsubprocess.run(['setsid', 'true'], check=True)\nX.sum(axis=2)")
    assert [v["status"] for v in answer["variants"]] == ["aborted", "aborted"], answer
    assert all("refused" in v["why"] for v in answer["variants"]), answer


def test_a_loopback_server_is_never_reached() -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        listener.setblocking(False)
        port = listener.getsockname()[1]
        answer = _ask(f"import socket\nsocket.create_connection(('127.0.0.1', {port}), 1).sendall(b'x')")
        assert all(v["status"] != "ok" for v in answer["variants"]), answer
        with pytest.raises(BlockingIOError):
            listener.accept()


def test_a_variant_that_outlasts_the_budget_is_ended_and_says_nothing() -> None:
    # The real run would raise AxisError after ten seconds: the judge does not wait for it.
    answer = _ask("import time\nfor _ in range(100):\n    time.sleep(0.1)\nX.sum(axis=2)", budget_s=0.5)
    assert [(v["status"], v["why"]) for v in answer["variants"]] == [("aborted", "ran out of time")] * 2
    assert replica.agreed(answer) is None
