"""Which expressions of a cell certainly run, and what may have changed before each of them (the walker;
what calls may change is effects.py, the recorded Site is site.py).

The walker visits a cell's AST in evaluation order and records one `Site` per expression, post-order (a
call is recorded after its arguments were evaluated). A site is `certain` when every execution of the
cell that gets that far evaluates it: top-level statements, `with` bodies of managers known not to
swallow exceptions, and `try` bodies (the enclosing handlers are kept so a rule can ask whether its
exception would be caught). Branches, loop bodies, short-circuited operands, comprehension bodies,
lambda and function bodies are not certain.

Everything is over-approximated in the safe direction: `bound` holds every name that MAY have been
bound before the site, `touched` every name whose object MAY have been changed (rebound, item or
attribute assigned, a mutating or unknown method called on it, passed to a call), and `barrier` turns
true after a call that may run user code (which can change any global).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from .astutil import _as_load, _handler_types, _may_jump, _nonempty, _target_id, _target_names
from .effects import (
    DYNAMIC_BUILTINS,
    PURE_BUILTINS,
    PURE_METHODS,
    CallEffects,
    _context_is_plain,
    _union,
)
from .site import Site, root_name

# Re-exported: the rules import the walker's vocabulary from here.
__all__ = [
    "DYNAMIC_BUILTINS",
    "PURE_BUILTINS",
    "PURE_METHODS",
    "ImportSite",
    "Runtime",
    "Site",
    "_context_is_plain",
    "_may_jump",
    "root_name",
    "walk_cell",
]


@dataclass
class _State:
    certain: bool = True
    handlers: tuple[tuple[str, ...] | None, ...] = ()
    bound: set[str] = field(default_factory=set)
    touched: set[str] = field(default_factory=set)
    deleted: set[str] = field(default_factory=set)
    barrier: bool = False
    imports: dict[str, str] = field(default_factory=dict)  # name -> dotted path it was imported as
    constructed: dict[str, ast.Call] = field(default_factory=dict)  # name -> the call that made it
    unpacked: dict[str, tuple[ast.Call, int]] = field(default_factory=dict)  # `a, b = f()`: b -> (f(), 1)
    fitted: dict[str, tuple[ast.Call, ast.Call]] = field(default_factory=dict)  # name -> (constructor, fit)
    assigned: dict[str, ast.expr] = field(default_factory=dict)  # name -> expression it was bound to
    # Globals a call into notebook code may have bound so far (any, or those listed).
    rebinds_any: bool = False
    rebinds: set[str] = field(default_factory=set)
    # name -> the globals the code reachable from its current value may bind (None: any), for names
    # this cell bound or changed; the kernel's objects answer from the probe (view.global_binds).
    binds_of: dict[str, frozenset[str] | None] = field(default_factory=dict)


@dataclass(frozen=True)
class ImportSite:
    """An import statement, with whether it certainly runs and the `except` clauses around it."""

    node: ast.Import | ast.ImportFrom
    certain: bool
    handlers: tuple[tuple[str, ...] | None, ...]
    barrier: bool  # a call before it may have run user code

    def caught(self, exc_bases: tuple[str, ...]) -> bool:
        return Site(ast.Constant(None), self.certain, self.handlers, frozenset(), frozenset(),
                    frozenset(), self.barrier).caught(exc_bases)  # fmt: skip


class Runtime(Protocol):
    """What the walker asks the runtime view about the cell (checks/evaluate.py answers)."""

    def truth(self, node: ast.expr, site: Site) -> bool | None: ...

    def nonempty(self, node: ast.expr, site: Site) -> bool: ...


class _NoRuntime:
    def truth(self, node: ast.expr, site: Site) -> bool | None:
        return None

    def nonempty(self, node: ast.expr, site: Site) -> bool:
        return _nonempty(node)


class _Walker(CallEffects):
    def __init__(
        self,
        is_library: Callable[[str], bool],
        is_module: Callable[[str], bool],
        global_binds: Callable[[str], frozenset[str] | None] = lambda _: None,
        is_undefined: Callable[[str], bool] = lambda _: False,
    ) -> None:
        self.is_library = is_library
        self.is_module = is_module
        self.global_binds = global_binds
        self.is_undefined = is_undefined
        self.runtime: Runtime = _NoRuntime()
        self.modules_imported: set[str] = set()  # names bound by `import x` / `import x as y` here
        self.sites: list[Site] = []
        self.import_sites: list[ImportSite] = []
        self.s = _State()
        self.user_callables: set[str] = set()
        # Names bound in the cell to library objects (imports, results of library calls).
        self.library_names: set[str] = set()

    # ----- state helpers -------------------------------------------------------------------------
    def bind(self, name: str) -> None:
        self.library_names.discard(name)
        self.s.bound.add(name)
        self.touch(name)
        self.s.deleted.discard(name)
        self.s.imports.pop(name, None)
        self.s.binds_of.pop(name, None)  # a new value: its code is unknown until the caller says

    def touch(self, name: str) -> None:
        self.s.touched.add(name)
        self.s.constructed.pop(name, None)
        self.s.unpacked.pop(name, None)
        self.s.fitted.pop(name, None)
        self.s.assigned.pop(name, None)

    def record(self, node: ast.expr) -> None:
        self.sites.append(self.snapshot(node))

    def snapshot(self, node: ast.expr) -> Site:
        s = self.s
        return Site(
            node,
            s.certain,
            s.handlers,
            frozenset(s.bound),
            frozenset(s.touched),
            frozenset(s.deleted),
            s.barrier,
            tuple(s.imports.items()),
            tuple(s.constructed.items()),
            tuple(s.unpacked.items()),
            tuple(s.fitted.items()),
            tuple(s.assigned.items()),
            s.rebinds_any,
            frozenset(s.rebinds),
        )

    def uncertain(self, *parts: Callable[[], None]) -> None:
        """Walk `parts` (effects still count) with their sites marked not certain."""
        saved = self.s.certain
        self.s.certain = False
        try:
            for part in parts:
                part()
        finally:
            self.s.certain = saved

    def decide(self, test: ast.expr) -> bool | None:
        """Whether a condition that certainly runs is certainly true/false (None: not certain)."""
        if not self.s.certain:
            return None
        return self.runtime.truth(test, self.snapshot(test))

    def exprs(self, nodes: list[ast.expr]) -> None:
        for node in nodes:
            self.expr(node)

    # ----- statements ----------------------------------------------------------------------------
    def block(self, body: list[ast.stmt]) -> None:
        for stmt in body:
            self.stmt(stmt)

    def stmt(self, node: ast.stmt) -> None:
        if isinstance(node, ast.Assign):
            made_by_library = self.library_expr(node.value)
            value_binds = self.expr_binds(node.value)
            self.expr(node.value)
            for target in node.targets:
                self.store(target, value_binds)
                if made_by_library and isinstance(target, (ast.Name, ast.Tuple, ast.List)):
                    self.library_names.update(_target_names(target))
            single = len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
            if single and self.s.certain:
                self.s.assigned[_target_id(node.targets[0])] = node.value
            if single and self.s.certain and isinstance(node.value, ast.Call):
                self.s.constructed[_target_id(node.targets[0])] = node.value
            elif (
                self.s.certain
                and len(node.targets) == 1
                and isinstance(node.targets[0], (ast.Tuple, ast.List))
                and isinstance(node.value, ast.Call)
                and all(isinstance(e, ast.Name) for e in node.targets[0].elts)
            ):
                for i, elt in enumerate(node.targets[0].elts):
                    assert isinstance(elt, ast.Name)
                    self.s.unpacked[elt.id] = (node.value, i)
        elif isinstance(node, ast.AugAssign):
            self.expr(_as_load(node.target))  # `x += 1` reads x (and `df['a'] += 1` reads df['a'])
            value_binds = self.expr_binds(node.value)
            self.expr(node.value)
            self.store(node.target, value_binds)
        elif isinstance(node, ast.AnnAssign):
            if node.value is not None:
                value_binds = self.expr_binds(node.value)
                self.expr(node.value)
                self.store(node.target, value_binds)
                if self.s.certain and isinstance(node.target, ast.Name):
                    self.s.assigned[node.target.id] = node.value
        elif isinstance(node, (ast.Expr, ast.Return)):
            if node.value is not None:
                self.expr(node.value)
        elif isinstance(node, ast.If):
            self.expr(node.test)
            decided = self.decide(node.test)
            if decided is True:
                self.block(node.body)
                self.uncertain(lambda: self.block(node.orelse))
            elif decided is False:
                self.uncertain(lambda: self.block(node.body))
                self.block(node.orelse)
            else:
                self.uncertain(lambda: self.block(node.body), lambda: self.block(node.orelse))
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            self.expr(node.iter)
            self.forget_binds(node)
            if self.s.certain and self.runtime.nonempty(node.iter, self.snapshot(node.iter)):
                # The first iteration certainly runs, up to the first statement that may break/continue.
                self.store(node.target)
                self.loop_body(node.body)
                self.uncertain(lambda: self.block(node.orelse))
            else:
                self.uncertain(
                    lambda: self.store(node.target),
                    lambda: self.block(node.body),
                    lambda: self.block(node.orelse),
                )
        elif isinstance(node, ast.While):
            self.forget_binds(node)
            self.expr(node.test)
            if self.decide(node.test) is True:
                self.loop_body(node.body)  # the first iteration runs, up to a break/continue
                self.uncertain(lambda: self.block(node.body), lambda: self.block(node.orelse))
            else:
                self.uncertain(lambda: self.block(node.body), lambda: self.block(node.orelse))
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            plain = True
            for item in node.items:
                self.expr(item.context_expr)
                plain = plain and _context_is_plain(item.context_expr)
                if item.optional_vars is not None:
                    self.store(item.optional_vars)
            if plain:
                self.block(node.body)
            else:
                self.uncertain(lambda: self.block(node.body))
        elif isinstance(node, (ast.Try, ast.TryStar)):
            saved = self.s.handlers
            self.s.handlers = saved + tuple(_handler_types(h) for h in node.handlers)
            try:
                self.block(node.body)
            finally:
                self.s.handlers = saved
            for handler in node.handlers:
                if handler.name:
                    self.bind(handler.name)
                self.uncertain(lambda h=handler: self.block(h.body))  # type: ignore[misc]
            self.uncertain(lambda: self.block(node.orelse))
            self.block(node.finalbody)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for dec in node.decorator_list:
                self.expr(dec)
            self.arguments(node.args)
            self.bind(node.name)
            self.user_callables.add(node.name)
        elif isinstance(node, ast.ClassDef):
            for dec in node.decorator_list:
                self.expr(dec)
            for base in node.bases:
                self.expr(base)
            for kw in node.keywords:
                self.expr(kw.value)
            # The class body runs now, in its own namespace: its bindings do not leak, its reads do.
            outer_bound = set(self.s.bound)
            self.block(node.body)
            self.s.bound = outer_bound | {node.name}
            self.touch(node.name)
            self.user_callables.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            self.import_sites.append(ImportSite(node, self.s.certain, self.s.handlers, self.s.barrier))
            for alias in node.names:
                if alias.name == "*":
                    self.s.barrier = True  # binds names we cannot list
                    self.may_bind(None)
                    continue
                name = alias.asname or alias.name.split(".")[0]
                self.bind(name)
                self.library_names.add(name)
                if not self.s.certain:
                    continue  # a conditional import leaves the name's meaning open
                if isinstance(node, ast.Import):
                    self.s.imports[name] = alias.name if alias.asname else name
                    self.modules_imported.add(name)
                elif node.module and not node.level:
                    self.s.imports[name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    self.expr(_as_load(target))  # `del x` fails when x is unbound
                    self.touch(target.id)
                    self.library_names.discard(target.id)
                    if self.s.certain:  # certainly unbound from here on
                        self.s.bound.discard(target.id)
                        self.s.deleted.add(target.id)
                else:
                    self.store(target)
        elif isinstance(node, ast.Assert):
            self.expr(node.test)
            if node.msg is not None:
                self.uncertain(lambda: self.expr(node.msg))  # type: ignore[arg-type]
        elif isinstance(node, ast.Raise):
            if node.exc is not None:
                self.expr(node.exc)
            if node.cause is not None:
                self.expr(node.cause)
        elif isinstance(node, ast.Match):
            self.expr(node.subject)
            for case in node.cases:
                self.uncertain(lambda c=case: self.case(c))  # type: ignore[misc]
        elif isinstance(node, (ast.Global, ast.Nonlocal, ast.Pass, ast.Break, ast.Continue)):
            pass
        else:  # a statement kind added by a newer Python: assume the worst
            for sub in ast.walk(node):
                if isinstance(sub, ast.Name):
                    self.bind(sub.id)
            self.s.barrier = True
            self.may_bind(None)

    def loop_body(self, body: list[ast.stmt]) -> None:
        saved = self.s.certain
        for stmt in body:
            self.stmt(stmt)
            if _may_jump(stmt):
                self.s.certain = False
        self.s.certain = saved

    def case(self, case: ast.match_case) -> None:
        for sub in ast.walk(case.pattern):
            for attr in ("name", "rest"):
                value = getattr(sub, attr, None)
                if isinstance(value, str):
                    self.bind(value)
            if isinstance(sub, ast.expr):
                self.expr(sub)
        if case.guard is not None:
            self.expr(case.guard)
        self.block(case.body)

    def arguments(self, args: ast.arguments) -> None:
        for default in [*args.defaults, *(d for d in args.kw_defaults if d is not None)]:
            self.expr(default)

    def store(self, target: ast.expr, value_binds: frozenset[str] | None = None) -> None:
        """Evaluate the parts of an assignment target that are read, then bind or mutate.
        `value_binds`: the globals the code reachable from the stored value may bind (None: any)."""
        if isinstance(target, ast.Name):
            # Where the assignment may not run (a branch, a `try` body an exception may leave first), the
            # name may still hold its old value: both count.
            replaced = self.s.certain and not self.s.handlers
            before = frozenset() if replaced else self.name_binds(target.id)
            self.bind(target.id)
            self.s.binds_of[target.id] = _union(before, value_binds)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self.store(elt, value_binds)
        elif isinstance(target, ast.Starred):
            self.store(target.value, value_binds)
        elif isinstance(target, ast.Subscript):
            self.expr(target.value)
            self.expr(target.slice)
            self.record(target)  # the item assignment itself can fail (e.g. a str key on an array)
            self.taint_root(target, value_binds)
            self.touch_root(target)
        elif isinstance(target, ast.Attribute):
            self.expr(target.value)
            self.taint_root(target, value_binds)
            self.touch_root(target)

    def taint_root(self, node: ast.expr, value_binds: frozenset[str] | None) -> None:
        """`x.a = v` / `x[k] = v`: x now also reaches the code v reaches."""
        name = root_name(node)
        if name is not None:
            self.s.binds_of[name] = _union(self.name_binds(name), value_binds)

    def forget_binds(self, loop: ast.For | ast.AsyncFor | ast.While) -> None:
        """A loop body is walked once, but a later iteration sees what an earlier one stored: every name
        the loop binds or hands to a call may reach any code (None) in and after it."""
        for sub in ast.walk(loop):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, (ast.Store, ast.Del)):
                self.s.binds_of[sub.id] = None
            elif isinstance(sub, ast.Call):
                for part in ast.walk(sub):
                    if isinstance(part, ast.Name):
                        self.s.binds_of[part.id] = None

    def touch_root(self, node: ast.expr) -> None:
        name = root_name(node)
        if name is not None:
            self.touch(name)

    # ----- expressions ---------------------------------------------------------------------------
    def expr(self, node: ast.expr) -> None:
        if isinstance(node, ast.Lambda):
            self.arguments(node.args)
        elif isinstance(node, ast.IfExp):
            self.expr(node.test)
            decided = self.decide(node.test)
            if decided is None:
                self.uncertain(lambda: self.expr(node.body), lambda: self.expr(node.orelse))
            else:
                taken, skipped = (node.body, node.orelse) if decided else (node.orelse, node.body)
                self.expr(taken)
                self.uncertain(lambda: self.expr(skipped))
        elif isinstance(node, ast.BoolOp):
            # `a and b` evaluates b only when a is truthy (`or`: falsy): certain while the runtime says so
            self.expr(node.values[0])
            go_on = isinstance(node.op, ast.And)
            rest = list(node.values[1:])
            while rest and self.decide(node.values[len(node.values) - len(rest) - 1]) is go_on:
                self.expr(rest.pop(0))
            self.uncertain(lambda: self.exprs(rest))
        elif isinstance(node, ast.Compare):
            self.expr(node.left)
            self.expr(node.comparators[0])
            self.uncertain(lambda: self.exprs(node.comparators[1:]))
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp)):
            first = node.generators[0]
            self.expr(first.iter)
            if (
                self.s.certain
                and len(node.generators) == 1
                and not first.ifs
                and not first.is_async
                and self.runtime.nonempty(first.iter, self.snapshot(first.iter))
            ):
                self.comprehension(node)  # its first element is certainly computed
            else:
                self.uncertain(lambda: self.comprehension(node))
        elif isinstance(node, ast.GeneratorExp):  # lazy: runs only when consumed
            self.expr(node.generators[0].iter)
            self.uncertain(lambda: self.comprehension(node))
        elif isinstance(node, ast.NamedExpr):
            self.expr(node.value)
            self.bind(node.target.id)
        elif isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                pass
        elif isinstance(node, ast.Call):
            self.expr(node.func)
            for arg in node.args:
                self.expr(arg)
            for kw in node.keywords:
                self.expr(kw.value)
            self.record(node)
            fitting = self._fitting(node)
            self.call_effects(node)
            if fitting is not None:
                self.s.fitted[fitting[0]] = (fitting[1], node)
            return
        else:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.expr):
                    self.expr(child)
                elif isinstance(child, ast.keyword):
                    self.expr(child.value)
        self.record(node)

    def _fitting(self, call: ast.Call) -> tuple[str, ast.Call] | None:
        """`m.fit(...)` on a name this cell constructed: (name, the constructor call)."""
        func = call.func
        if not (self.s.certain and isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
            return None
        if func.attr not in ("fit", "fit_transform", "fit_predict"):
            return None
        name = func.value.id
        if name in self.s.constructed:
            return name, self.s.constructed[name]
        if name in self.s.fitted:
            return name, self.s.fitted[name][0]
        return None

    def comprehension(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp) -> None:
        for i, gen in enumerate(node.generators):
            if i:
                self.expr(gen.iter)
            self.store(gen.target)  # over-approximation: comprehension names do not leak in Python 3
            for cond in gen.ifs:
                self.expr(cond)
        if isinstance(node, ast.DictComp):
            self.expr(node.key)
            self.expr(node.value)
        else:
            self.expr(node.elt)


def walk_cell(
    tree: ast.Module,
    is_library: Callable[[str], bool],
    is_module: Callable[[str], bool] = lambda _: False,
    runtime: Callable[[list[Site]], Runtime] | None = None,
    imports: list[ImportSite] | None = None,
    global_binds: Callable[[str], frozenset[str] | None] = lambda _: None,
    is_undefined: Callable[[str], bool] = lambda _: False,
) -> list[Site]:
    """All expression sites of the cell, in evaluation order.

    `is_library(name)` says whether a kernel name is library code (a module, or an object whose calls
    cannot run the user's code); calls through any other name raise the barrier. `is_module(name)`
    says whether a kernel name is a module. `runtime(sites)` answers, from the sites walked so far,
    which conditions the runtime decides and which loops certainly iterate. `imports` receives the
    import statements, in order. `global_binds(name)` says which globals calling into the kernel object
    `name` may bind (None: any; the probe's `binds_globals`), `is_undefined(name)` whether the kernel
    certainly lacks the name.
    """
    walker = _Walker(is_library, is_module, global_binds, is_undefined)
    if runtime is not None:
        walker.runtime = runtime(walker.sites)
    walker.block(tree.body)
    if imports is not None:
        imports.extend(walker.import_sites)
    return walker.sites
