"""The cells below an edited cell, run after it in the same trial process (child side).

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
import re
import sys
import time
from typing import Any

from ..cell import runnable
from . import execute, kerasfit, quick
from .outcome import OS_REFUSED, ms

# Statuses after which the chain goes on: a step that did not run to its end leaves a state the real run
# would not have (a crash's half-done effects, a refused write).
GOES_ON = ("finished", "skipped")
# A step that could not run: the run goes on past it where a later cell reads nothing it would have made.
COULD_NOT_RUN = ("blocked", "unavailable")
_HEDGED = "a cell whose crash a cut loop may have caused"
_NOT_RUN = "a cell that could not run here"
# Raised by what a cell that could not run may have made: a file (`!wget -O data.csv`, `to_csv`) or a
# package (`!pip install ... && ...`).
_MADE_BY_UNRUN = ("FileNotFoundError", "NotADirectoryError", "IsADirectoryError", "ModuleNotFoundError",
                  "ImportError", "EmptyDataError", "OSError")  # fmt: skip


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


def _has_code(code_text: str) -> bool:
    try:
        return bool(ast.parse(code_text).body)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return True  # it runs, and the run says what is wrong with it


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
    fresh: bool = False,
) -> None:  # pragma: no cover - runs in the trial's child (tests/trial/test_trial_chain.py runs it there)
    """Run the cells below `target` (which ran to its end) on the child's state, reporting each step.
    `cut`: the target's run was shortened (a loop cut): what the steps then meet may depend on it.
    `fresh`: a fresh interpreter (the run from the top), whose history is not the kernel's: nothing is
    skipped as already run."""
    target_code = runnable(target, shell)
    changed = _touched(target_code, ns)
    above = Above(target_code, cut)
    started = time.monotonic()
    budget = float(opts.get("chain_s") or 10.0)
    # Names a hedged crash, or a cell that could not run, may have left otherwise: what left them, in words.
    held: dict[str, str] = {}
    unrun: list[int] = []  # the steps that could not run (blocked, unavailable), whose files are unknown too
    for index, cell in enumerate(below):
        source = cell.get("source") if isinstance(cell, dict) else None
        if not isinstance(source, str):
            _send(writer, {"phase": "below", "index": index, "status": "unavailable",
                           "reason": "the cell's source was not text"})  # fmt: skip
            return
        code_text = runnable(source, shell)
        reads, touches = names(code_text)
        meets = sorted(reads & changed)
        if not _has_code(code_text):
            _send(writer, {"phase": "below", "index": index, "status": "skipped", "reads": [],
                           "reason": "nothing to run (empty, or only comments)"})  # fmt: skip
            continue
        if held:
            waits = _waits(code_text, reads, held, ns)
            if waits is not None:  # it may meet what the hedged crash left: not run, and the run goes on
                met = sorted(reads & set(held))
                unknown = held[met[0]] if met else (_HEDGED if _HEDGED in held.values() else _NOT_RUN)
                held.update(dict.fromkeys(_bound(touches, ns), unknown))
                _send(writer, {"phase": "below", "index": index, "status": "unavailable", "goes_on": True,
                               "reads": [], "reason": waits})  # fmt: skip
                continue
        if not meets and not fresh and _ran_before(source, ns):
            _send(writer, {"phase": "below", "index": index, "status": "skipped", "reads": [],
                           "reason": "it reads nothing the chain changed, and the kernel already ran this "
                           "same text: its effects are in the copy"})  # fmt: skip
            continue
        _send(writer, {"phase": "step", "index": index})
        left = budget - (time.monotonic() - started)
        refused = len(guard.refusals)
        # quick mode on every step, unless a full run was asked for (crane-check --full)
        quick_mode = bool(opts.get("chain_quick", True))
        per_cell = (
            allowance(left, len(below) - index, float(opts.get("budget_s") or 5.0)) if quick_mode else left
        )
        step = {**opts, "quick": quick_mode, "budget_s": max(per_cell, 0.05)}
        guard.os_refused()  # what the OS layer refused before this step is not this step's
        done = execute.run(source, ns, shell, guard, report, quick.preparer(step, writer))
        done.pop("refused", None)
        os_refused = guard.os_refused()  # a program the cell ran, or C code (the kernel's side names it)
        if len(guard.refusals) > refused or os_refused:
            raised = (
                f" (the cell then raised {done.get('exception')})" if done.get("status") == "crashed" else ""
            )
            what = guard.refusals[refused] if len(guard.refusals) > refused else OS_REFUSED
            done = {"status": "blocked", "elapsed_ms": done.get("elapsed_ms"),
                    "reason": f"the sandbox refused to {what}{raised}"}  # fmt: skip
        if cut and not above.independent(done, reads, ns):
            done["after_cut"] = True  # an earlier step was shortened: this crash may come from what it left
        if unrun and _may_need_unrun(done):
            # a missing file or package that a cell which could not run may have made: not claimed
            done = {"status": "unavailable", "elapsed_ms": done.get("elapsed_ms"), "goes_on": True,
                    "reason": f"it raised {done.get('exception')}, about a file or package that a cell above "
                              "which could not run here may have made"}  # fmt: skip
            held.update(dict.fromkeys(_bound(touches, ns), _NOT_RUN))
        elif fresh and hedged(done):
            # a crash a cut loop above may have caused, in a run from the top: the cells that read
            # nothing it touched go on (the others wait for an answer), so the rest is still checked
            done["goes_on"] = True
            held.update(dict.fromkeys(_bound(touches, ns), _HEDGED))
        elif done.get("status") in COULD_NOT_RUN:
            # blocked by the sandbox or beyond the trial: what it binds is unknown, and the cells that
            # read none of it still run (the first crash is claimed only on what no such cell made)
            done["goes_on"] = True
            held.update(dict.fromkeys(_bound(touches, ns), _NOT_RUN))
            unrun.append(index)
        _send(writer, {"phase": "below", "index": index, "reads": meets, **done})
        if done.get("status") not in GOES_ON and not done.get("goes_on"):
            return
        if done.get("goes_on"):
            above.ran(code_text, reads, touches, ns, True)  # what it touched is as a cut loop's
            cut = True
            continue
        step_cut = bool((done.get("quick") or {}).get("cut"))
        cut = cut or step_cut
        above.ran(code_text, reads, touches, ns, step_cut)
        changed |= touches - _modules(touches, ns)
    _send(writer, {"phase": "chain_end", "elapsed_ms": ms(time.monotonic() - started)})


def hedged(step: dict[str, Any]) -> bool:
    """A crash that may come from a cut loop (an earlier cell's, or its own): seen, not claimed."""
    quick = step.get("quick") or {}
    crashed = step.get("status") == "crashed"
    own = bool(quick.get("cut")) and quick.get("crash") != "certain"
    return crashed and (bool(step.get("after_cut")) or own)


def _bound(touches: set[str], ns: dict[str, Any]) -> set[str]:
    """What a cell that did not run whole may have left otherwise: the names it touches, less modules,
    the builtins it only reads (`print`, `len`: nothing the notebook binds) and the functions and classes
    of libraries it calls (`get_ipython().system(...)`, `np.ones`: calling one leaves it as it was)."""
    import builtins

    kept = {n for n in touches - _modules(touches, ns) if n in ns or not hasattr(builtins, n)}
    return {n for n in kept if not _library_callable(ns.get(n))}


def _library_callable(value: Any) -> bool:
    import types

    kinds = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, type)
    return value is not None and isinstance(value, kinds) and not _notebooks(value)


def _may_need_unrun(step: dict[str, Any]) -> bool:
    return step.get("status") == "crashed" and step.get("exception") in _MADE_BY_UNRUN


def _waits(code_text: str, reads: set[str], held: dict[str, str], ns: dict[str, Any]) -> str | None:
    """Why a cell after a hedged crash, or after a cell that could not run, is not run (None: it reads
    nothing that cell may have left): a name it touched, a function or object of the notebook's own (its
    code may read any global), or a name bound by text the parser cannot see."""
    met = sorted(reads & set(held))
    if met:
        shown = ", ".join(met[:3]) + (", ..." if len(met) > 3 else "")
        return f"it reads {shown}, which {held[met[0]]} left unknown"
    what = _HEDGED if _HEDGED in held.values() else _NOT_RUN
    if _DYNAMIC.search(code_text):
        return f"it may bind or read names the parser cannot see, after {what}"
    if any(_notebooks(ns.get(n)) for n in reads):
        return f"it calls the notebook's own code, which may read what {what} left"
    return None


def allowance(left: float, cells: int, cell_s: float) -> float:
    """The seconds a step's loops may take before they are cut: its share of what the run has left,
    shared evenly with the `cells` still to run (this one included), and never less than a single
    trial's budget `cell_s` while that much is left. A notebook whose cells fit in its budget runs as a
    full run would; a loop is cut only where running it whole would leave the cells after it too little
    (the budget, not the machine's speed against a fixed constant, decides)."""
    share = left / max(cells, 1)
    return min(left, max(cell_s, share))


def _touched(code_text: str, ns: dict[str, Any]) -> set[str]:
    _, touches = names(code_text)
    return touches - _modules(touches, ns)


# Crashes a cut loop above cannot cause: a module that is not installed; a name no cell above binds at all.
NAME_ERROR = re.compile(r"name '([^']+)' is not defined")
# Text by which a cell binds names the parser cannot see: `exec`, a star import, `globals()`, a cell magic
# (`%%time`, `%%capture out`), a line magic other than those known to bind nothing (`%run`, `%store -r`).
_DYNAMIC = re.compile(
    r"\bexec\(|\bglobals\(\)|\bvars\(\)|import \*|__dict__|run_cell_magic\("
    r"|run_line_magic\('(?!(matplotlib|load_ext|autoreload|config|pip|conda|env|who|whos)')"
)


class Above:
    """What the steps above a step did, to tell whether its crash may come from a loop cut above.

    A step that runs after a cut step is marked `after_cut` (the crash is seen, not claimed) unless its
    crash cannot depend on the cut: a missing module; a key a Keras History lacks (kerasfit.py); a
    NameError for a name no cell above binds anywhere (and none binds names dynamically); or a crash, not
    an OS error (a cut loop may not have written a file), in a step that reads no name a cut step touched
    or derived from one (taint over the names, step by step), no function, class or object of the
    notebook's own (their code reads globals), and no object that is, or holds, an object bound to a
    tainted name."""

    def __init__(self, target: str, cut: bool) -> None:
        self.bound: set[str] = set()
        self.dynamic = False
        self.tainted: set[str] = set()
        self.ran(target, *names(target), {}, cut)

    def ran(self, code_text: str, reads: set[str], touches: set[str], ns: dict[str, Any], cut: bool) -> None:
        """A step ran (`reads`, `touches`: `names` of its code); `cut`: one of its loops was cut."""
        self.bound |= touches
        self.dynamic = self.dynamic or bool(_DYNAMIC.search(code_text))
        if cut or reads & self.tainted:
            self.tainted |= touches - _modules(touches, ns)

    def independent(self, done: dict[str, Any], reads: set[str], ns: dict[str, Any]) -> bool:
        """Whether the step's crash (`done`; `reads`: the names its code reads) cannot come from a cut."""
        try:
            return self._independent(done, reads, ns)
        except Exception:  # a hostile object's attribute: the crash stays hedged
            return False

    def _independent(self, done: dict[str, Any], reads: set[str], ns: dict[str, Any]) -> bool:
        if done.get("status") != "crashed":
            return False
        exception = str(done.get("exception") or "")
        if exception == "ModuleNotFoundError":
            return True
        if exception == "NameError":
            found = NAME_ERROR.search(str(done.get("message") or ""))
            if found is not None and not self.dynamic and found.group(1) not in self.bound:
                return True
        frames = done.get("frames") or [{}]
        line = str(frames[-1].get("text") or "") if isinstance(frames[-1], dict) else ""
        if exception == "KeyError" and kerasfit.fixed_key(str(done.get("message") or ""), line, ns):
            return True  # a Keras History's keys: the cut left fewer epochs, the same keys
        if self.dynamic or exception in _OS_ERRORS:
            return False
        if reads & self.tainted or any(_notebooks(ns.get(n)) for n in reads):
            return False
        return not (_held(reads, ns, attributes=True) & _held(self.tainted, ns))


_OS_ERRORS = {"OSError", "FileNotFoundError", "PermissionError", "IsADirectoryError", "NotADirectoryError",
              "FileExistsError", "EOFError", "UnpicklingError", "EmptyDataError"}  # fmt: skip


def _notebooks(value: Any) -> bool:
    """A function, class or object of the notebook's own (code that may read any global)."""
    if value is None:
        return False
    kind = value if isinstance(value, type) else type(value)
    if getattr(kind, "__module__", "") == "__main__":
        return True
    function = getattr(value, "__func__", value)
    return getattr(function, "__module__", "") == "__main__" and callable(function)


def _held(found: set[str], ns: dict[str, Any], attributes: bool = False) -> set[int]:
    """Ids of the objects bound to `found`, the arrays they view and the items of plain containers; with
    `attributes`, also what their instance attributes hold (a library object that keeps a model)."""
    ids: set[int] = set()
    for name in found:
        if name not in ns:
            continue
        value = ns[name]
        items = list(value.values()) if isinstance(value, dict) else list(value) if isinstance(
            value, (list, tuple, set)) else []  # fmt: skip
        if attributes and not isinstance(value, (type, type(sys))):
            try:
                own = object.__getattribute__(value, "__dict__")  # no __getattr__ of the object runs
            except AttributeError:  # no instance dict (an array, a number)
                own = {}
            items += list(own.values())[:1000] if isinstance(own, dict) else []
        for each in [value, *items[:1000]]:
            if not quick.carries(each):  # a number or string is shared by identity without meaning it
                continue
            ids.add(id(each))
            base = getattr(each, "base", None)
            if base is not None and not isinstance(each, type):
                ids.add(id(base))
    return ids
