"""Small readers of the cell's syntax that the device walker needs (literals, callees, scopes)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ...context import kwarg


def walk_scope(node: ast.AST) -> Iterator[ast.AST]:
    """ast.walk without the bodies of functions, classes, lambdas and comprehensions (their own scopes)."""
    stack = [node]
    while stack:
        cur = stack.pop()
        yield cur
        if cur is not node and isinstance(
            cur,
            ast.FunctionDef
            | ast.AsyncFunctionDef
            | ast.ClassDef
            | ast.Lambda
            | ast.ListComp
            | ast.SetComp
            | ast.DictComp
            | ast.GeneratorExp,
        ):
            continue
        stack.extend(ast.iter_child_nodes(cur))


def number_literal(node: ast.expr) -> int | float | None:
    """A Python number written in the cell (`2`, `-0.5`)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        node = node.operand
    if (
        isinstance(node, ast.Constant)
        and isinstance(node.value, int | float)
        and not isinstance(node.value, bool)
    ):
        return node.value
    return None


def const_int(node: ast.expr) -> int | None:
    return node.value if isinstance(node, ast.Constant) and type(node.value) is int else None


def has_call(node: ast.AST) -> bool:
    return any(isinstance(sub, ast.Call) for sub in ast.walk(node))


def callee_name(node: ast.expr) -> str:
    func = node.func if isinstance(node, ast.Call) else node
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def const_bool(node: ast.expr, keyword: str | None = None) -> bool | None:
    if not isinstance(node, ast.Call):
        return None
    value = kwarg(node, keyword) if keyword else (node.args[0] if node.args else None)
    if isinstance(value, ast.Constant) and isinstance(value.value, bool):
        return value.value
    return None
