"""Which crashes the replicas' unfaithful values withdraw: those on a line they reach.

A spec lists the facts its replica does not reproduce (`spec.py`: an index whose labels were not recorded,
a category's categories, a strided array). The replica still runs, so the cell gets past the lines that
use it; but a crash on a line that reads it, reads a value the cell made from it, or runs only because of
it (a branch it decided, a loop over it, a handler of what it raised) may be the replica's and not the
cell's. The taint runs forward over the cell's statements, loop bodies twice, and spreads wide where in
doubt: a statement that reads a tainted name taints every name it binds or reads (a call may change its
arguments, and a module its own state: pyplot's current axes, a random seed), and a notebook function
reads whatever its body reads.
"""

from __future__ import annotations

import ast
import re
from typing import Any

# Calls that read names from text or from the namespace itself: they may read anything.
_READS_ANYTHING = frozenset({"eval", "exec", "globals", "locals", "vars"})
_AT_NAME = re.compile(r"@([A-Za-z_][A-Za-z0-9_]*)")  # `df.query('a > @limit')` reads `limit`
_TRY = (ast.Try, getattr(ast, "TryStar", ast.Try))  # (`except*`: Python 3.11)
_COMPOUND = (ast.If, ast.While, ast.For, ast.AsyncFor, ast.With, ast.AsyncWith, *_TRY, ast.Match)
_BODIES = ("body", "orelse", "handlers", "finalbody", "cases")


def unfaithful(specs: dict[str, dict[str, Any]]) -> dict[str, str]:
    """The names whose replicas are not their values, each with the first reason its spec gives."""
    return {
        name: next(f"{fact}: {why}" for fact, why in spec["unfaithful"].items())
        for name, spec in specs.items()
        if spec.get("unfaithful")
    }


def withdrawn(
    cell: str, line: int, specs: dict[str, dict[str, Any]], definitions: list[str] | None = None
) -> str | None:
    """Why a crash at `line` of `cell` is not the cell's own (None: no unfaithful replica reaches it)."""
    seeds = unfaithful(specs)
    if not seeds:
        return None
    try:
        tree = ast.parse(cell)
    except (SyntaxError, ValueError, RecursionError):
        return "the cell could not be read"
    taint = _Taint(seeds, _Definitions(definitions or [], tree))
    taint.block(tree.body)
    for first, last, culprit in taint.marked:
        if first <= line <= last:
            return f"line {line} reaches {culprit}, whose replica is not faithful ({seeds[culprit]})"
    if taint.marked and _inside_definition(tree, line):
        # The cell's own function or class: which call reached this line, with what, is not traced.
        _, _, culprit = taint.marked[0]
        return f"line {line} is in a function this cell defines, and {culprit}'s replica is not faithful"
    return None


class _Definitions:
    """The names each notebook function or class reads (the executed cells' and the cell's own)."""

    def __init__(self, sources: list[str], tree: ast.Module) -> None:
        self.reads: dict[str, set[str]] = {}
        trees = [tree]
        for source in sources:
            try:
                trees.append(ast.parse(source))
            except (SyntaxError, ValueError, RecursionError):
                continue
        for module in trees:
            for node in ast.walk(module):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    self.reads.setdefault(node.name, set()).update(_names(node))

    def expand(self, names: set[str]) -> set[str]:
        """`names` and every name the notebook functions among them read, transitively."""
        out, todo = set(names), list(names)
        while todo:
            for read in self.reads.get(todo.pop(), ()):
                if read not in out:
                    out.add(read)
                    todo.append(read)
        return out


class _Taint:
    def __init__(self, seeds: dict[str, str], definitions: _Definitions) -> None:
        self.seeds = seeds
        self.definitions = definitions
        self.tainted: dict[str, str] = {name: name for name in seeds}  # name -> the unfaithful one behind it
        self.region: str | None = None  # control flow depends on this unfaithful name from here on
        self.marked: list[tuple[int, int, str]] = []  # (first line, last line, culprit)

    def block(self, statements: list[ast.stmt]) -> None:
        for statement in statements:
            self.statement(statement)

    def statement(self, node: ast.stmt) -> None:
        if not isinstance(node, _COMPOUND):
            self.touch([node], _first_line(node), node.end_lineno or node.lineno)
            return
        header = [v for f, v in ast.iter_fields(node) if f not in _BODIES and isinstance(v, (ast.AST, list))]
        nodes = [n for v in header for n in (v if isinstance(v, list) else [v]) if isinstance(n, ast.AST)]
        culprit = self.touch(nodes, node.lineno, _last_line(nodes, node.lineno))
        if culprit and self.region is None:
            self.region = culprit  # which branch runs, how often, what it binds: the replica's choice
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            self.block(node.body)
            self.block(node.body)  # a name tainted late in the body is read early in the next pass
            self.block(node.orelse)
        elif isinstance(node, _TRY):
            before = len(self.marked)
            self.block(node.body)
            if len(self.marked) > before and self.region is None:
                self.region = self.marked[before][2]  # whether the handlers run is the replica's choice
            for handler in node.handlers:
                self.touch([h for h in (handler.type,) if h], handler.lineno, handler.lineno)
                self.block(handler.body)
            self.block(node.orelse)
            self.block(node.finalbody)
        elif isinstance(node, ast.Match):
            for case in node.cases:
                parts = [case.pattern, *([case.guard] if case.guard else [])]
                culprit = self.touch(parts, case.pattern.lineno, _last_line(parts, case.pattern.lineno))
                if culprit and self.region is None:
                    self.region = culprit
                self.block(case.body)
        else:  # if, with
            self.block(node.body)
            self.block(getattr(node, "orelse", []))

    def touch(self, nodes: list[ast.AST], first: int, last: int) -> str | None:
        """Mark lines first..last when these nodes read a tainted name (or run where control flow is
        tainted), and taint what they bind or may change; the unfaithful name behind it, if any."""
        names: set[str] = set()
        for node in nodes:
            names |= _names(node)
        names = self.definitions.expand(names)
        if names & _READS_ANYTHING:
            names |= set(self.seeds)
        hit = next((self.tainted[n] for n in sorted(names) if n in self.tainted), None) or self.region
        if hit is None:
            return None
        for name in names:
            self.tainted.setdefault(name, hit)
        self.marked.append((first, last, hit))
        return hit


def _names(node: ast.AST) -> set[str]:
    """Every name a node reads or binds, the names in `@name` references of its strings, and the names
    of the functions and classes it defines."""
    out: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            out.add(sub.id)
        elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(sub.name)
        elif isinstance(sub, ast.Constant) and isinstance(sub.value, str) and "@" in sub.value:
            out |= set(_AT_NAME.findall(sub.value))
        elif isinstance(sub, (ast.MatchAs, ast.MatchStar)) and sub.name:
            out.add(sub.name)
    return out


def _last_line(nodes: list[ast.AST], default: int) -> int:
    ends = [end for node in nodes for sub in ast.walk(node) if (end := getattr(sub, "end_lineno", None))]
    return max(ends, default=default)


def _first_line(node: ast.stmt) -> int:
    decorators: list[ast.expr] = getattr(node, "decorator_list", [])
    return min([node.lineno, *(d.lineno for d in decorators)])


def _inside_definition(tree: ast.Module, line: int) -> bool:
    """Whether `line` is in the body of a function, lambda or class the cell defines."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            body = node.body if isinstance(node.body, list) else [node.body]
            if body and body[0].lineno <= line <= (node.end_lineno or node.lineno):
                return True
    return False
