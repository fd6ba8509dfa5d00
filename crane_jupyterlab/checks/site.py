"""One expression of a cell and the cell state just before it runs (what the walker in flow.py
records and the rules read)."""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass


@dataclass(frozen=True)
class Site:
    """One expression of the cell, with the cell state just before it is evaluated."""

    node: ast.expr
    certain: bool
    handlers: tuple[tuple[str, ...] | None, ...]  # enclosing `except` clauses; None = bare/unknown
    bound: frozenset[str]
    touched: frozenset[str]
    deleted: frozenset[str]
    barrier: bool
    imports: tuple[tuple[str, str], ...] = ()  # names bound by an import in this cell, still current
    constructed: tuple[tuple[str, ast.Call], ...] = ()  # names bound to `name = Call(...)`, untouched since
    unpacked: tuple[tuple[str, tuple[ast.Call, int]], ...] = ()  # `fig, ax = plt.subplots()`: ax -> (call, 1)
    fitted: tuple[tuple[str, tuple[ast.Call, ast.Call]], ...] = ()  # `m = C(); m.fit(X)`: m -> (C(), fit)
    assigned: tuple[tuple[str, ast.expr], ...] = ()  # `X = <expr>` that certainly ran, X untouched since
    # Globals that a call before this site may have bound: any (True), or only those in `rebinds`.
    rebinds_any: bool = True
    rebinds: frozenset[str] = frozenset()

    def may_define(self, name: str) -> bool:
        """Whether code run before this site (a call into notebook code, a star import) may have bound
        the global `name` (unlike `barrier`, a call whose code binds no such name leaves it alone)."""
        return self.rebinds_any or name in self.rebinds

    def imported(self, name: str) -> str | None:
        """The dotted path `name` was imported as in this cell (`pd` -> `pandas`), if it still is."""
        return dict(self.imports).get(name)

    def made_by(self, name: str) -> ast.Call | None:
        """The call whose result `name` holds, unchanged since (`clf = LogisticRegression()`)."""
        return None if self.barrier else dict(self.constructed).get(name)

    def fitted_here(self, name: str) -> tuple[ast.Call, ast.Call] | None:
        """(constructor call, fit call) when this cell built `name` and then fitted it, untouched since."""
        return None if self.barrier else dict(self.fitted).get(name)

    def unpacked_from(self, name: str) -> tuple[ast.Call, int] | None:
        """The call and position `name` was unpacked from (`fig, ax = plt.subplots()`), unchanged since."""
        return None if self.barrier else dict(self.unpacked).get(name)

    def assigned_value(self, name: str) -> ast.expr | None:
        """The expression `name` was last bound to by a plain assignment that certainly ran, when
        nothing may have changed the object since."""
        return None if self.barrier else dict(self.assigned).get(name)

    def pristine(self, name: str) -> bool:
        """True when `name` still denotes the kernel's object, unchanged, at this site."""
        return not self.barrier and name not in self.touched and name not in self.bound

    def caught(self, exc_bases: tuple[str, ...]) -> bool:
        """Whether an enclosing `try` could catch an exception with these builtin base classes."""
        return any(_handler_catches(h, exc_bases) for h in self.handlers)


def _handler_catches(handler: tuple[str, ...] | None, exc_bases: tuple[str, ...]) -> bool:
    if handler is None:
        return True
    for name in handler:
        cls = getattr(builtins, name, None)
        if not (isinstance(cls, type) and issubclass(cls, BaseException)):
            return True  # a library exception class may subclass ours: assume it catches
        for base in exc_bases:
            exc = getattr(builtins, base, None)
            if isinstance(exc, type) and issubclass(exc, cls):
                return True
    return False


def root_name(node: ast.expr) -> str | None:
    """`df` for `df`, `df.a.b`, `df['x'].y` and `df.m(...)`; None for anything else."""
    while True:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
        elif isinstance(node, ast.Call):
            node = node.func
        else:
            return None
