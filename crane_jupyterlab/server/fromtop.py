"""From the top, the server's side: `POST /crane/notebook` starts a run of the notebook's code
cells in a fresh sandboxed worker of the kernel's Python (`kernel/trial/top.py`), `GET` reads it, `DELETE`
cancels it.

One run per kernel at a time. A task of the server starts the run through the kernel's payload and polls
its progress with short silent requests through the kernel pool, so user code always comes first (a poll
that finds the kernel busy waits for the next). The kernel is never touched otherwise: the run's worker
has none of its state, and ends when the kernel does. When the run is done, the first crash it observed is
checked against the live kernel: a `NameError` for a name the kernel does hold is hidden state (the kernel
has it from a cell that no longer defines it), said on that cell.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any

from ..api import BelowCell, NotebookCell, NotebookRequest, NotebookRun
from ..models import BelowOutcome, Forecast
from .errors import KernelBusy, KernelNotFound

log = logging.getLogger(__name__)

# Pauses between polls of a running notebook: its progress bar moves at this pace.
POLL_S = 0.3
# Added to the run's budget (the worker's start, importing libraries) before the server gives up.
GRACE_S = 90.0
# Runs kept for GET after they end (the newest).
KEEP = 64

# invoke(kernel_id, target, arguments): one silent payload call on that kernel, through the pool.
Invoke = Callable[[str, str, str], Awaitable[dict[str, Any]]]
# names(kernel_id, source): the names `source` reads that the live kernel lacks (the probe's "undefined").
Undefined = Callable[[str, str], Awaitable[list[str]]]

_NAME_ERROR = re.compile(r"name '([A-Za-z_][A-Za-z0-9_]*)' is not defined")


class Conflict(Exception):
    """A run for this kernel is in progress."""

    def __init__(self, run_id: str) -> None:
        super().__init__(run_id)
        self.run_id = run_id


class Runs:
    """The runs from the top of one server."""

    def __init__(
        self, invoke: Invoke, undefined: Undefined, budget_s: float, options: dict[str, Any]
    ) -> None:
        self.invoke = invoke
        self.undefined = undefined
        self.budget_s = budget_s
        self.options = options  # the trial options the worker takes (memory, private writes, ...)
        self.runs: dict[str, NotebookRun] = {}
        self.tokens: dict[str, str] = {}
        self.tasks: dict[str, asyncio.Task[None]] = {}

    def start(self, request: NotebookRequest) -> NotebookRun:
        for run in self.runs.values():
            if run.kernel_id == request.kernel_id and run.state == "running":
                raise Conflict(run.id)
        run_id = os.urandom(8).hex()
        run = NotebookRun(id=run_id, kernel_id=request.kernel_id, state="running", total=len(request.cells))
        self.runs[run_id] = run
        self.tasks[run_id] = asyncio.ensure_future(self._run(run_id, request))
        self._forget_old()
        return run

    def get(self, run_id: str) -> NotebookRun | None:
        return self.runs.get(run_id)

    async def cancel(self, run_id: str) -> NotebookRun | None:
        run = self.runs.get(run_id)
        if run is None or run.state != "running":
            return run
        token = self.tokens.get(run_id)
        if token is not None:
            try:
                await self.invoke(run.kernel_id, "trial.top_cancel", repr(token))
            except Exception:
                log.debug("crane: cancelling a run from the top failed", exc_info=True)
        task = self.tasks.get(run_id)
        if task is not None:
            task.cancel()
        self.runs[run_id] = run.model_copy(update={"state": "cancelled", "message": "cancelled"})
        return self.runs[run_id]

    async def close(self) -> None:
        for run_id in list(self.tasks):
            await self.cancel(run_id)

    def _forget_old(self) -> None:
        ended = [i for i, r in self.runs.items() if r.state != "running"]
        for run_id in ended[: max(0, len(self.runs) - KEEP)]:
            del self.runs[run_id]
            self.tasks.pop(run_id, None)
            self.tokens.pop(run_id, None)

    def _update(self, run_id: str, **fields: Any) -> None:
        run = self.runs.get(run_id)
        if run is not None and run.state == "running":
            self.runs[run_id] = run.model_copy(update=fields)

    async def _run(self, run_id: str, request: NotebookRequest) -> None:
        budget = request.settings.budget_s or self.budget_s
        options = {**self.options, "chain_s": budget, "chain_quick": not request.settings.full}
        cells = [c.model_dump() for c in request.cells]
        started = time.monotonic()
        try:
            reply = await self._call(request.kernel_id, "trial.top_start", f"{cells!r}, {options!r}", started)
            if reply.get("state") == "done":
                why = (reply.get("outcome") or {}).get("reason") or "the run could not start"
                self._update(run_id, state="error", message=str(why))
                return
            token = str(reply.get("token"))
            self.tokens[run_id] = token
            deadline = started + budget + GRACE_S
            while time.monotonic() < deadline:
                await asyncio.sleep(POLL_S)
                try:
                    state = await self.invoke(request.kernel_id, "trial.top_result", repr(token))
                except KernelBusy:
                    continue  # the user's code first; the progress bar waits
                if state.get("state") == "unknown":
                    self._update(
                        run_id, state="error", message="the kernel restarted or a newer run replaced it"
                    )
                    return
                elapsed = round((time.monotonic() - started) * 1000, 1)
                self._update(run_id, done=int(state.get("done") or 0), running=state.get("running"),
                             elapsed_ms=elapsed)  # fmt: skip
                if state.get("state") == "done":
                    await self._finish(run_id, request, state.get("outcome") or {}, elapsed)
                    return
            await self.invoke(request.kernel_id, "trial.top_cancel", repr(token))
            self._update(run_id, state="error", message=f"the run did not end within {budget + GRACE_S:g} s")
        except KernelNotFound:
            self._update(
                run_id, state="error", message="the kernel died or is restarting: the run ended with it"
            )
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.warning("crane: a run from the top failed", exc_info=True)
            self._update(run_id, state="error", message=f"the run failed: {type(exc).__name__}: {exc}")

    async def _call(self, kernel_id: str, target: str, arguments: str, started: float) -> dict[str, Any]:
        """A payload call, retried while the kernel runs user code (a run starts when it is idle)."""
        while True:
            try:
                return await self.invoke(kernel_id, target, arguments)
            except KernelBusy:
                if time.monotonic() - started > GRACE_S:
                    raise
                await asyncio.sleep(POLL_S)

    async def _finish(
        self, run_id: str, request: NotebookRequest, outcome: dict[str, Any], ms: float
    ) -> None:
        if outcome.get("cancelled"):
            self._update(run_id, state="cancelled", message="cancelled", elapsed_ms=ms)
            return
        if outcome.get("status") != "finished":  # the worker did not start, or its sandbox failed
            why = outcome.get("reason") or outcome.get("status") or "no outcome"
            self._update(run_id, state="error", message=str(why), elapsed_ms=ms)
            return
        entries = [BelowOutcome.model_validate(e) for e in outcome.get("below") or []]
        cells = cells_of(request.cells, entries)
        first = next((i for i, c in enumerate(cells) if c.status == "crashed" and not c.after_cut), None)
        if first is not None and cells[first].exception == "NameError":
            cells[first] = await self._hidden(request.kernel_id, cells[first])
        state = "cancelled" if outcome.get("cancelled") else "done"
        mode = "full run" if request.settings.full else "quick mode (long loops and library calls cut)"
        what = f"a fresh worker of the kernel's Python, {outcome.get('sandbox')}, {mode}" + _rerun_words(
            outcome.get("rerun")
        )
        self._update(run_id, state=state, cells=cells, done=sum(c.status != "not_reached" for c in cells),
                     running=None, first_crash=cells[first] if first is not None else None,
                     first_crash_index=first, elapsed_ms=ms, message=what,
                     forecast=_forecast(outcome.get("forecast")))  # fmt: skip

    async def _hidden(self, kernel_id: str, cell: NotebookCell) -> NotebookCell:
        found = _NAME_ERROR.search(cell.message or "")
        if found is None:
            return cell
        try:
            lacks = await self.undefined(kernel_id, found.group(1))
        except Exception:
            return cell  # the kernel is busy or gone: no word on hidden state rather than a wrong one
        return cell.model_copy(update={"hidden": found.group(1) not in lacks})


def _forecast(found: Any) -> Forecast | None:
    """The run's forecast as the kernel sent it; None where it is missing or malformed (never an error)."""
    try:
        return Forecast.model_validate(found) if isinstance(found, dict) else None
    except ValueError:
        return None


def _rerun_words(rerun: Any) -> str:
    """What became of a crash the quick run saw after a cut loop (kernel/trial/top.py asks it again)."""
    if not isinstance(rerun, dict):
        return ""
    where = f"cell {int(rerun.get('cell') or 0) + 1} of the code cells"
    if rerun.get("answered"):
        return f"; a crash at {where} that a cut loop may have caused was run again with nothing cut"
    need = rerun.get("need_s")
    took = f"about {need:.0f} s" if isinstance(need, (int, float)) else "an unknown time"
    claim = "run the notebook in full to claim it"
    if rerun.get("ran"):
        return f"; a full run to {where} did not end within the budget: {claim}"
    return f"; a full run to {where} takes {took}, more than the budget left: {claim}"


_WORDS = (
    ("the chain ran past its", "the run ran past its"),
    ("an earlier cell below did not run to its end", "an earlier cell did not run to its end"),
    ("the chain ended at an earlier cell", "the run ended at an earlier cell"),
    ("the chain needed more than", "the run needed more than"),
)


def cells_of(sent: list[BelowCell], entries: list[BelowOutcome]) -> list[NotebookCell]:
    """The chain's entries in the words of a run from the top."""
    out: list[NotebookCell] = []
    for index, cell in enumerate(sent):
        entry = entries[index] if index < len(entries) else None
        if entry is None:
            out.append(NotebookCell(cell_id=cell.cell_id, status="not_reached", reason="not reported"))
            continue
        shortened = bool(entry.quick is not None and entry.quick.cut)
        status: Any = entry.status
        if status == "finished":
            status = "shortened" if shortened else "ran"
        elif status == "skipped":  # an empty cell (a fresh worker skips nothing else): it ran
            status = "ran"
        reason = entry.reason
        for chain_words, ours in _WORDS:  # the chain's words, as a run from the top says them
            reason = reason.replace(chain_words, ours) if reason else reason
        out.append(NotebookCell(
            cell_id=cell.cell_id, status=status, exception=entry.exception, message=entry.message,
            line=entry.line, elapsed_ms=entry.elapsed_ms, shortened=shortened, quick=entry.quick,
            after_cut=entry.status == "crashed" and not entry.observed, reason=reason,
            forecast=entry.forecast, installs=entry.installs,
        ))  # fmt: skip
    return out
