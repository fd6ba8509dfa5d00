"""What a call or a context manager may change: the vocabularies of library behaviour and the
walker's judgements built on them (whether a call may run user code, which objects it may change).

Everything errs on the safe side: a call is opaque (it may change any global) unless every name it
goes through is library code, and it changes its receiver and arguments unless known not to."""

from __future__ import annotations

import ast
import builtins
from collections.abc import Callable
from typing import Any

from .site import root_name

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

# Names through which a call can bind any global (beyond DYNAMIC_BUILTINS).
NAMESPACE_NAMES = DYNAMIC_BUILTINS | {"get_ipython", "__builtins__", "breakpoint", "compile", "__main__"}
# Attributes through which code reaches a namespace (a frame's, a function's, IPython's, sys.modules);
# `get_ipython().run_line_magic(...)` is judged by `opaque` (harmless magics only).
NAMESPACE_ATTRS = frozenset(
    {"__globals__", "f_globals", "f_locals", "f_back", "user_ns", "user_global_ns", "user_module",
     "__builtins__", "modules", "_getframe", "currentframe", "__dict__", "__setattr__", "import_module",
     "__import__"}
)  # fmt: skip
# Modules whose functions can bind the notebook's globals (sys.modules['__main__'], builtins.x = ...).
NAMESPACE_MODULES = frozenset(
    {"sys", "builtins", "__main__", "importlib", "inspect", "IPython", "ctypes", "gc", "runpy", "types",
     "code"}
)  # fmt: skip


def _union(a: frozenset[str] | None, b: frozenset[str] | None) -> frozenset[str] | None:
    return None if a is None or b is None else a | b


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
        "lower", "upper", "startswith", "endswith", "splitlines", "index", "unsqueeze", "softmax",
        "log_softmax", "sigmoid", "tanh", "relu", "exp", "log", "contiguous", "byte", "bool",
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


class CallEffects:
    """The walker's judgements about calls (flow._Walker inherits them)."""

    s: Any
    library_names: set[str]
    user_callables: set[str]
    modules_imported: set[str]
    is_library: Callable[[str], bool]
    is_module: Callable[[str], bool]
    global_binds: Callable[[str], frozenset[str] | None]
    is_undefined: Callable[[str], bool]

    def touch(self, name: str) -> None:
        raise NotImplementedError

    def call_effects(self, call: ast.Call) -> None:
        func = call.func
        opaque = self.opaque(call)
        # The globals this call may bind: those the code reachable from its callee and arguments may.
        binds = self.expr_binds(call) if opaque else None
        if opaque:
            self.s.barrier = True
            self.may_bind(binds)
        elif self.reaches_namespace(call):
            self.may_bind(None)  # `sys.modules['__main__'].__dict__.update(...)`
        else:
            # A library object the cell handed notebook code to (`pipe.func = f; pipe.fit(X)`).
            for sub in ast.walk(call):
                if isinstance(sub, ast.Name) and sub.id in self.s.binds_of:
                    self.may_bind(self.s.binds_of[sub.id])
        if isinstance(func, ast.Attribute):
            receiver = root_name(func.value)
            if (
                receiver is not None
                and not self.is_module_name(receiver)
                and (func.attr not in PURE_METHODS or _truthy_inplace(call))
            ):
                self.touch_with(receiver, opaque, binds)
        pure_callee = (isinstance(func, ast.Name) and func.id in PURE_BUILTINS) or self.leaves_arguments(call)
        if not pure_callee:
            for arg in [*call.args, *(kw.value for kw in call.keywords)]:
                value = arg.value if isinstance(arg, ast.Starred) else arg
                if isinstance(value, ast.Name):
                    self.touch_with(value.id, opaque, binds)
                elif isinstance(value, (ast.Tuple, ast.List, ast.Set, ast.Dict)):
                    for sub in ast.walk(value):
                        if isinstance(sub, ast.Name):
                            self.touch_with(sub.id, opaque, binds)

    def touch_with(self, name: str, opaque: bool, binds: frozenset[str] | None) -> None:
        """`name`'s object may be changed by the call: notebook code (an opaque call) may store into it
        anything the call reaches, so it reaches that code too."""
        if opaque:
            self.s.binds_of[name] = _union(self.name_binds(name), binds)
        self.touch(name)

    def may_bind(self, binds: frozenset[str] | None) -> None:
        if binds is None:
            self.s.rebinds_any = True
        else:
            self.s.rebinds.update(binds)

    def reaches_namespace(self, call: ast.Call) -> bool:
        """A library call through a module that can reach the notebook's namespace (`sys`, `builtins`)."""
        name = root_name(call.func)
        if name is None:
            return False
        path = self.s.imports.get(name) or (name if self.is_module_name(name) else "")
        return path.split(".", 1)[0] in NAMESPACE_MODULES or any(
            isinstance(sub, ast.Attribute) and sub.attr in NAMESPACE_ATTRS for sub in ast.walk(call)
        )

    def name_binds(self, name: str) -> frozenset[str] | None:
        """The globals the code reachable from `name`'s current value may bind (None: any)."""
        if name in NAMESPACE_NAMES:
            return None
        if name in self.s.binds_of:
            known: frozenset[str] | None = self.s.binds_of[name]
            return known
        imported = self.s.imports.get(name)
        if imported is not None:
            return None if imported.split(".", 1)[0] in NAMESPACE_MODULES else frozenset()
        if name in self.s.bound or name in self.user_callables:
            return frozenset() if name in self.library_names else None
        known = self.global_binds(name)
        if known is not None:
            return known
        if self.is_undefined(name):
            return frozenset()  # no value: it reaches no code (reading it raises NameError)
        if hasattr(builtins, name) and self.library_name(name):
            return frozenset()
        return None

    def expr_binds(self, node: ast.expr) -> frozenset[str] | None:
        """The globals that evaluating `node` (calls included) may bind, from every name it reads."""
        out: set[str] = set()
        for sub in ast.walk(node):
            if isinstance(sub, ast.Attribute) and sub.attr in NAMESPACE_ATTRS:
                return None
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load):
                binds = self.name_binds(sub.id)
                if binds is None:
                    return None
                out |= binds
        return frozenset(out)

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
