"""Which expressions of a cell certainly run, and what may have changed before each of them.

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
import builtins
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Protocol

# Builtins that neither mutate their arguments nor run user code that could.
PURE_BUILTINS = frozenset(
    {
        "abs", "all", "any", "ascii", "bin", "bool", "bytes", "callable", "chr", "complex", "dict", "dir",
        "divmod", "enumerate", "float", "format", "frozenset", "hasattr", "hash", "hex", "id", "int",
        "isinstance", "issubclass", "iter", "len", "list", "max", "min", "oct", "ord", "pow", "print",
        "range", "repr", "reversed", "round", "set", "slice", "sorted", "str", "sum", "tuple", "type",
        "zip", "display",
    }
)  # fmt: skip
# Builtins that can define or change globals behind the walker's back.
DYNAMIC_BUILTINS = frozenset(
    {"exec", "eval", "globals", "locals", "vars", "setattr", "delattr", "__import__"}
)

# Methods that leave their receiver as it was (unless called with inplace=True).
PURE_METHODS = frozenset(
    {
        # pandas / numpy / torch reads
        "head", "tail", "describe", "info", "copy", "groupby", "sum", "mean", "median", "std", "var", "max",
        "min", "count", "value_counts", "nunique", "unique", "isna", "isnull", "notna", "notnull", "corr",
        "cov", "plot", "hist", "boxplot", "to_csv", "to_numpy", "to_list", "tolist", "astype", "query",
        "sort_values", "sort_index", "merge", "join", "drop", "drop_duplicates", "dropna", "fillna",
        "replace", "rename", "reset_index", "set_index", "apply", "map", "agg", "aggregate", "round", "abs",
        "any", "all", "argmax", "argmin", "idxmax", "idxmin", "reshape", "ravel", "flatten", "transpose",
        "squeeze", "sample", "filter", "select_dtypes", "get_dummies", "pivot", "pivot_table", "melt",
        "stack", "unstack", "iterrows", "itertuples", "items", "keys", "values", "get", "nlargest",
        "nsmallest", "cumsum", "diff", "shift", "rolling", "resample", "isin", "between", "clip", "where",
        "mask", "duplicated", "memory_usage", "equals", "dot", "item", "numpy", "detach", "clone", "size",
        "dim", "view", "float", "long", "int", "double", "nelement", "argsort", "format", "split", "strip",
        "lower", "upper", "startswith", "endswith", "splitlines", "index",
        # estimators and models: inference only
        "predict", "predict_proba", "predict_log_proba", "decision_function", "transform", "score",
        "get_params", "get_feature_names_out", "summary", "evaluate", "count_params", "get_layer",
        "get_weights", "parameters", "named_parameters", "state_dict", "children", "modules", "eval",
    }
)  # fmt: skip

# Library functions that change the objects they are given (not their receiver).
ARGUMENT_MUTATORS = frozenset(
    {"shuffle", "copyto", "put", "place", "putmask", "fill_diagonal", "update", "setdefault", "seed",
     "random_split", "apply_along_axis", "exec", "eval", "setattr", "delattr", "append", "extend",
     "insert", "remove", "pop", "clear", "sort", "reverse", "__setitem__"}
)  # fmt: skip

# Context managers that do not swallow exceptions, by the last part of the called name.
PLAIN_CONTEXTS = frozenset(
    {
        "open", "no_grad", "inference_mode", "enable_grad", "set_grad_enabled", "device", "GradientTape",
        "catch_warnings", "context", "option_context", "errstate", "axes_style", "plotting_context", "scope",
        "name_scope", "tqdm", "TemporaryDirectory", "record_function", "profile",
        "redirect_stdout", "redirect_stderr", "printoptions", "rc_context", "parallel_backend",
        "config_context", "threadpool_limits", "xkcd", "set_printoptions",
        "detect_anomaly", "default_device", "Session", "as_default", "start_run", "Timer",
    }
)  # fmt: skip


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


def _context_is_plain(expr: ast.expr) -> bool:
    func = expr.func if isinstance(expr, ast.Call) else expr
    last = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return last in PLAIN_CONTEXTS


def _truthy_inplace(call: ast.Call) -> bool:
    for kw in call.keywords:
        if kw.arg == "inplace":
            return not (isinstance(kw.value, ast.Constant) and kw.value.value is False)
        if kw.arg is None:
            return True  # **kwargs may carry inplace=True
    return False


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


class Runtime(Protocol):
    """What the walker asks the runtime view about the cell (checks/evaluate.py answers)."""

    def truth(self, node: ast.expr, site: Site) -> bool | None: ...

    def nonempty(self, node: ast.expr, site: Site) -> bool: ...


class _NoRuntime:
    def truth(self, node: ast.expr, site: Site) -> bool | None:
        return None

    def nonempty(self, node: ast.expr, site: Site) -> bool:
        return _nonempty(node)


class _Walker:
    def __init__(self, is_library: Callable[[str], bool], is_module: Callable[[str], bool]) -> None:
        self.is_library = is_library
        self.is_module = is_module
        self.runtime: Runtime = _NoRuntime()
        self.modules_imported: set[str] = set()  # names bound by `import x` / `import x as y` here
        self.sites: list[Site] = []
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
            self.expr(node.value)
            for target in node.targets:
                self.store(target)
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
            self.expr(node.value)
            self.store(node.target)
        elif isinstance(node, ast.AnnAssign):
            if node.value is not None:
                self.expr(node.value)
                self.store(node.target)
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
            for alias in node.names:
                if alias.name == "*":
                    self.s.barrier = True  # binds names we cannot list
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

    def store(self, target: ast.expr) -> None:
        """Evaluate the parts of an assignment target that are read, then bind or mutate."""
        if isinstance(target, ast.Name):
            self.bind(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self.store(elt)
        elif isinstance(target, ast.Starred):
            self.store(target.value)
        elif isinstance(target, ast.Subscript):
            self.expr(target.value)
            self.expr(target.slice)
            self.record(target)  # the item assignment itself can fail (e.g. a str key on an array)
            self.touch_root(target)
        elif isinstance(target, ast.Attribute):
            self.expr(target.value)
            self.touch_root(target)

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

    def call_effects(self, call: ast.Call) -> None:
        func = call.func
        if self.opaque(call):
            self.s.barrier = True
        if isinstance(func, ast.Attribute):
            receiver = root_name(func.value)
            if (
                receiver is not None
                and not self.is_module_name(receiver)
                and (func.attr not in PURE_METHODS or _truthy_inplace(call))
            ):
                self.touch(receiver)
        pure_callee = (isinstance(func, ast.Name) and func.id in PURE_BUILTINS) or self.leaves_arguments(call)
        if not pure_callee:
            for arg in [*call.args, *(kw.value for kw in call.keywords)]:
                value = arg.value if isinstance(arg, ast.Starred) else arg
                if isinstance(value, ast.Name):
                    self.touch(value.id)
                elif isinstance(value, (ast.Tuple, ast.List, ast.Set, ast.Dict)):
                    for sub in ast.walk(value):
                        if isinstance(sub, ast.Name):
                            self.touch(sub.id)

    def leaves_arguments(self, call: ast.Call) -> bool:
        """A library call that reads its arguments without changing them (`model.fit(X, y)`,
        `train_test_split(X, y)`, `np.mean(a)`): everything but the known in-place functions, torch's
        `*_` initialisers and transformers asked not to copy."""
        func = call.func
        last = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if not last or last in ARGUMENT_MUTATORS or last.endswith("_") or self.opaque(call):
            return False
        return not any(
            kw.arg == "copy" and isinstance(kw.value, ast.Constant) and kw.value.value is False
            for kw in call.keywords
        )

    def opaque(self, call: ast.Call) -> bool:
        """True when the call may run code of the user's (which can change any global)."""
        func = call.func
        name = root_name(func)
        if isinstance(func, ast.Name) and func.id in DYNAMIC_BUILTINS:
            return True
        if name is None:
            # `(y > 3).astype(int)`: a method of a value computed from library objects only runs
            # library code; anything else (`(lambda: ...)()`, `fns[0]()`) may run the user's
            if not (isinstance(func, ast.Attribute) and self.library_expr(func.value)):
                return True
        elif name == "get_ipython":
            # `get_ipython()` only returns the shell; %run, %store -r, %pylab can define anything.
            return not (isinstance(func, ast.Name) or _harmless_magic(call))
        elif not self.library_name(name):
            return True
        # A user callable handed to a library (df.apply(func), map(f, xs)) runs too.
        for arg in [*call.args, *(kw.value for kw in call.keywords)]:
            value = arg.value if isinstance(arg, ast.Starred) else arg
            if isinstance(value, ast.Name) and not self.library_name(value.id):
                return True
            if isinstance(value, ast.Lambda) and _lambda_calls_out(value):
                return True
        return False

    def is_module_name(self, name: str) -> bool:
        """`np` in `np.zeros(3)`: calling a module's functions does not change the module binding."""
        if name in self.s.bound:
            return name in self.modules_imported and name in self.s.imports  # still that import's binding
        return self.is_module(name)

    def library_name(self, name: str) -> bool:
        """Whether `name` certainly holds a builtin or a library object (whose methods run no user code)."""
        if name in self.library_names:
            return True
        if name in self.s.bound or name in self.user_callables:
            return False  # rebound in this cell by something we cannot vouch for
        return hasattr(builtins, name) or self.is_library(name)

    def library_expr(self, node: ast.expr) -> bool:
        """Whether evaluating `node` runs no user code and yields a library object or plain value."""
        for sub in ast.walk(node):
            if isinstance(sub, ast.Lambda):
                return False
            if isinstance(sub, ast.Call) and self.opaque(sub):
                return False
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load) and not self.library_name(sub.id):
                return False
        return True


# Line magics that never define or change user variables.
HARMLESS_MAGICS = frozenset(
    {"matplotlib", "pip", "conda", "load_ext", "reload_ext", "autoreload", "aimport", "config", "env", "cd",
     "pwd", "ls", "who", "whos", "precision", "xmode", "pdoc", "pinfo", "pinfo2", "psource", "history"}
)  # fmt: skip


def _harmless_magic(call: ast.Call) -> bool:
    """`get_ipython().system(...)` (a `!cmd` line) or a line magic from HARMLESS_MAGICS."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call)):
        return False
    if func.attr in ("system", "getoutput"):
        return True
    return (
        func.attr == "run_line_magic"
        and bool(call.args)
        and (isinstance(call.args[0], ast.Constant) and call.args[0].value in HARMLESS_MAGICS)
    )


def _lambda_calls_out(lam: ast.Lambda) -> bool:
    params = {a.arg for a in [*lam.args.posonlyargs, *lam.args.args, *lam.args.kwonlyargs]}
    for sub in ast.walk(lam.body):
        if isinstance(sub, ast.Call):
            name = root_name(sub.func)
            if name is None or (name not in params and name not in PURE_BUILTINS):
                return True
        if isinstance(sub, ast.NamedExpr):
            return True
    return False


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


def walk_cell(
    tree: ast.Module,
    is_library: Callable[[str], bool],
    is_module: Callable[[str], bool] = lambda _: False,
    runtime: Callable[[list[Site]], Runtime] | None = None,
) -> list[Site]:
    """All expression sites of the cell, in evaluation order.

    `is_library(name)` says whether a kernel name is library code (a module, or an object whose calls
    cannot run the user's code); calls through any other name raise the barrier. `is_module(name)`
    says whether a kernel name is a module. `runtime(sites)` answers, from the sites walked so far,
    which conditions the runtime decides and which loops certainly iterate.
    """
    walker = _Walker(is_library, is_module)
    if runtime is not None:
        walker.runtime = runtime(walker.sites)
    walker.block(tree.body)
    return walker.sites
