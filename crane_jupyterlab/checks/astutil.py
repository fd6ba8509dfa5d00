"""Pure questions about a cell's syntax tree that the walker (flow.py) asks: assignment targets,
`except` clauses, loops that certainly iterate or may be left early."""

from __future__ import annotations

import ast
import contextlib
from collections.abc import Iterator


def _target_names(target: ast.expr) -> Iterator[str]:
    for sub in ast.walk(target):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, (ast.Store, ast.Del)):
            yield sub.id


def _target_id(target: ast.expr) -> str:
    assert isinstance(target, ast.Name)
    return target.id


def _handler_types(handler: ast.ExceptHandler) -> tuple[str, ...] | None:
    if handler.type is None:
        return None
    elts = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    names: list[str] = []
    for elt in elts:
        if isinstance(elt, ast.Name):
            names.append(elt.id)
        elif isinstance(elt, ast.Attribute):
            names.append(ast.unparse(elt))  # never a builtin name: treated as catching anything
        else:
            return None
    return tuple(names)


def _nonempty(node: ast.expr) -> bool:
    """A loop iterable that certainly yields something: `range(5)`, `range(1, 10)`, `[a, b]`."""
    if isinstance(node, (ast.List, ast.Tuple)):
        return bool(node.elts) and not any(isinstance(e, ast.Starred) for e in node.elts)
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range"):
        return False
    if node.keywords or not 1 <= len(node.args) <= 2:
        return False
    bounds = [a.value if isinstance(a, ast.Constant) and type(a.value) is int else None for a in node.args]
    if None in bounds:
        return False
    start, stop = (0, bounds[0]) if len(bounds) == 1 else (bounds[0], bounds[1])
    return isinstance(start, int) and isinstance(stop, int) and stop > start


def _may_jump(stmt: ast.stmt) -> bool:
    """Whether `stmt` may leave the current loop iteration early (break/continue not in a nested loop)."""
    stack: list[ast.AST] = [stmt]
    while stack:
        cur = stack.pop()
        if isinstance(cur, (ast.Break, ast.Continue)):
            return True
        if isinstance(cur, (ast.For, ast.AsyncFor, ast.While)):
            stack.extend(cur.orelse)  # a break in the nested loop's body only leaves that loop
            continue
        if isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(ast.iter_child_nodes(cur))
    return False


def _as_load(node: ast.expr) -> ast.expr:
    """A copy of an assignment/del target that reads it instead."""
    copy = ast.copy_location(type(node)(**{f: getattr(node, f) for f in node._fields}), node)
    if hasattr(copy, "ctx"):
        copy.ctx = ast.Load()
    return copy


def bound_names(source: str) -> set[str]:
    """The names a cell binds in the notebook's namespace (assignments, imports, defs, loop and `with`
    targets, anywhere but inside functions, classes and comprehensions, which have scopes of their own)."""
    from ..kernel.cell import python_source

    with contextlib.suppress(ImportError):  # python_source turns magics into calls with IPython's transformer
        import IPython.core.inputtransformer2  # noqa: F401
    try:
        tree = ast.parse(python_source(source))
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return set()
    names: set[str] = set()
    scoped = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
    pending: list[ast.AST] = [tree]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update(alias.asname or alias.name.split(".")[0] for alias in node.names)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            continue
        if not isinstance(node, scoped):
            pending.extend(ast.iter_child_nodes(node))
    return names
