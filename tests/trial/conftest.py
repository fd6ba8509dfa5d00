"""Helpers of the trial-run tests: a trial in this process (the kernel side is plain Python, testable without
a kernel) and a trial in a real kernel, called exactly as the server calls it (silently, then polled)."""

from __future__ import annotations

import asyncio
import functools
import json
import os
import time
from types import SimpleNamespace
from typing import Any

import pytest
from jupyter_client.asynchronous.client import AsyncKernelClient

from crane_jupyterlab.bench.kernels import run_cell
from crane_jupyterlab.kernel.trial import control as trial
from crane_jupyterlab.kernel.trial.sandbox import confine
from crane_jupyterlab.server import payload


@functools.cache
def os_sandbox() -> dict[str, Any]:
    """What this platform's OS sandbox offers (confine.probe, in a throwaway child)."""
    return confine.probe()


def run_here(source: str, namespace: dict[str, Any] | None = None, **options: Any) -> dict[str, Any]:
    """A trial of `source` forked from this process, on `namespace`; the outcome when it is there."""
    started = trial.start(source, options, namespace if namespace is not None else {})
    if started["state"] == "done":
        outcome: dict[str, Any] = started["outcome"]
        return outcome
    deadline = time.monotonic() + float(options.get("budget_s", 5.0)) + 30
    while time.monotonic() < deadline:
        state = trial.result(started["token"])
        if state["state"] == "done":
            outcome = state["outcome"]
            return outcome
        time.sleep(0.02)
    raise AssertionError(f"the trial of {source!r} left no outcome")


async def run_in_kernel(kc: AsyncKernelClient, source: str, **options: Any) -> dict[str, Any]:
    """`trial.start` then `trial.result` polls, through the payload as the server sends them; returns
    `{"start": <start's reply>, "outcome": <outcome>}`."""
    started = await payload.invoke(kc, "trial.start", f"{source!r}, {options!r}")
    if started["state"] == "done":
        return {"start": started, "outcome": started["outcome"]}
    deadline = time.monotonic() + float(options.get("budget_s", 5.0)) + 30
    while time.monotonic() < deadline:
        state = await payload.invoke(kc, "trial.result", repr(started["token"]))
        if state["state"] == "done":
            return {"start": started, "outcome": state["outcome"]}
        await asyncio.sleep(0.05)
    raise AssertionError(f"the trial of {source!r} left no outcome")


async def printed(kc: AsyncKernelClient, code: str) -> Any:
    """Run `code` (which prints one JSON value) as a cell; the value."""
    outputs: list[dict[str, Any]] = []
    await run_cell(kc, code, outputs=outputs)
    text = "".join(m["content"].get("text", "") for m in outputs if m["msg_type"] == "stream")
    return json.loads(text)


def children_of(pid: int) -> list[tuple[int, str]]:
    """(pid, state) of every process whose parent is `pid`, from the process table."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append((int(entry), fields[0].decode()))
    return found


def alive(pid: int) -> bool:
    """Whether `pid` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


# Fixtures: the folder's tests reach the helpers through these (`from conftest import` is ambiguous when
# every test folder has a conftest).


@pytest.fixture
def os_layer() -> dict[str, Any]:
    """Skips the test where the platform has no OS sandbox; else what it offers."""
    found = os_sandbox()
    if not found.get("available"):
        pytest.skip(f"no OS sandbox here: {found.get('reason')}")
    return found


@pytest.fixture
def bare_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh worker that imports nothing while it waits. By default it imports every library this
    process has loaded, as a kernel's would: here that is the whole suite's (torch, pandas, scikit-learn,
    ~950 modules, 3 s a worker on 2 cores), which the test's cells do not use; they import what they use
    themselves. test_worker checks the warm imports."""
    from crane_jupyterlab.kernel.trial import state

    monkeypatch.setattr(state, "loaded_modules", lambda: [])


@pytest.fixture
def kit() -> SimpleNamespace:
    """The helpers above: kit.run_here, kit.run_in_kernel, kit.printed, kit.children_of, kit.alive."""
    return SimpleNamespace(
        run_here=run_here,
        run_in_kernel=run_in_kernel,
        printed=printed,
        children_of=children_of,
        alive=alive,
    )
