"""What a rule gets: the parsed cell, its evaluation sites and the runtime view, plus small AST helpers."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .evaluate import Evaluator
from .flow import ImportSite, Site
from .view import ObjInfo, RuntimeView


@dataclass
class CellContext:
    source: str
    tree: ast.Module
    view: RuntimeView
    sites: list[Site]
    values: Evaluator
    imports: list[ImportSite] = field(default_factory=list)  # the import statements, in order

    def certain(self, kind: type[ast.expr] | tuple[type[ast.expr], ...]) -> Iterator[Site]:
        """Sites of this node kind that run whenever the cell gets that far."""
        for site in self.sites:
            if site.certain and isinstance(site.node, kind):
                yield site

    def value_of(self, node: ast.expr | None, site: Site) -> ObjInfo | None:
        """The kernel's description of `node` at `site` (a name, an attribute or constant-subscript
        chain, `.values`/`.to_numpy()`), or one the cell derives from it exactly (checks/evaluate.py);
        None when not certain."""
        return self.values.value_of(node, site)

    def scalar(self, node: ast.expr, site: Site) -> Any:
        """The Python value the expression certainly has (evaluate.UNKNOWN when not certain)."""
        return self.values.scalar(node, site)

    def labels(self, node: ast.expr | None, site: Site) -> list[str] | None:
        """The column labels `node` names: a constant, a literal list, or a name bound to a str or a
        complete list of str (Evaluator.labels); None when not certain."""
        found = self.values.labels(node, site)
        return found[0] if found is not None else None

    def class_path(self, func: ast.expr, site: Site) -> str | None:
        """Dotted path of the library callable `func` names at `site`, e.g. `sklearn.svm.SVC`.

        From an import in this cell, a kernel class whose defining module is known, or an attribute
        of a module alias (`sm.OLS` -> `statsmodels.OLS`: the top package and the name).
        """
        return self.values.class_path(func, site)

    def made_here(self, node: ast.expr, site: Site) -> tuple[ObjInfo, ast.Call] | None:
        """A library object the cell itself creates: `LogisticRegression(...)` or a name bound to one.

        The object is fresh (e.g. an estimator not fitted yet); its type is the callable's path.
        """
        call: ast.Call | None = None
        if isinstance(node, ast.Call):
            call = node
        elif isinstance(node, ast.Name):
            call = site.made_by(node.id)
        if call is None:
            return None
        path = self.class_path(call.func, site)
        if path is None:
            return None
        return ObjInfo(expr=ast.unparse(node), type=path), call


def const_str(node: ast.expr | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def kwarg(call: ast.Call, name: str) -> ast.expr | None:
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    return None


def argument(call: ast.Call, position: int, name: str) -> ast.expr | None:
    """The node passed for a parameter: positionally at `position`, or as the keyword `name`."""
    return call.args[position] if len(call.args) > position else kwarg(call, name)


def has_star_args(call: ast.Call) -> bool:
    return any(isinstance(a, ast.Starred) for a in call.args) or any(kw.arg is None for kw in call.keywords)


def method_call(node: ast.expr) -> tuple[ast.expr, str] | None:
    """(receiver, method) for `receiver.method(...)`."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.value, node.func.attr
    return None


def line_of(node: ast.AST) -> int | None:
    return getattr(node, "lineno", None)
