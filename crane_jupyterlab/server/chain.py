"""The server's side of the chain: what the cells below an edited cell met, in the trial that ran
the edited cell first (`kernel/trial/chain.py` runs them there).

`answer_hedge` asks a crash below that a cut loop may have caused again: the same trial with nothing cut,
where the full run to that cell fits the chain's budget.

`entries` turns the trial's report into one `BelowOutcome` per cell the request sent, in its order: a step
that ran to its end with long loops cut is *shortened*; cells the trial never reported (it ran in a worker,
which runs no chain, or the edited cell did not run to its end) say why. `blame` then asks, for the one
cell that crashed, whether it crashes without the edit too: a trial of that cell alone on the kernel as it
is. Only a crash that needs the edit is the edit's. `unbound` marks the cells that read a name the edited
cell no longer binds: they run only on the kernel's old value.
"""

from __future__ import annotations

import ast
from collections.abc import Awaitable, Callable

from ..api import BelowCell
from ..kernel.cell import python_source
from ..models import BelowOutcome, TrialOutcome

# Runs one cell as a trial on the kernel as it is (no chain): the service's own trial.
TrialFn = Callable[[str], Awaitable[tuple[TrialOutcome, float]]]


# Runs the edited cell and its chain again with nothing cut, each within the given seconds.
FullTrialFn = Callable[[float], Awaitable[tuple[TrialOutcome, float]]]


async def answer_hedge(trial: TrialOutcome, again: FullTrialFn, budget_s: float) -> TrialOutcome:
    """A trial whose chain stopped at a crash a cut loop may have caused (`after_cut`, or the step's own
    cut) is asked again with nothing cut, in a fresh fork, where the full run to that cell, projected
    from what the quick one measured (the edited cell's loops and the steps'), fits the chain's budget.
    Its answer replaces the hedge when the full run reached that cell (a crash seen, or the cell ran);
    otherwise the quick trial stands."""
    from ..kernel.trial.chain import hedged
    from ..kernel.trial.top import answers, first_unfinished, full_need

    steps = [entry.model_dump() for entry in trial.below]
    stop = first_unfinished(steps)
    if trial.status != "finished" or trial.worker is not None or stop is None or not hedged(steps[stop]):
        return trial
    target = trial.model_dump(include={"status", "elapsed_ms", "quick"})
    need = full_need([target, *steps[: stop + 1]])
    if need is None or need > budget_s:
        return trial
    full, _ = await again(max(need * 2, 1.0))  # twice the projection: a loaded machine's margin
    reached = [entry.model_dump() for entry in full.below]
    return full if answers({"status": full.status}, reached, stop) else trial


def entries(below: list[BelowCell], trial: TrialOutcome | None) -> list[BelowOutcome]:
    """One outcome per cell sent, in order."""
    reported = {i: e for i, e in enumerate(trial.below)} if trial is not None else {}
    if trial is None:
        why = "no trial ran the edited cell"
    elif trial.status != "finished":
        why = "the edited cell did not run to its end in the trial"
    elif trial.worker is not None:
        why = "the trial ran in a worker, which runs the edited cell only"
    else:
        why = "the trial did not report this cell"
    out: list[BelowOutcome] = []
    for index, cell in enumerate(below):
        entry = reported.get(index)
        if entry is None:
            entry = BelowOutcome(status="not_reached" if trial is not None else "unavailable", reason=why)
        elif entry.status == "finished" and entry.quick is not None and entry.quick.cut:
            entry = entry.model_copy(update={"status": "shortened"})
        out.append(entry.model_copy(update={"cell_id": cell.cell_id}))
    return out


async def blame(
    below: list[BelowCell], found: list[BelowOutcome], trial: TrialFn, history: list[str]
) -> list[BelowOutcome]:
    """The crashed cell's `without_edit`: whether a trial of it alone, on the kernel as it is, crashes the
    same way (then the edit is not what breaks it). Asked only where the kernel as it is stands for the
    notebook without the edit: it ran every cell between the edited one and the crashed one, as they are
    now (else the cell alone meets state those cells would have made: no answer)."""
    ran = {text.rstrip() for text in history}
    for index, entry in enumerate(found):
        if entry.status != "crashed":
            continue
        if any(cell.source.rstrip() not in ran for cell in below[:index]):
            continue
        alone, _ = await trial(below[index].source)
        same = alone.status == "crashed" and alone.exception == entry.exception
        found[index] = entry.model_copy(update={"without_edit": same if alone.observed else None})
    return found


def unbound(previous: str | None, edited: str, below: list[BelowCell], found: list[BelowOutcome]) -> None:
    """Mark the cells below that read a name the edited cell bound when it last ran (`previous`) and no
    longer binds, with no cell between binding it: they run only on the kernel's old value (hidden
    state), and a run from the top would fail there."""
    if previous is None:
        return
    gone = _binds(previous) - _binds(edited)
    for index, cell in enumerate(below):
        if not gone:
            return
        text = python_source(cell.source)
        binds = _binds(text)
        read = (_reads(text) & gone) - binds  # a cell that binds the name itself has its own value
        if read:
            found[index] = found[index].model_copy(update={"unbound": sorted(read)})
        gone -= binds


def _binds(source: str) -> set[str]:
    """The global names a cell binds: assignments, imports, definitions, loop and `with` targets at its
    top level (not inside the functions it defines)."""
    tree = _parse(python_source(source))
    out: set[str] = set()
    todo: list[ast.AST] = list(tree.body) if tree is not None else []
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            out |= {(a.asname or a.name).split(".", 1)[0] for a in node.names if a.name != "*"}
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            out.add(node.id)
        if not isinstance(node, ast.Lambda):
            todo.extend(ast.iter_child_nodes(node))
    return out


def _reads(text: str) -> set[str]:
    tree = _parse(text)
    if tree is None:
        return set()
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _parse(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def elapsed_ms(found: list[BelowOutcome]) -> float:
    return round(sum(e.elapsed_ms or 0.0 for e in found), 2)
