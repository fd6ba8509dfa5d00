"""Which real crashes of `crane-bench notebooks` an edit of the crashed cell could fix, so that the share
of crashes given a fix is counted against those alone.

No edit of the cell fixes a crash that the machine or an earlier cell caused (network failures, missing
data files and `NameError` cascades are outcome classes of their own, notebook_summary.classify); the
crashes left with a `reason` here are those of the `crash` class that are one of:

- `missing package`: a top-level module no finder has (`No module named 'graphviz'`; a missing
  submodule of an installed package, `sklearn.cross_validation`, is version drift an edit can reach),
  a library asking for an optional dependency to be installed, a program that is not there;
- `removed dataset`: a library's loader of a dataset it removed (`load_boston`);
- `cascade`: state an earlier failed cell was meant to make (an estimator it should have fitted, a model
  it should have compiled) missing where the crashing line reads a name that cell bound or changed.
- `outside the cell`: raised in a function an earlier cell defined or in a module beside the notebook
  (the run's `raised_in`), whose code an edit of this cell does not reach.

Read from the exception, its message and the cells' sources as they ran, in the notebook's order.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from typing import Any

from ..checks.astutil import bound_names
from ..kernel.cell import python_source

_NO_MODULE = re.compile(r"No module named '([^']+)'")
_INSTALL = re.compile(
    r"pip install|conda install|[Mm]issing optional dependency|(?:is|are) not installed|to be installed"
    r"|failed to execute|executable .* not found",
)
_DATASET = re.compile(r"\b(?:load|fetch)_\w+`? has been removed|dataset\b.{0,80}\bremoved", re.IGNORECASE)
# What a crash says when state an earlier cell should have made is not there.
_STATE = re.compile(
    r"not fitted|has not been fitted|call [`'\"]?fit|must (?:be )?(?:compiled?|built)|not (?:been )?built"
    r"|not been (?:compiled|trained)",
    re.IGNORECASE,
)
_FITTED_ATTRIBUTE = re.compile(r"has no attribute '\w+_'")


def reason(row: dict[str, Any], tainted: set[str]) -> str | None:
    """Why no edit of this crashed cell can fix its crash; None when one could. `tainted`: the names
    the notebook's earlier failed cells were meant to bind or change."""
    run = row.get("run") or {}
    exception = str(run.get("exception") or "")
    message = str(run.get("message") or "")
    missing = _NO_MODULE.search(message)
    if exception in ("ModuleNotFoundError", "ImportError") and missing and "." not in missing.group(1):
        return "missing package"
    if exception in ("ImportError", "ModuleNotFoundError", "ExecutableNotFound") and _INSTALL.search(message):
        return "missing package"
    if _DATASET.search(message):
        return "removed dataset"
    if run.get("raised_in") in ("other cell", "file"):
        return "outside the cell"
    if (
        (exception == "NotFittedError" or _STATE.search(message) or _FITTED_ATTRIBUTE.search(message))
        and tainted & read_names(str(row.get("source") or ""), run.get("line"))
    ):  # fmt: skip
        return "cascade"
    return None


def reasons(ran: list[dict[str, Any]]) -> Iterator[tuple[dict[str, Any], str | None]]:
    """(row, reason) for each real crash, reading the rows in the notebooks' order."""
    tainted: dict[str, set[str]] = {}
    for row in ran:
        names = tainted.setdefault(str(row.get("notebook")), set())
        if row.get("outcome") == "crash":
            yield row, reason(row, names)
        fix_run = row.get("fix_run") or {}
        fixed = fix_run.get("status") in ("ok", "error")
        source = str(((row.get("fix") or {}).get("source") if fixed else row.get("source")) or "")
        status = fix_run.get("status") if fixed else (row.get("run") or {}).get("status")
        if status == "ok":
            names.difference_update(meant_names(source))
        elif status == "error":
            names.update(meant_names(source))


def meant_names(source: str) -> set[str]:
    """The names a cell binds, and those it changes in place at its top level (`model.fit(X)`,
    `df['x'] = ...`, `df.dropna(inplace=True)`)."""
    names = bound_names(source)
    tree = _tree(source)
    changed: list[ast.expr] = []
    for node in tree.body if tree else []:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            if isinstance(node.value.func, ast.Attribute):
                changed.append(node.value.func.value)
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            changed += [t.value for t in targets if isinstance(t, (ast.Attribute, ast.Subscript))]
    for root in changed:
        while isinstance(root, (ast.Attribute, ast.Subscript, ast.Call)):
            root = root.func if isinstance(root, ast.Call) else root.value
        if isinstance(root, ast.Name):
            names.add(root.id)
    return names


def read_names(source: str, line: Any) -> set[str]:
    """The names the cell's line reads (the whole cell's when the line is not known)."""
    tree = _tree(source)
    if tree is None:
        return set()
    return {
        n.id
        for n in ast.walk(tree)
        if isinstance(n, ast.Name)
        and isinstance(n.ctx, ast.Load)
        and (not isinstance(line, int) or n.lineno <= line <= (n.end_lineno or n.lineno))
    }


def _tree(source: str) -> ast.Module | None:
    try:
        return ast.parse(python_source(source))
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
