"""The replica judge through the real server and a real kernel: with no trial, a crash the rules cannot
list (inside a function the notebook defined) is reported as certain from replicas of the cell's inputs,
its fixed twin is not, and the kernel never runs the cell. And a red team: cells that write files from C
code, overwrite a file, call system() through ctypes, start processes, write to the home folder or
connect to a loopback server, analysed and never run: nothing outside changes."""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

import pytest
from support import analyze

from crane_jupyterlab.checks import replica
from crane_jupyterlab.server.trial import platform_sandbox

pytestmark = pytest.mark.integration

SETUP = (
    "import numpy as np\nX = np.arange(120.0).reshape(40, 3)",
    "def add_bias(a):\n    return np.hstack([a, np.ones((len(a) + 1, 1))])",
    "def add_bias_fixed(a):\n    return np.hstack([a, np.ones((len(a), 1))])",
)


@pytest.fixture
def crane_config(crane_env: None) -> dict[str, Any]:
    return {"trial": "off"}


@pytest.fixture
def warm_replicas() -> None:
    """The judge abstains while its process imports its libraries (seconds after the server starts)."""
    if not platform_sandbox().available:
        pytest.skip(f"no OS sandbox here ({platform_sandbox().reason}): the replica judge runs nothing")
    assert replica.warm_up(120), "the replica process did not warm up"


async def test_a_crash_inside_notebook_code_is_certain_from_replicas(
    jp_fetch: Any, kernels: Any, warm_replicas: None
) -> None:
    k = await kernels.start(*SETUP)
    code, body = await analyze(jp_fetch, k.id, "Z = add_bias(X)\nprint(Z.shape)")
    assert code == 200, body
    verdict = body["verdict"]
    assert verdict["detection"] is True and verdict["source"] == "checks", verdict
    assert [f["rule"] for f in verdict["findings"]] == ["replica"]
    assert verdict["findings"][0]["message"].startswith("ValueError: all the input array dimensions")
    assert verdict["findings"][0]["line"] == 1
    assert body["timing"]["replica_ms"] > 0
    assert await k.value("'Z' in globals()") == "False"  # the kernel never ran it

    code, body = await analyze(jp_fetch, k.id, "Z = add_bias_fixed(X)\nprint(Z.shape)")
    assert code == 200 and body["verdict"]["detection"] is False, body


async def test_red_team_nothing_outside_changes(
    jp_fetch: Any, kernels: Any, warm_replicas: None, tmp_path: Path
) -> None:
    """Each cell does its harm, then crashes on the array's shape: where the sandbox lets the harm land
    in the replica's private copy (a file written), the crash is still claimed, so the cell did run."""
    weights = tmp_path / "weights.pt"
    weights.write_bytes(b"trained weights")
    new_file, marker = tmp_path / "new.pt", tmp_path / "ctypes-ran"
    home = Path(os.path.expanduser("~")) / "crane-red-team.txt"
    listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)
    port = listener.getsockname()[1]
    crash = "add_bias(X)"  # inside notebook code: no rule sees it, only a run does
    cells = {
        "torch's native writer, a new file": f"import torch\ntorch.save(torch.tensor(X), {str(new_file)!r})",
        "an existing file overwritten": f"import torch\ntorch.save(torch.from_numpy(X), {str(weights)!r})",
        "numpy's C writer": f"X.tofile({str(new_file)!r})",
        "system() through ctypes": f"import ctypes\nctypes.CDLL(None).system(b'touch {marker}')",
        "a process": f"import subprocess\nsubprocess.run(['touch', {str(marker)!r}])",
        "the home folder": f"open({str(home)!r}, 'w').write(str(X.shape))",
        "a loopback connection": f"import socket\nsocket.create_connection(('127.0.0.1', {port})).send(b'x')",
    }  # fmt: skip
    k = await kernels.start(*SETUP[:2])
    claimed = {}
    try:
        for what, cell in cells.items():
            code, body = await analyze(jp_fetch, k.id, f"{cell}\n{crash}")
            assert code == 200, (what, body)
            claimed[what] = bool(body["verdict"]["detection"])
            assert weights.read_bytes() == b"trained weights", what
            assert not new_file.exists() and not marker.exists() and not home.exists(), what
            with pytest.raises(BlockingIOError):
                listener.accept()
    finally:
        listener.close()
        home.unlink(missing_ok=True)
    # The writes landed in private copies, and the cell went on to its crash; what the sandbox refused (a
    # connection) is no claim. A program (`touch`, through subprocess or libc's system()) runs inside the
    # sandbox, its file in the private copy: the crash after it is claimed where the trial saw it, and
    # not where the replicas, whose verdict may come first, were refused the program.
    for what in ("system() through ctypes", "a process"):
        del claimed[what]
    assert claimed == {
        "torch's native writer, a new file": True,
        "an existing file overwritten": True,
        "numpy's C writer": True,
        "the home folder": True,
        "a loopback connection": False,
    }
    assert await k.value("X.shape") == "(40, 3)"
