"""What a rule gets: the parsed cell, its evaluation sites and the runtime view, plus small AST helpers."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

from .flow import Site, root_name
from .view import ObjInfo, RuntimeView


@dataclass
class CellContext:
    source: str
    tree: ast.Module
    view: RuntimeView
    sites: list[Site]

    def certain(self, kind: type[ast.expr] | tuple[type[ast.expr], ...]) -> Iterator[Site]:
        """Sites of this node kind that run whenever the cell gets that far."""
        for site in self.sites:
            if site.certain and isinstance(site.node, kind):
                yield site

    def value_of(self, node: ast.expr, site: Site) -> ObjInfo | None:
        """The kernel's description of `node`, when `node` still denotes it unchanged at `site`.

        `X`, `X.values`, `X.to_numpy()` and attribute/constant-subscript chains (`model.layers[0]`)
        are looked up; the root name must not have been touched earlier in the cell.
        """
        if isinstance(node, ast.Call) and not node.args and not node.keywords:
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in ("to_numpy", "copy"):
                node = func.value
        elif isinstance(node, ast.Attribute) and node.attr == "values":
            base = self.value_of(node.value, site)
            if base is not None and base.is_frame:
                return base
        name = root_name(node)
        if name is None or not site.pristine(name) or name in self.view.undefined:
            return None
        if any(isinstance(sub, ast.Call) for sub in ast.walk(node)):
            return None
        return self.view.get(ast.unparse(node))


def const_str(node: ast.expr | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def const_strs(node: ast.expr | None) -> list[str] | None:
    """`'a'` -> ['a'], `['a', 'b']` / `('a', 'b')` -> ['a', 'b']; anything dynamic -> None."""
    single = const_str(node)
    if single is not None:
        return [single]
    if isinstance(node, (ast.List, ast.Tuple)) and node.elts:
        items = [const_str(e) for e in node.elts]
        if all(i is not None for i in items):
            return [i for i in items if i is not None]
    return None


def kwarg(call: ast.Call, name: str) -> ast.expr | None:
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    return None


def has_star_args(call: ast.Call) -> bool:
    return any(isinstance(a, ast.Starred) for a in call.args) or any(kw.arg is None for kw in call.keywords)


def method_call(node: ast.expr) -> tuple[ast.expr, str] | None:
    """(receiver, method) for `receiver.method(...)`."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.value, node.func.attr
    return None


def line_of(node: ast.AST) -> int | None:
    return getattr(node, "lineno", None)
