"""Let the libraries judge: run the cell on replicas rebuilt from the runtime facts, in another process.

The rules list crash classes by hand; the long tail (an attribute the class lacks, an argument a
function refuses, an array of a rank a library function rejects, a metric given the wrong kind of
values...) is raised by the libraries themselves from the objects' types, shapes and values, which the
facts already hold. `judge` rebuilds each value the cell reads from its facts (`spec.py`: frames with the
recorded columns, dtypes and values, arrays and tensors of the recorded shapes and dtypes, estimators of
the recorded class in the recorded state), replays the executed cells' imports and definitions, and runs
the cell on them in the trial's own sandbox (`runner.py`), never on the user's objects.

A crash is claimed only when it is the cell's own and every variant raises it the same way: each variant
fills what the facts leave open (unsampled values, the index, NaN on a sampled column, text beyond the
examples) differently, so a crash they share was decided by what the facts hold. A variant that touches a
value we could not rebuild, runs out of time, is refused by the sandbox, or raises an error of the
machine (a missing file, a module, a name) says nothing. The judge runs nothing where that sandbox cannot
be entered, and answers within its budget (`process.py`).
"""

from __future__ import annotations

import ast
import re
import sys
from importlib import metadata
from typing import Any

from ...kernel.cell import python_source
from ...models import Finding
from ..view import RuntimeView
from .spec import definitions, specs
from .taint import withdrawn

RULE = "replica"
VARIANTS = 2
# Errors of the machine or of what we could not rebuild, not of the cell on these facts.
_NOT_CLAIMED = frozenset(
    {"OSError", "NameError", "ImportError", "MemoryError", "RecursionError", "AssertionError",
     "StopIteration", "Warning", "TimeoutError", "KeyboardInterrupt", "SystemExit", "Abort"}
)  # fmt: skip


_DISTRIBUTIONS = {
    "sklearn": "scikit-learn",
    "PIL": "pillow",
    "cv2": "opencv-python",
    "skimage": "scikit-image",
}


def other_environment(view: RuntimeView) -> str | None:
    """Why this process cannot stand in for the kernel's libraries (None: it can).

    The replicas run in this process's interpreter: a claim holds only when it has the kernel's Python
    and the kernel's version of every library the cell uses."""
    ours = ".".join(str(v) for v in sys.version_info[:2])
    kernel = ".".join((view.python or "").split(".")[:2])
    if kernel != ours:
        return f"the kernel runs Python {kernel or '(unknown)'}, the server {ours}"
    for module in view.modules.values():
        root = module.module.split(".", 1)[0]
        if module.version is None or root in sys.stdlib_module_names:
            continue
        try:
            installed = metadata.version(_DISTRIBUTIONS.get(root, root))
        except metadata.PackageNotFoundError:
            return f"{root} is not installed beside the server"
        if installed != module.version:
            return f"the kernel has {root} {module.version}, the server {installed}"
    return None


def _reads(tree: ast.Module) -> set[str]:
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def request_for(
    source: str, view: RuntimeView, executed_cells: list[str] | None, budget_s: float = 2.0
) -> dict[str, Any] | None:
    """The runner's request, or None when there is nothing the replicas could decide."""
    cell = python_source(source)
    try:
        tree = ast.parse(cell)
    except (SyntaxError, ValueError, RecursionError):
        return None
    read = _reads(tree)
    all_specs = specs(view)
    rebuilt = [n for n in read if n in all_specs and all_specs[n]["kind"] not in ("unknown", "module")]
    if not rebuilt:
        return None  # the cell reads nothing we rebuild: it would only run library calls on literals
    return {
        "cell": cell,
        "definitions": definitions(list(executed_cells or [])),
        "specs": all_specs,
        "variants": VARIANTS,
        "budget_s": budget_s,
    }


def warm_up(wait_s: float = 0.0) -> bool:
    """Start the replica process ahead of need (its libraries take seconds to import; until then the judge
    abstains); with `wait_s`, wait that long for it to be warm. Returns whether it is."""
    from .process import server

    if wait_s > 0:
        return server.wait_warm(wait_s)
    server.start()
    return False


def close() -> None:
    """End the replica process (a later judgement starts a new one)."""
    from .process import server

    server.close()


def run(request: dict[str, Any]) -> dict[str, Any]:
    """The runner's answer ({"variants": [...]}); {"error": ...} when it could not answer in time."""
    from .process import run as ask

    return ask(request)


_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")


def _masked(message: str) -> str:
    return _QUOTED.sub("'…'", message)


def agreed(answer: dict[str, Any]) -> dict[str, Any] | None:
    """The crash every variant raised the same way, if it is one we may claim.

    The same way: the same exception class at the same line of the cell, with the same message but for
    quoted values (which value of a text column fails first is the replica's order, not the user's); the
    message then shows them as '…'."""
    variants = answer.get("variants") or []
    if len(variants) < VARIANTS or any(v.get("status") != "raised" for v in variants):
        return None
    first = dict(variants[0])
    if any((v["exception"], v["module"], _masked(v["message"]), v["line"]) !=
           (first["exception"], first["module"], _masked(first["message"]), first["line"])
           for v in variants):  # fmt: skip
        return None
    if any(v["message"] != first["message"] for v in variants):
        first["message"] = _masked(first["message"])
    if first["line"] is None or _NOT_CLAIMED & set(first.get("bases") or []):
        return None
    if "NameError" in first["message"] or "is not defined" in first["message"]:
        return None  # a library that evaluates text (a formula, a query) met a name we did not rebuild
    return first


def judge(
    source: str, view: RuntimeView, executed_cells: list[str] | None = None, budget_s: float = 2.0
) -> list[Finding]:
    """The crash the libraries raise on every replica of the cell's inputs ([] when they do not agree),
    all variants within `budget_s` seconds of wall time."""
    request = request_for(source, view, executed_cells, budget_s)
    if request is None:
        return []
    return finding(request, view, run(request))


def finding(request: dict[str, Any], view: RuntimeView, answer: dict[str, Any]) -> list[Finding]:
    """The finding the runner's answer to `request` proves ([] when it proves none)."""
    crash = agreed(answer)
    if crash is None:
        return []
    line = crash["line"]
    if withdrawn(request["cell"], line, request["specs"], request.get("definitions")):
        return []  # the line reaches a replica that is not its value (its spec says where): not ours to claim
    cell_lines = request["cell"].splitlines()
    text = cell_lines[line - 1].strip() if 0 < line <= len(cell_lines) else ""
    try:
        used = _reads(ast.parse(text)) if text else set()
    except SyntaxError:
        used = set()
    evidence = [fact for name in sorted(used) if (info := view.get(name)) for fact in info.facts[:4]]
    evidence.append(
        f"line {line} raised {crash['exception']} on {VARIANTS} replicas rebuilt from these facts, which "
        "differ in everything the facts leave open"
    )
    message = f"{crash['exception']}: {crash['message']}" if crash["message"] else crash["exception"]
    return [Finding(rule=RULE, message=message, evidence=evidence, line=line)]
