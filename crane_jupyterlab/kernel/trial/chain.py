"""The cells below an edited cell, run after it in the same trial process (issue 36; child side).

A notebook fails as a sequence: an edit to an early cell (a column renamed, a feature dropped) breaks a
cell further down. Once the edited cell has run to its end in the trial, the same sandboxed process goes on
with the code cells below it, in notebook order, each as its own step, as the user would run them: on
the state the edited cell and the steps before left, quick mode on every step (long loops cut, long
library calls sampled, Keras fits cut; `quick.py`). A step is reported on the pipe as it ends
(`{"phase": "below", "index", "status", ...}`), preceded by `{"phase": "step", "index"}` so the kernel's
side knows which cell was running when the chain's budget ran out (`watch.py`). The chain stops at the
first step that does not run to its end; what follows is not reached.

A cell may be skipped only where skipping cannot change what later cells meet: it reads nothing the chain
changed, and the kernel already ran that same text (its effects are in the fork's copy of the state).
What a step changed is every name it reads or binds (a call may change its arguments in place), less the
modules: a conservative reading that skips little and never wrongly. Stdlib only.
"""

from __future__ import annotations

import ast
import json
import os
import sys
import time
from typing import Any

from ..cell import runnable
from . import execute, quick
from .outcome import ms

# Statuses after which the chain goes on: a step that did not run to its end leaves a state the real run
# would not have (a crash's half-done effects, a refused write).
GOES_ON = ("finished", "skipped")


def names(code_text: str) -> tuple[set[str], set[str]]:
    """(reads, touches) of a cell's Python: the names it reads anywhere (functions it defines included),
    and every name it reads or binds. Empty sets for text that does not parse."""
    try:
        tree = ast.parse(code_text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set(), set()
    reads: set[str] = set()
    touches: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            touches.add(node.id)
            if isinstance(node.ctx, ast.Load):
                reads.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            touches.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            touches |= {(a.asname or a.name).split(".", 1)[0] for a in node.names if a.name != "*"}
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            reads.add(node.target.id)  # `total += x` reads total
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            touches |= set(node.names)
    return reads, touches


def _modules(found: set[str], ns: dict[str, Any]) -> set[str]:
    module = type(sys)
    return {n for n in found if isinstance(ns.get(n), module)}


def _ran_before(source: str, ns: dict[str, Any]) -> bool:
    """Whether the kernel ran this same text (IPython's input history, `In`)."""
    history = ns.get("In")
    if not isinstance(history, list):
        return False
    text = source.rstrip()
    return any(isinstance(entry, str) and entry.rstrip() == text for entry in history)


def _send(fd: int, message: dict[str, Any]) -> None:
    data = (json.dumps(message, default=str) + "\n").encode()
    while data:
        data = data[os.write(fd, data) :]


def run(
    target: str,
    below: list[dict[str, Any]],
    ns: dict[str, Any],
    shell: Any,
    guard: Any,
    report: dict[str, Any],
    opts: dict[str, Any],
    writer: int,
    cut: bool = False,
) -> None:  # pragma: no cover - runs in the trial's child (tests/trial/test_chain.py runs it there)
    """Run the cells below `target` (which ran to its end) on the child's state, reporting each step.
    `cut`: the target's run was shortened (a loop cut): what the steps then meet may depend on it."""
    changed = _touched(runnable(target, shell), ns)
    started = time.monotonic()
    budget = float(opts.get("chain_s") or 10.0)
    for index, cell in enumerate(below):
        source = cell.get("source") if isinstance(cell, dict) else None
        if not isinstance(source, str):
            _send(writer, {"phase": "below", "index": index, "status": "unavailable",
                           "reason": "the cell's source was not text"})  # fmt: skip
            return
        code_text = runnable(source, shell)
        reads, _ = names(code_text)
        meets = sorted(reads & changed)
        if not meets and _ran_before(source, ns):
            _send(writer, {"phase": "below", "index": index, "status": "skipped", "reads": [],
                           "reason": "it reads nothing the chain changed, and the kernel already ran this "
                           "same text: its effects are in the copy"})  # fmt: skip
            continue
        _send(writer, {"phase": "step", "index": index})
        left = budget - (time.monotonic() - started)
        refused = len(guard.refusals)
        # quick mode on every step, unless a full run was asked for (crane-check --full); a step's loops
        # are cut to what a single trial's budget allows, so no one cell spends the chain's
        per_cell = min(left, float(opts.get("budget_s") or 5.0)) if opts.get("chain_quick", True) else left
        step = {**opts, "quick": bool(opts.get("chain_quick", True)), "budget_s": max(per_cell, 0.05)}
        done = execute.run(source, ns, shell, guard, report, quick.preparer(step, writer))
        done.pop("refused", None)
        if len(guard.refusals) > refused:
            raised = (
                f" (the cell then raised {done.get('exception')})" if done.get("status") == "crashed" else ""
            )
            done = {"status": "blocked", "elapsed_ms": done.get("elapsed_ms"),
                    "reason": f"the sandbox refused to {guard.refusals[refused]}{raised}"}  # fmt: skip
        if cut:  # an earlier step was shortened: this one ran on what a cut loop left
            done["after_cut"] = True
        _send(writer, {"phase": "below", "index": index, "reads": meets, **done})
        if done.get("status") not in GOES_ON:
            return
        cut = cut or bool((done.get("quick") or {}).get("cut"))
        changed |= _touched(code_text, ns)
    _send(writer, {"phase": "chain_end", "elapsed_ms": ms(time.monotonic() - started)})


def _touched(code_text: str, ns: dict[str, Any]) -> set[str]:
    _, touches = names(code_text)
    return touches - _modules(touches, ns)
