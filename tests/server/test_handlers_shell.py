"""Shell commands through the real server, each hostile target three ways: as the cell a trial runs, as a
step of the chain below an edit, and as a cell of a run from the top. Checked from outside after each: no
file outside changed, no connection reached a server on this machine, no process the cell started is left,
and the kernel kept its state."""

from __future__ import annotations

import asyncio
import hashlib
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support import CountingServer, analyze, post_json, processes_with

from crane_jupyterlab.server.trial import platform_sandbox

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not platform_sandbox().available, reason="no OS sandbox for trial runs here"),
]


@pytest.fixture
def crane_config(crane_env: None) -> dict[str, Any]:
    return {"trial": "auto", "replicas": False}


@pytest.fixture
def listener() -> Iterator[CountingServer]:
    server = CountingServer()
    yield server
    server.close()


def targets(watched: Path, port: int, mark: str) -> dict[str, str]:
    """What a hostile notebook tries from its shell commands; `mark` names its processes."""
    return {
        "background": f"!sleep {mark}1 &",
        "daemon": f"!nohup sleep {mark}2 > /dev/null 2>&1 &",
        "own session": f"!setsid sleep {mark}3",
        "double fork": (
            f"!python3 -c \"import os\\nif os.fork() == 0: os.execvp('sleep', ['sleep', '{mark}4'])\""
        ),
        "write": f"!echo changed > {watched}/a.txt",
        "delete": f"%%bash\nrm -rf {watched}",
        "network": f"!python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 2)\"",
        "download": (
            f"!python3 -c \"import urllib.request as u; u.urlretrieve('http://127.0.0.1:{port}/', 'x')\""
        ),
        "read ssh": "!cat ~/.ssh/id_rsa > /tmp/crane-leaked-key 2> /dev/null; ls ~/.ssh > /dev/null 2>&1",
        "install": "!pip install -q requests-that-do-not-exist-anywhere",
        # last: it may end a chain or a run at the memory cap or the budget, which the others must not meet
        "fill tmp": "!dd if=/dev/zero of=$TMPDIR/fill bs=1M count=4096 2> /dev/null",
    }


def checksums(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
        for p in sorted(root.rglob("*"))
    }


async def wait_run(jp_fetch: Any, run_id: str) -> dict[str, Any]:
    for _ in range(600):
        run = json.loads((await jp_fetch("crane", "notebook", run_id, method="GET")).body)
        if run["state"] != "running":
            return dict(run)
        await asyncio.sleep(0.2)
    raise AssertionError("the run from the top did not end")


async def test_hostile_shell_commands_change_nothing_outside_any_way_they_run(
    jp_fetch: Any, kernels: Any, listener: CountingServer, tmp_path: Path
) -> None:
    watched = tmp_path / "watched"
    watched.mkdir()
    (watched / "a.txt").write_text("alpha\n")
    mark = "31.4159"
    hostile = targets(watched, listener.port, mark)
    before = checksums(watched)
    free = shutil.disk_usage("/tmp").free
    k = await kernels.start("x = 1")
    statuses: dict[str, list[str]] = {}
    reasons: dict[str, list[str]] = {}
    for name, cell in hostile.items():  # each as the cell a trial runs
        code, body = await analyze(jp_fetch, k.id, cell)
        assert code == 200, body
        statuses[name] = [body["trial"]["status"] if body.get("trial") else "none"]
        reasons[name] = [str((body.get("trial") or {}).get("reason"))]
    below = [{"cell_id": f"b{i}", "source": cell} for i, cell in enumerate(hostile.values())]
    code, body = await analyze(jp_fetch, k.id, "y = 2", below=below)  # as steps of the chain
    assert code == 200 and body["below"] is not None, body
    for name, step in zip(hostile, body["below"], strict=True):
        statuses[name].append(step["status"])
        reasons[name].append(str(step.get("reason")))
    cells = [{"cell_id": f"c{i}", "source": cell} for i, cell in enumerate(hostile.values())]
    code, started = await post_json(jp_fetch, ["crane", "notebook"], {"kernel_id": k.id, "cells": cells})
    assert code == 202, started
    run = await wait_run(jp_fetch, started["id"])  # as cells of a run from the top
    for name, cell_outcome in zip(hostile, run["cells"], strict=True):
        statuses[name].append(cell_outcome["status"])
        reasons[name].append(str(cell_outcome.get("reason")))
    await asyncio.sleep(0.5)
    # Nothing outside changed, nothing connected, no process is left, the kernel is as it was.
    assert checksums(watched) == before
    assert not Path("/tmp/crane-leaked-key").exists()
    assert listener.count == 0
    assert processes_with(mark) == []
    assert shutil.disk_usage("/tmp").free > free - (256 << 20)
    assert await k.value("x, 'y' in globals()") == "(1, False)"
    # Each ran inside the sandbox: what it could not do made it blocked, never a crash; the run from the
    # top and the chain went on past each to the end.
    assert not [n for n, s in statuses.items() if "crashed" in s], statuses
    for name in ("own session", "network", "download"):
        assert statuses[name] == ["blocked"] * 3, (name, statuses, reasons)
    for name in ("network", "download"):  # a program that needed the network is named, each way
        assert all("'python3' reach the network" in r for r in reasons[name]), (name, reasons[name])
    for name in ("write", "delete"):  # into the private copy of the files where the platform has one
        assert set(statuses[name]) <= {"finished", "ran", "blocked"}, (name, statuses, reasons)
    for name in ("background", "daemon", "double fork"):
        assert statuses[name] == ["finished", "finished", "ran"], (name, statuses, reasons)
    assert "not_reached" not in statuses["install"], statuses
