"""From the top: will this notebook run in a fresh kernel? Its code cells, in order, in a fresh
sandboxed worker, while the kernel stays as it is.

A kernel remembers cells that were deleted, edited after they ran or run out of order; a notebook that
works there may fail for the next person. `TopRun` starts a fresh interpreter of the kernel's own Python
(`worker.Spare`: its libraries imported while it starts, nothing of the kernel's state), hands it the
kernel's working directory, `sys.path` and environment and the cells, and watches it as any trial
(`watch.Trial`): the worker enters the trial's sandbox (the private copy of writes included) and runs the
cells as a chain with an empty target (`spawned.py` → `chain.run`): quick mode on every cell unless asked
for a full run, the first cell that does not run to its end stops it, one wall-clock budget for all.
Its progress (cells done, the cell running) is read while it runs. The kernel only starts the process
and answers the sandbox's notifications on a thread; a run outlives no kernel (the worker's lifeline).
Used in the kernel (`control.top_start`) and, for `crane-check`, in a plain process on a given Python.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from typing import Any

from .outcome import ms, unavailable
from .watch import Trial
from .worker import SETUP_S, Spare


class TopRun:
    """One run of a notebook's cells from the top, in a worker of its own."""

    def __init__(
        self, cells: list[dict[str, Any]], opts: dict[str, Any], scratch: Any, python: str | None = None
    ) -> None:
        self.cells = cells
        self.opts = {**opts, "below": cells}
        self.scratch = scratch  # makes a new scratch directory
        self.python = python
        self.token = os.urandom(6).hex()
        self.started = time.monotonic()
        self.outcome: dict[str, Any] | None = None
        self.trial: Trial | None = None
        self.stopped: str | None = None

    def start(
        self, modules: list[str] | None = None, cwd: str | None = None, sys_path: list[str] | None = None
    ) -> None:
        """Start the worker (returns at once; a thread of this process does the rest). By default it
        takes this process's working directory, import path and libraries (a kernel's)."""
        import _thread

        path = list(sys.path) if sys_path is None else sys_path
        environment = {"cwd": cwd or os.getcwd(), "sys_path": path, "environ": dict(os.environ)}
        _thread.start_new_thread(self._run, (modules, environment))

    def stop(self, why: str) -> None:
        if self.outcome is None and self.stopped is None:
            self.stopped = why
            if self.trial is not None:
                self.trial.stop(why)

    def progress(self) -> dict[str, Any]:
        """Cells done of the total, the one running, the time so far."""
        trial = self.trial
        done = len(trial.steps) if trial is not None else 0
        running = trial.running_step if trial is not None else None
        return {"done": done, "total": len(self.cells), "running": running,
                "elapsed_ms": ms(time.monotonic() - self.started)}  # fmt: skip

    def _run(self, modules: list[str] | None, environment: dict[str, Any]) -> None:
        try:
            outcome = self._through_worker(modules, environment)
        except Exception as exc:  # the thread always leaves an outcome
            outcome = unavailable(f"the run from the top failed: {type(exc).__name__}: {exc}")
        if self.stopped == "cancelled":  # before the worker started, or while it ran
            outcome["cancelled"] = True
        self.outcome = outcome

    def _through_worker(self, modules: list[str] | None, environment: dict[str, Any]) -> dict[str, Any]:
        previous = os.getcwd()
        try:  # the worker starts in the notebook's directory (a Spare takes the current one)
            os.chdir(environment["cwd"])
            spare = Spare(self.opts, self.scratch(), self.python, modules, environment["sys_path"])
        finally:
            with contextlib.suppress(OSError):
                os.chdir(previous)
        warm = spare.ready(SETUP_S)
        if warm is None or self.stopped is not None:
            spare.discard()
            return unavailable(self.stopped or "the worker did not start (its interpreter failed to warm up)")
        trial = Trial(self.opts, spare.scratch)
        trial.setup_s = SETUP_S
        trial.pid, trial.reader, trial.control = spare.pid, spare.report, spare.control
        trial.memory = spare.memory
        trial.detect_deadlock = False
        trial.warm_kb = int(warm.get("warm_kb") or 0)
        spare.memory = spare.report = -1  # the watching thread closes them now
        job = {"cells": self.cells, "opts": self.opts, "scratch": spare.scratch, "modules": [], **environment}
        spare.control.sendall(json.dumps(job).encode() + b"\n")
        trial.forked = time.monotonic()
        self.trial = trial
        if self.stopped is not None:
            trial.stop(self.stopped)
        trial.watch()
        spare.discard()
        outcome = dict(trial.outcome or unavailable("the worker left no outcome"))
        outcome["warm_ms"] = warm.get("warm_ms")
        return outcome
