"""Related objects: what an object of the cell was built from or fitted with, one hop back through the
executed cells.
"""

from __future__ import annotations

import ast
import types
from typing import Any

from ..cell import python_source
from .refs import _is_data
from .safe import _is, _isclass, _isinst, _isroutine


def _lineage(history: list[str], present: list[str], ns: dict[str, Any]) -> list[tuple[str, str, str]]:
    """One hop back through the executed cells: data names the cell's objects were built or fitted from.

    `X = train[features]` makes `train` related to `X`; `model.fit(X_train, y)` makes `X_train` related
    to `model`. Only names still holding data (not modules, functions or classes) are returned.
    """
    wanted = [
        n for n in present if not (_isinst(ns[n], types.ModuleType) or _isroutine(ns[n]) or _isclass(ns[n]))
    ]
    if not wanted or not history:
        return []
    out: list[tuple[str, str, str]] = []
    found: dict[str, list[tuple[str, str]]] = {}
    done: set[str] = set()  # names whose defining assignment was reached (older cells do not matter)
    for cell in reversed(history[-60:]):
        if len(cell) > 100_000:
            continue
        try:
            tree = ast.parse(python_source(cell))
        except (SyntaxError, ValueError):
            continue
        for stmt in reversed(tree.body):
            for name in wanted:
                if name in done:
                    continue
                hit = _sources_for(stmt, name)
                if hit is not None:
                    sources, defining, relation = hit
                    found[name] = [*found.get(name, []), *((src, relation) for src in sources)]
                    if defining:
                        done.add(name)
    for name in wanted:
        for src, relation in found.get(name, []):
            related = src != name and src in ns and src not in present and not _skip_lineage(ns[src])
            if related and src not in [o[0] for o in out]:
                out.append((src, name, relation))
    return out


def _sources_for(stmt: ast.stmt, name: str) -> tuple[list[str], bool, str] | None:
    """Names read by a statement that defines (True) or fits/compiles (False) `name`; None otherwise."""
    value: ast.AST | None = None
    defining = False
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        if any(isinstance(n, ast.Name) and n.id == name for t in targets for n in ast.walk(t)):
            value = stmt.value
            defining = True
    elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        func = stmt.value.func
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == name
            and func.attr in ("fit", "fit_transform", "partial_fit", "compile", "train_on_batch")
        ):
            value = stmt.value
    if value is None:
        return None
    names = [n.id for n in ast.walk(value) if isinstance(n, ast.Name)]
    # `X = X.fillna(...)` rebuilds X from itself: keep looking further back for where X came from
    relation = "built" if defining else "fitted"
    return list(dict.fromkeys(n for n in names if n != name)), defining and name not in names, relation


def _skip_lineage(value: Any) -> bool:
    """Only data is worth following back: frames, arrays, tensors, containers and numbers."""
    if type(value) in (int, float, bool, list, tuple, dict, set):
        return False
    return not (_is_data(value) or _is(value, "scipy", "_spbase"))
