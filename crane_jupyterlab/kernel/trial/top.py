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

from . import forecast
from .chain import hedged
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
            outcome = self._through_worker(modules, environment, self.opts)
            outcome = self._answer_hedge(outcome, modules, environment)
        except Exception as exc:  # the thread always leaves an outcome
            outcome = unavailable(f"the run from the top failed: {type(exc).__name__}: {exc}")
        if self.stopped == "cancelled":  # before the worker started, or while it ran
            outcome["cancelled"] = True
        self.outcome = outcome

    def _answer_hedge(
        self, outcome: dict[str, Any], modules: list[str] | None, environment: dict[str, Any]
    ) -> dict[str, Any]:
        """A quick run that stopped at a crash a cut loop may have caused is asked again: the notebook
        runs once more from the top with nothing cut, in a fresh worker, when the full run to that cell,
        projected from what the quick run measured, fits what is left of the budget. Its answer (a crash
        claimed, or a cell that runs) replaces the hedge; a full run that does not reach the cell leaves
        the hedge as it was. Either way the outcome says what a full run to that cell takes (`rerun`)."""
        steps = outcome.get("below") or []
        stop = first_unfinished(steps)
        if (
            stop is None
            or outcome.get("status") != "finished"
            or not self.opts.get("chain_quick", True)
            or not hedged(steps[stop])
        ):
            return outcome
        need = full_need(steps[: stop + 1])
        budget = float(self.opts.get("chain_s") or 0.0)
        # the second worker's start is not in the chain's clock: keep what the first one took aside
        left = budget - (time.monotonic() - self.started) - 2 * float(outcome.get("warm_ms") or 0) / 1000
        rerun: dict[str, Any] = {"cell": stop, "need_s": need, "left_s": round(max(left, 0.0), 2)}
        if need is None or need > left or self.stopped is not None:
            rerun["ran"] = False
            return {**outcome, "rerun": rerun}
        full = self._through_worker(
            modules, environment, {**self.opts, "chain_quick": False, "chain_s": left}
        )
        again = full.get("below") or []
        rerun["ran"] = True
        rerun["elapsed_ms"] = full.get("elapsed_ms")
        answered = answers(full, again, stop)
        rerun["answered"] = answered
        if not answered:  # it ran out of time (or was stopped) before the hedged cell ended
            return {**outcome, "rerun": rerun}
        return {**full, "rerun": rerun, "warm_ms": outcome.get("warm_ms")}

    def _through_worker(
        self, modules: list[str] | None, environment: dict[str, Any], opts: dict[str, Any]
    ) -> dict[str, Any]:
        previous = os.getcwd()
        try:  # the worker starts in the notebook's directory (a Spare takes the current one)
            os.chdir(environment["cwd"])
            spare = Spare(opts, self.scratch(), self.python, modules, environment["sys_path"])
        finally:
            with contextlib.suppress(OSError):
                os.chdir(previous)
        warm = spare.ready(SETUP_S)
        if warm is None or self.stopped is not None:
            spare.discard()
            return unavailable(self.stopped or "the worker did not start (its interpreter failed to warm up)")
        trial = Trial(opts, spare.scratch)
        trial.setup_s = SETUP_S
        trial.pid, trial.reader, trial.control = spare.pid, spare.report, spare.control
        trial.memory = spare.memory
        trial.detect_deadlock = False
        trial.warm_kb = int(warm.get("warm_kb") or 0)
        trial.baseline_kb = forecast.resident_kb(spare.pid) or trial.warm_kb
        spare.memory = spare.report = -1  # the watching thread closes them now
        job = {"cells": self.cells, "opts": opts, "scratch": spare.scratch, "modules": [], **environment}
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


def first_unfinished(steps: list[dict[str, Any]]) -> int | None:
    """The index of the first cell that did not run to its end (the cells after it are not reached)."""
    return next(
        (i for i, step in enumerate(steps) if step.get("status") not in ("finished", "skipped")), None
    )


def answers(full: dict[str, Any], steps: list[dict[str, Any]], stop: int) -> bool:
    """Whether a run with nothing cut (`full`, its cells' `steps`) answers a hedge at cell `stop`: the
    cells to it all ran, or the first that did not is a crash (the hedged one, or an earlier one a whole
    loop now meets); not where it ran out of time or was stopped first."""
    ended = first_unfinished(steps)
    return full.get("status") == "finished" and (
        (ended is None and len(steps) > stop)
        or (ended is not None and (ended > stop or steps[ended].get("status") == "crashed"))
    )


def full_need(steps: list[dict[str, Any]]) -> float | None:
    """Seconds a full run of these cells takes, projected from a quick run of them: each cell's time,
    plus what its cut loops would add run whole (their measured rate times their length). None when a
    cut loop's length or time is unknown (a `while` loop, a sampled library call)."""
    total = 0.0
    for step in steps:
        total += float(step.get("elapsed_ms") or 0) / 1000
        for loop in (step.get("quick") or {}).get("loops") or []:
            if not loop.get("cut"):
                continue
            full = loop.get("full_s")
            if full is None:
                return None
            total += max(float(full) - float(loop.get("seconds") or 0.0), 0.0)
    return round(total, 2)
