"""Runtime probe: runs INSIDE the user's kernel and describes the objects a target cell is about to use.

``crane_jupyterlab.kernel.client`` sends this file as source and calls ``run(source, options)``. At import
only the standard library is loaded; numpy, pandas, torch, tensorflow, keras, sklearn, scipy, PIL and
matplotlib are looked up in ``sys.modules`` and never imported. ``run`` never raises, never prints, never
evaluates code from the cell, never consumes an iterator and leaves the user namespace untouched. User-defined
properties, ``__getattr__``, ``__repr__``, ``__len__`` and ``__eq__`` are not called (map-style datasets are
the one exception: sampling them is the point, and it runs under the time budget).

Result: see docs/architecture.md section 1. Every fact is ``{"cat": "S"|"R"|"V", "key": str, "value": json}``
with these stable keys (category in brackets):

- any object: ``len`` [S], ``shape`` [S], ``dtype`` [R], ``value`` [V] (scalars, small containers),
  ``items`` [V] (elements of a small container), ``keys`` [S] (dict keys), ``element_types`` [R],
  ``signature`` [R] (callables), ``attrs`` [V] (instance attributes of a plain object), ``repr`` [V],
  ``close`` [S] (names close to a missing attribute/key/column), ``note`` [R] (why something was not read),
  ``undefined_globals`` [S] (globals a user function reads that the kernel lacks).
- 1-D data and frame columns: ``nan`` [V] (count), ``min``/``max`` [V], ``unique`` [V] (count), ``kind`` [V]
  (binary, categorical, continuous, many-valued, constant, text, empty, all-nan), ``examples`` [V],
  ``counts`` [V] (``[[value, count], ...]``: most frequent first, then the least frequent), ``sampled`` [V]
  (rows the stats ran on).
- DataFrame: ``columns`` [S] (names, capped), ``columns_more`` [S], ``dtypes`` [R] (``{dtype: count}``),
  ``non_numeric_columns`` [R] (wide frames),
  ``nan_columns`` [V] (``{column: nan count}``); children are the columns, expr ``df['col']``.
- torch: ``device`` [R], ``requires_grad`` [R], ``contiguous`` [R]; optimizer ``lr`` [V]; nn.Module
  ``class`` [R], ``training`` [V], ``param_dtype``/``param_device``/``param_requires_grad`` [R],
  ``n_params`` [S], ``last_out_features`` [S]; layers (children)
  carry ``in_features``/``out_features``/``in_channels``/``out_channels``/``kernel_size``/
  ``num_embeddings``/``embedding_dim``/``num_features``/``normalized_shape`` [S], ``weight_dtype`` [R];
  DataLoader ``batch_size``/``drop_last``/``num_workers`` [S], ``shuffle`` [V], ``collate_fn`` [R], child
  ``.dataset``; Dataset ``len``/``sample_shapes``/``batch_shape`` [S], ``labels`` [V].
- tensorflow/keras: ``element_spec`` [R], ``cardinality`` [S]; models ``input_shape``/``output_shape`` [S],
  ``last_units`` [S], ``last_activation`` [R], ``loss`` [R], ``compiled``/``built`` [V];
  image iterators ``samples``/``num_classes``/``batch_size``/``image_shape``/``target_size`` [S],
  ``class_indices`` [V], ``class_mode``/``color_mode`` [R].
- sklearn: ``class`` [R], ``fitted`` [V], ``n_features_in_`` [S], ``feature_names_in_`` [R],
  ``classes_`` [V], ``n_outputs_`` [S], ``steps`` [R], ``params`` [R] (non-default constructor params),
  ``columns_used`` [S] (ColumnTransformer).
- scipy sparse: ``nnz`` [S], ``format`` [R]; PIL image: ``size`` [S], ``mode`` [R].
- module entries (``modules``): ``version``; torch adds ``grad_enabled`` and ``cuda_available`` [V].
- call checks add entries such as ``plt.style.use('x')`` with ``available`` [V] and ``close`` [S]; files the
  cell opens: ``path '...'`` entries with ``exists`` [V].
"""

from __future__ import annotations

import abc
import ast
import builtins
import contextlib
import difflib
import dis
import gc
import inspect
import io
import math
import sys
import time
import types
import warnings
from collections.abc import Callable, Iterator, Mapping
from typing import Any

PROBE_VERSION = 1

DEFAULT_OPTIONS: dict[str, Any] = {
    "max_columns": 20,
    "probe_samples": 10,
    "budget_ms": 150.0,
    "max_chars": 80,
    "docs": False,
    "history": False,
}

# Libraries whose own properties, __getattr__, __getitem__ and __repr__ we are willing to call.
TRUSTED_ROOTS = frozenset(
    {
        "builtins", "numpy", "pandas", "torch", "tensorflow", "keras", "tf_keras", "sklearn", "scipy",
        "PIL", "matplotlib", "seaborn", "statsmodels", "collections", "datetime", "decimal", "fractions",
        "pathlib", "re", "functools", "itertools", "types", "typing",
    }
)  # fmt: skip
# Names an IPython kernel provides without the user defining them.
IPYTHON_NAMES = frozenset({"display", "get_ipython", "In", "Out", "exit", "quit", "_", "__", "___"})
SAFE_SCALARS = (bool, int, float, complex, str, bytes, type(None))
ROW_SAMPLE = 50_000  # frames/series longer than this are described from an evenly spaced sample
ARRAY_SAMPLE = 200_000  # array/tensor elements scanned at most for NaN/min/max
UNIQUE_LIMIT = 100_000  # elements at most for unique counts
MAX_ENTRIES = 40
HISTORY_CHARS = 400_000  # executed cells returned with options.history, newest first until this size
MAX_ITEMS = 20  # elements of a container shown
COLUMN_KWARGS = frozenset(
    {
        "x", "y", "hue", "on", "left_on", "right_on", "by", "columns", "subset", "col", "row", "index",
        "values", "size", "style", "id_vars", "value_vars", "column", "weights", "units", "stratify_col",
    }
)  # fmt: skip
COLUMN_METHODS = frozenset(
    {
        "groupby", "drop", "sort_values", "set_index", "pivot", "pivot_table", "value_counts", "nlargest",
        "nsmallest", "explode", "pop", "dropna", "get", "melt", "duplicated", "drop_duplicates",
    }
)  # fmt: skip
# methods whose result has the receiver's columns, so `df.m(...)['col']` needs 'col' in df
COLUMN_KEEPING = frozenset(
    {
        "groupby", "sort_values", "sort_index", "dropna", "fillna", "head", "tail", "query", "copy",
        "reset_index", "drop_duplicates", "sample", "rolling", "expanding", "resample", "astype", "replace",
        "loc", "iloc", "where", "mask", "ffill", "bfill", "interpolate", "round", "abs", "clip", "nlargest",
        "nsmallest",
    }
)  # fmt: skip
# calls that open a file or folder named by their first argument (or one of PATH_KWARGS)
PATH_FUNCS = frozenset(
    {
        "read_csv", "read_excel", "read_json", "read_parquet", "read_table", "read_pickle", "read_feather",
        "read_hdf", "read_fwf", "load", "loadtxt", "genfromtxt", "fromfile", "open", "imread", "load_img",
        "flow_from_directory", "image_dataset_from_directory", "load_model", "load_weights", "listdir",
        "read_file", "load_state_dict_from_url",
    }
)  # fmt: skip
PATH_KWARGS = frozenset(
    {"path", "filepath_or_buffer", "fname", "file", "filename", "filepath", "directory", "path_or_buf", "io"}
)
_NOKEY = object()
_MISSING = object()


# ----------------------------------------------------------------------------------------------------
# small helpers
# ----------------------------------------------------------------------------------------------------


def _isinst(obj: Any, cls: type | tuple[type, ...]) -> bool:
    """isinstance() without the `obj.__class__` fallback, which runs a user property on a mismatch."""
    return issubclass(type(obj), cls)


def _isfunction(obj: Any) -> bool:
    return _isinst(obj, types.FunctionType)


def _ismethod(obj: Any) -> bool:
    return _isinst(obj, types.MethodType)


def _isbuiltin(obj: Any) -> bool:
    return _isinst(obj, types.BuiltinFunctionType)


def _isclass(obj: Any) -> bool:
    return _isinst(obj, type)


_ROUTINES = (
    types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.MethodDescriptorType,
    types.WrapperDescriptorType, types.MethodWrapperType, types.ClassMethodDescriptorType,
)  # fmt: skip


def _isroutine(obj: Any) -> bool:
    return _isinst(obj, _ROUTINES)


def _fact(cat: str, key: str, value: Any) -> dict[str, Any]:
    return {"cat": cat, "key": key, "value": _jsonable(value)}


def _entry(expr: str, type_name: str) -> dict[str, Any]:
    return {"expr": expr, "type": type_name, "facts": [], "children": [], "missing": False, "error": None}


def _jsonable(value: Any, depth: int = 0) -> Any:
    """Map a value to plain JSON (no NaN/inf, tuples to lists, numpy scalars to Python)."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value) if abs(value) < 2**63 else f"<int of {value.bit_length()} bits>"
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return float(value)
    if depth > 6:
        return "..."
    if isinstance(value, (list, tuple)):
        return [_jsonable(v, depth + 1) for v in value[:200]]
    if isinstance(value, dict):
        return {str(k): _jsonable(v, depth + 1) for k, v in list(value.items())[:200]}
    scalar = _py_scalar(value)
    if scalar is not _MISSING:
        return _jsonable(scalar, depth + 1)
    return _type_name(value)


def _py_scalar(value: Any) -> Any:
    """numpy/torch scalar -> Python scalar, else _MISSING (only trusted types are asked)."""
    root = _root(type(value))
    if root in ("numpy", "torch", "tensorflow") and getattr(value, "shape", None) in ((), []):
        try:
            item = value.item()
        except Exception:
            return _MISSING
        if isinstance(item, SAFE_SCALARS):
            return item
    return _MISSING


def _root(tp: type) -> str:
    try:
        mod = type.__getattribute__(tp, "__module__")
    except Exception:
        return ""
    return mod.split(".", 1)[0] if isinstance(mod, str) else ""


def _trusted(tp: type) -> bool:
    return _root(tp) in TRUSTED_ROOTS


def _type_name(obj: Any) -> str:
    """Module-qualified type name, shortened to the public top package (pandas.DataFrame, torch.Tensor)."""
    tp = type(obj)
    try:
        name = type.__getattribute__(tp, "__qualname__")
        mod = type.__getattribute__(tp, "__module__")
    except Exception:
        return "object"
    root = mod.split(".", 1)[0] if isinstance(mod, str) else ""
    if root == "builtins":
        return str(name)
    if root in TRUSTED_ROOTS and "." not in str(name):
        top = sys.modules.get(root)
        if top is not None and _module_dict(top).get(name) is tp:
            return f"{root}.{name}"
    return f"{mod}.{name}"


def _short_type(obj: Any) -> str:
    name = _type_name(obj)
    return name.rsplit(".", 1)[-1]


def _module_dict(mod: Any) -> Mapping[str, Any]:
    """A module's or class's namespace (a class gives a mappingproxy), read without user code."""
    try:
        d = object.__getattribute__(mod, "__dict__")
    except Exception:
        return {}
    return d if type(d) in (dict, types.MappingProxyType) else {}


def _inst_dict(obj: Any) -> dict[str, Any]:
    """The instance __dict__ read without running user __getattribute__/properties."""
    try:
        d = object.__getattribute__(obj, "__dict__")
    except Exception:
        return {}
    return d if type(d) is dict else {}


def _mro(tp: type) -> tuple[type, ...]:
    try:
        mro = type.__getattribute__(tp, "__mro__")
    except Exception:
        return (tp,)
    return tuple(mro) if isinstance(mro, tuple) else (tp,)


def _is(obj: Any, root: str, *names: str) -> bool:
    """True when a class in type(obj).__mro__ is named one of `names` and lives in package `root`."""
    for cls in _mro(type(obj)):
        try:
            cname = type.__getattribute__(cls, "__name__")
        except Exception:
            continue
        if cname in names and _root(cls) == root:
            return True
    return False


def _trim(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    half = max(limit // 2 - 2, 1)
    return text[:half] + " <...> " + text[-half:]


def _safe_repr(obj: Any, ctx: _Ctx, depth: int = 0, seen: set[int] | None = None) -> str:
    """Bounded repr that only runs builtin or trusted-library __repr__ code; cycles become `[...]`."""
    limit = ctx.max_chars
    tp = type(obj)
    if tp in (bool, int, float, complex, type(None)):
        try:
            return _trim(repr(obj), limit)
        except Exception:
            return f"<{tp.__name__}>"
    if tp in (str, bytes):
        return _trim(repr(obj[:limit]), limit) + ("..." if len(obj) > limit else "")
    seen = seen if seen is not None else set()
    if tp in (list, tuple, set, frozenset, dict):
        if id(obj) in seen or depth > 2:
            return "[...]" if tp is list else "{...}" if tp in (dict, set) else "(...)"
        seen.add(id(obj))
        parts: list[str] = []
        size = 0
        items: Iterator[Any] = iter(obj.items()) if tp is dict else iter(obj)
        n = len(obj)
        for i, item in enumerate(items):
            if i >= MAX_ITEMS or size > limit:
                parts.append(f"... (+{n - i})")
                break
            if tp is dict:
                k, v = item
                part = f"{_safe_repr(k, ctx, depth + 1, seen)}: {_safe_repr(v, ctx, depth + 1, seen)}"
            else:
                part = _safe_repr(item, ctx, depth + 1, seen)
            parts.append(part)
            size += len(part) + 2
        seen.discard(id(obj))
        inner = ", ".join(parts)
        if tp is list:
            return f"[{inner}]"
        if tp is tuple:
            return f"({inner}{',' if n == 1 else ''})"
        if tp is dict:
            return "{" + inner + "}"
        return ("{" + inner + "}") if n else f"{tp.__name__}()"
    scalar = _py_scalar(obj)
    if scalar is not _MISSING:
        return _safe_repr(scalar, ctx, depth, seen)
    if _trusted(tp) and _is_plainish(obj):
        try:
            return _trim(repr(obj), limit)
        except Exception:
            pass
    return f"<{_type_name(obj)}>"


def _is_plainish(obj: Any) -> bool:
    """Library objects whose repr is short and cheap (dtypes, devices, shapes, paths), not data holders."""
    return (
        _is(obj, "numpy", "dtype")
        or _is(obj, "torch", "device", "dtype", "Size")
        or _is(obj, "pathlib", "PurePath")
        or _is(obj, "tensorflow", "TensorShape", "DType")
        or _is(obj, "datetime", "date", "timedelta")
    )


def _close(name: str, options: list[str]) -> list[str]:
    low = {o.lower().strip(): o for o in options}
    hits = difflib.get_close_matches(name, options, n=3, cutoff=0.6)
    extra = low.get(name.lower().strip())
    if extra is not None and extra not in hits:
        hits.insert(0, extra)
    return hits[:3]


def _safe_dir(obj: Any) -> list[str]:
    """Attribute names from the instance dict and the class dicts (no user __dir__)."""
    names: set[str] = set(k for k in _inst_dict(obj) if isinstance(k, str))
    for cls in _mro(type(obj)):
        names.update(k for k in _module_dict(cls) if isinstance(k, str))
    if _isinst(obj, types.ModuleType):
        names.update(k for k in _module_dict(obj) if isinstance(k, str))
    return sorted(n for n in names if not n.startswith("__"))


class _Ctx:
    """Per-call state: options, deadline, library modules and collected results."""

    def __init__(self, opts: dict[str, Any], t0: float) -> None:
        self.max_columns = _opt_int(opts, "max_columns", 1, 500)
        self.probe_samples = _opt_int(opts, "probe_samples", 0, 100)
        self.max_chars = _opt_int(opts, "max_chars", 20, 2000)
        budget = opts.get("budget_ms", DEFAULT_OPTIONS["budget_ms"])
        budget = budget if isinstance(budget, (int, float)) and not isinstance(budget, bool) else 150.0
        # The budget is CPU time of this thread, so a busy machine does not starve the description;
        # wall time is capped at three budgets for code that sleeps or waits (dataset __getitem__ I/O).
        # thread_time() can cost a millisecond per call in sandboxes, so it is read only once the
        # cheap wall clock says the budget may be spent.
        self.budget = max(float(budget), 1.0) / 1000.0
        self.cpu0 = time.thread_time()
        self.soft = t0 + self.budget
        self.hard = t0 + 3 * self.budget
        self.exhausted = False
        self.libs: set[str] = set()  # top packages of the objects described

    def over(self) -> bool:
        if self.exhausted:
            return True
        now = time.perf_counter()
        if now < self.soft:
            return False
        if now > self.hard or time.thread_time() - self.cpu0 > self.budget:
            self.exhausted = True
        else:
            self.soft = now + self.budget / 10  # the machine is busy, not us: look again a bit later
        return self.exhausted


def _opt_int(opts: dict[str, Any], key: str, lo: int, hi: int) -> int:
    value = opts.get(key, DEFAULT_OPTIONS[key])
    if not isinstance(value, int) or isinstance(value, bool):
        value = DEFAULT_OPTIONS[key]
    return int(min(max(value, lo), hi))


# ----------------------------------------------------------------------------------------------------
# safe attribute / item resolution
# ----------------------------------------------------------------------------------------------------


class _Unsafe(Exception):
    """The value exists only behind user code (a property, __getattr__, __getitem__): not evaluated."""


def _get_attr(obj: Any, name: str) -> Any:
    """Attribute value without running user code. Raises AttributeError (missing) or _Unsafe."""
    if _isinst(obj, types.ModuleType):
        d = _module_dict(obj)
        if name in d:
            return d[name]
        modname = d.get("__name__")
        sub = sys.modules.get(f"{modname}.{name}") if isinstance(modname, str) else None
        if sub is not None:
            return sub
        if not _trusted_module(obj):
            raise _Unsafe("module __getattr__ not evaluated")
        if _is_unimported_submodule(d, name):
            raise _Unsafe("submodule not imported yet")
        return getattr(obj, name)  # PEP 562 hooks of trusted libraries (deprecations, lazy names)
    try:
        static = inspect.getattr_static(obj, name)
    except AttributeError:
        static = _MISSING
    tp = type(obj)
    if name in _inst_dict(obj):
        return static
    if not _owner_trusted(tp, "__getattribute__"):
        raise _Unsafe("custom __getattribute__ not evaluated")  # getattr() would run it
    if static is _MISSING:
        hook = inspect.getattr_static(tp, "__getattr__", None)
        if hook is None:
            raise AttributeError(name)
        if not _owner_trusted(tp, "__getattr__"):
            raise _Unsafe("dynamic attribute (__getattr__ not evaluated)")
        return getattr(obj, name)
    if not hasattr(type(static), "__get__"):
        return static
    if isinstance(static, (staticmethod, classmethod)) or _isfunction(static):
        return getattr(obj, name) if _trusted(type(static)) else static
    if _owner_trusted(tp, name) and _trusted(type(static)):
        return getattr(obj, name)
    if isinstance(static, property) or not _trusted(type(static)):
        raise _Unsafe("property not evaluated")
    return getattr(obj, name)


def _trusted_module(mod: Any) -> bool:
    name = _module_dict(mod).get("__name__")
    return isinstance(name, str) and name.split(".", 1)[0] in TRUSTED_ROOTS


def _is_unimported_submodule(d: Mapping[str, Any], name: str) -> bool:
    paths = d.get("__path__")
    if not paths:
        return False
    try:
        from importlib.machinery import PathFinder

        return PathFinder.find_spec(name, list(paths)) is not None
    except Exception:
        return True


def _owner_trusted(tp: type, name: str) -> bool:
    for cls in _mro(tp):
        if name in _module_dict(cls):
            return _trusted(cls)
    return False


def _get_item(obj: Any, key: Any) -> Any:
    """Constant subscript without user code. Raises KeyError/IndexError (missing) or _Unsafe."""
    tp = type(obj)
    if tp in (list, tuple, str, range):
        if not isinstance(key, int):
            raise _Unsafe("non-integer index")
        if -len(obj) <= key < len(obj):
            return obj[key]
        raise IndexError(key)
    if tp is dict:
        if isinstance(key, (str, int, float, bool, type(None))):
            for k in obj:
                if type(k) is type(key) and k == key:
                    return obj[k]
        raise KeyError(key)
    if _is(obj, "torch", "Sequential", "ModuleList", "ModuleDict", "ParameterList"):
        return obj[key]
    if _is(obj, "numpy", "ndarray") or _is(obj, "torch", "Tensor"):
        shape = tuple(obj.shape)
        if isinstance(key, int) and shape:
            if -shape[0] <= key < shape[0]:
                return obj[key]
            raise IndexError(key)
        raise _Unsafe("index kind not evaluated")
    raise _Unsafe("__getitem__ not evaluated")


# ----------------------------------------------------------------------------------------------------
# the cell's AST: free names, attribute chains, constant subscripts, calls
# ----------------------------------------------------------------------------------------------------


class _Ref:
    """One chain as written: root name plus attribute/constant-subscript steps."""

    def __init__(self, root: str, ops: list[tuple[str, Any]], pos: int, store: bool) -> None:
        self.root, self.ops, self.pos, self.store = root, ops, pos, store


class _Call:
    def __init__(self, root: str | None, ops: list[tuple[str, Any]], pos: int) -> None:
        self.root, self.ops, self.pos = root, ops, pos
        self.method: str | None = None
        self.func: ast.expr | None = None  # the callee as written, for +D docs
        self.paths: list[ast.expr] = []  # arguments naming a file the call opens
        self.pos_strings: list[str] = []
        self.kw_strings: dict[str, list[str]] = {}
        self.arg_names: list[str] = []
        self.kw_names: dict[str, str] = {}
        # The argument shape, for binding to the callee's signature: None when *args/**kwargs unpack.
        self.n_pos: int | None = None
        self.keywords: list[str] | None = None
        self.text = ""  # the call as written (ast.unparse), the key of its entry
        self.origin: tuple[str, str] | None = None  # (module, name) of a callee this cell imports


def _const_key(node: ast.expr) -> Any:
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float, bool)):
        return node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) is int
    ):
        return -node.operand.value
    if isinstance(node, (ast.List, ast.Tuple)) and node.elts:
        keys = [_const_key(e) for e in node.elts]
        if all(isinstance(k, str) for k in keys):
            return tuple(keys) if isinstance(node, ast.Tuple) else list(keys)
    return _NOKEY


def _loc_column(node: ast.Subscript) -> Any:
    """The constant column part of `x.loc[rows, 'col']` / `x.loc[rows, ['a', 'b']]`, else None."""
    sl = node.slice
    loc = isinstance(node.value, ast.Attribute) and node.value.attr == "loc"
    if loc and isinstance(sl, ast.Tuple) and len(sl.elts) == 2:
        key = _const_key(sl.elts[1])
        if isinstance(key, (str, list)):
            return key
    return None


def _strings(node: ast.expr) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


class _Scanner(ast.NodeVisitor):
    """Walks the cell in execution order, tracking which names are bound before they are read."""

    def __init__(self) -> None:
        self.bound: set[str] = set()
        self.scopes: list[set[str]] = []
        self.free: list[str] = []
        self.deleted_reads: list[str] = []
        self.deleted: set[str] = set()
        self.refs: list[_Ref] = []
        self.calls: list[_Call] = []
        self.imports: list[tuple[str, str]] = []
        self.created: dict[tuple[str, Any], int] = {}
        self.deferred: list[tuple[ast.AST, list[set[str]]]] = []
        self.star_import = False
        self.pos = 0
        self.from_imports: dict[str, tuple[str, str]] = {}
        self.constructed: dict[str, ast.expr] = {}

    # --- names -----------------------------------------------------------------------------------
    def _is_free(self, name: str) -> bool:
        return not any(name in s for s in self.scopes) and name not in self.bound

    def _read(self, name: str) -> None:
        if not self._is_free(name):
            return
        if name in self.deleted and not self.scopes:
            if name not in self.deleted_reads:
                self.deleted_reads.append(name)
        elif name not in self.free:
            self.free.append(name)

    def _bind(self, name: str) -> None:
        if self.scopes:
            self.scopes[-1].add(name)
        else:
            self.bound.add(name)
            self.deleted.discard(name)

    def visit_Name(self, node: ast.Name) -> None:
        self.pos += 1
        if isinstance(node.ctx, ast.Load):
            self._read(node.id)
        elif isinstance(node.ctx, ast.Store):
            self._bind(node.id)
        else:  # del x: reads x, then x is gone
            self._read(node.id)
            if not self.scopes:
                self.bound.discard(node.id)
                self.deleted.add(node.id)

    # --- statements in execution order ----------------------------------------------------------
    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        for t in node.targets:
            self.visit(t)
            if isinstance(t, ast.Name) and not self.scopes:
                # `clf = LogisticRegression(...)`: later `clf.fit` can be documented from the class
                ctor = node.value.func if isinstance(node.value, ast.Call) else None
                if isinstance(ctor, (ast.Name, ast.Attribute)):
                    self.constructed[t.id] = ctor
                else:
                    self.constructed.pop(t.id, None)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.visit(node.value)
        if isinstance(node.target, ast.Name):
            self._read(node.target.id)
            self._bind(node.target.id)
        else:
            self._chain(node.target, aug=True)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)
            self.visit(node.target)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.visit(node.value)
        self.bound.add(node.target.id) if not [s for s in self.scopes if s] else self._bind(node.target.id)

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        self.visit(node.iter)
        self.visit(node.target)
        for stmt in [*node.body, *node.orelse]:
            self.visit(stmt)

    visit_AsyncFor = visit_For

    def visit_With(self, node: ast.With | ast.AsyncWith) -> None:
        for item in node.items:
            self.visit(item.context_expr)
            if item.optional_vars is not None:
                self.visit(item.optional_vars)
        for stmt in node.body:
            self.visit(stmt)

    visit_AsyncWith = visit_With

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.type is not None:
            self.visit(node.type)
        if node.name:
            self._bind(node.name)
        for stmt in node.body:
            self.visit(stmt)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._bind(alias.asname or alias.name.split(".")[0])
            self.imports.append((alias.asname or alias.name.split(".")[0], alias.name))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            if alias.name == "*":
                self.star_import = True
                continue
            self._bind(alias.asname or alias.name)
            if node.module and not node.level and not self.scopes:
                self.from_imports[alias.asname or alias.name] = (node.module, alias.name)
        if node.module and not node.level:
            self.imports.append(("", node.module))

    def visit_Global(self, node: ast.Global) -> None:
        return

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        args = node.args
        for d in [*args.defaults, *[d for d in args.kw_defaults if d is not None]]:
            self.visit(d)
        if not isinstance(node, ast.Lambda):
            for dec in node.decorator_list:
                self.visit(dec)
            self._bind(node.name)
        params = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
        params.update(a.arg for a in (args.vararg, args.kwarg) if a is not None)
        local = params | _assigned_in(node)
        self.deferred.append((node, [*self.scopes, local]))

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._function(node)

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._function(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for n in [*node.decorator_list, *node.bases, *[k.value for k in node.keywords]]:
            self.visit(n)
        self.scopes.append(set())
        for stmt in node.body:
            self.visit(stmt)
        self.scopes.pop()
        self._bind(node.name)

    def _comprehension(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp) -> None:
        gens = node.generators
        self.visit(gens[0].iter)
        self.scopes.append(set())
        for i, gen in enumerate(gens):
            if i:
                self.visit(gen.iter)
            self.visit(gen.target)
            for cond in gen.ifs:
                self.visit(cond)
        if isinstance(node, ast.DictComp):
            self.visit(node.key)
            self.visit(node.value)
        else:
            self.visit(node.elt)
        self.scopes.pop()

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _comprehension

    def visit_MatchAs(self, node: ast.MatchAs) -> None:
        if node.pattern is not None:
            self.visit(node.pattern)
        if node.name:
            self._bind(node.name)

    def visit_MatchStar(self, node: ast.MatchStar) -> None:
        if node.name:
            self._bind(node.name)

    def visit_MatchMapping(self, node: ast.MatchMapping) -> None:
        self.generic_visit(node)
        if node.rest:
            self._bind(node.rest)

    # --- chains and calls -------------------------------------------------------------------------
    def visit_Attribute(self, node: ast.Attribute) -> None:
        self._chain(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        self._chain(node)

    def _chain(self, node: ast.expr, aug: bool = False) -> tuple[str | None, list[tuple[str, Any]]]:
        ops: list[tuple[str, Any]] = []
        cur = node
        slices: list[ast.expr] = []
        kept: list[Any] = []
        while isinstance(cur, (ast.Attribute, ast.Subscript)):
            if isinstance(cur, ast.Attribute):
                ops.append(("attr", cur.attr))
            else:
                key = _const_key(cur.slice)
                if key is _NOKEY:
                    slices.append(cur.slice)
                    loc_col = _loc_column(cur)
                    if loc_col is not None:  # df.loc[rows, 'col']
                        kept.append(loc_col)
                    if ops and ops[-1][0] == "item":  # df[mask]['col']: the rows change, not the columns
                        kept.append(ops[-1][1])
                    ops = []
                else:
                    ops.append(("item", key))
            cur = cur.value
        ops.reverse()
        root: str | None = None
        if isinstance(cur, ast.Name):
            root = cur.id
            free = self._is_free(root)
            self.visit(cur)
            if free:
                self.refs.extend(_Ref(root, [("item", k)], self.pos, False) for k in kept)
            if free and ops:
                store = isinstance(getattr(node, "ctx", None), (ast.Store, ast.Del)) and not aug
                self.refs.append(_Ref(root, ops if not store else ops[:-1], self.pos, False))
                if store and ops[-1][0] == "item" and len(ops) == 1:
                    self.created.setdefault((root, _hashable(ops[-1][1])), self.pos)
            elif not free:
                root = None
        else:
            if isinstance(cur, ast.Call) and ops and ops[0][0] == "item":
                self._column_after_call(cur, ops[0][1])
            self.visit(cur)
        for s in reversed(slices):
            self.visit(s)
        return root, ops

    def _column_after_call(self, call: ast.Call, key: Any) -> None:
        """`df.groupby('a')['b']`: 'b' must be a column of df when every method keeps df's columns."""
        node: ast.expr = call
        while True:
            if isinstance(node, ast.Call):
                node = node.func
            elif isinstance(node, ast.Subscript) or (
                isinstance(node, ast.Attribute) and node.attr in COLUMN_KEEPING
            ):
                node = node.value
            else:
                break
        if isinstance(node, ast.Name) and self._is_free(node.id) and isinstance(key, (str, list)):
            self.refs.append(_Ref(node.id, [("item", key)], self.pos, False))

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, (ast.Name, ast.Attribute, ast.Subscript)):
            if isinstance(func, ast.Name):
                root: str | None = func.id if self._is_free(func.id) else None
                ops: list[tuple[str, Any]] = []
                self.visit(func)
            else:
                root, ops = self._chain(func)
            call = _Call(root, ops, self.pos)
            call.func = func
            if not any(isinstance(a, ast.Starred) for a in node.args):
                call.n_pos = len(node.args)
            if all(kw.arg is not None for kw in node.keywords):
                call.keywords = [str(kw.arg) for kw in node.keywords]
            with contextlib.suppress(Exception):
                call.text = ast.unparse(node)
            if isinstance(func, ast.Name) and root is None and not self.scopes:
                call.origin = self.from_imports.get(func.id)
            if isinstance(func, ast.Attribute) and ops and ops[-1] == ("attr", func.attr):
                call.method = func.attr
            for a in node.args:
                call.pos_strings.extend(_strings(a))
                if isinstance(a, ast.Name):
                    call.arg_names.append(a.id)
            callee = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if callee in PATH_FUNCS and node.args:
                call.paths.append(node.args[0])
            call.paths.extend(kw.value for kw in node.keywords if kw.arg in PATH_KWARGS)
            for kw in node.keywords:
                if kw.arg is None:
                    continue
                if _strings(kw.value):
                    call.kw_strings[kw.arg] = _strings(kw.value)
                if isinstance(kw.value, ast.Name):
                    call.kw_names[kw.arg] = kw.value.id
            self.calls.append(call)
        else:
            self.visit(func)
        for a in node.args:
            self.visit(a)
        for kw in node.keywords:
            self.visit(kw.value)

    def finish(self) -> None:
        """Scan function bodies last: they run later, when every name of the cell is bound."""
        while self.deferred:
            node, scopes = self.deferred.pop(0)
            saved = self.scopes
            self.scopes = scopes
            body: list[Any] = [node.body] if isinstance(node, ast.Lambda) else list(getattr(node, "body", []))
            for stmt in body:
                self.visit(stmt)
            self.scopes = saved


def _hashable(key: Any) -> Any:
    return tuple(key) if isinstance(key, list) else key


def _assigned_in(node: ast.AST) -> set[str]:
    """Names a function body binds (its locals), without descending into nested scopes' bodies."""
    out: set[str] = set()
    declared: set[str] = set()
    stack: list[ast.AST] = list(getattr(node, "body", [])) if not isinstance(node, ast.Lambda) else []
    while stack:
        cur = stack.pop()
        if isinstance(cur, (ast.Global, ast.Nonlocal)):
            declared.update(cur.names)
            continue
        if isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(cur.name)
            continue
        if isinstance(cur, ast.Name) and isinstance(cur.ctx, (ast.Store, ast.Del)):
            out.add(cur.id)
        elif isinstance(cur, (ast.Import, ast.ImportFrom)):
            out.update((a.asname or a.name.split(".")[0]) for a in cur.names)
        elif isinstance(cur, ast.ExceptHandler) and cur.name:
            out.add(cur.name)
        if isinstance(cur, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue
        stack.extend(ast.iter_child_nodes(cur))
    return out - declared


def _ops_text(root: str, ops: list[tuple[str, Any]]) -> str:
    text = root
    for kind, val in ops:
        text += f".{val}" if kind == "attr" else f"[{val!r}]"
    return text


# ----------------------------------------------------------------------------------------------------
# summarizers, one per library, registered by type
# ----------------------------------------------------------------------------------------------------

Summarizer = Callable[[Any, dict[str, Any], _Ctx, dict[str, Any]], None]
_REGISTRY: list[tuple[Callable[[Any], bool], Summarizer]] = []


def _summarizer(match: Callable[[Any], bool]) -> Callable[[Summarizer], Summarizer]:
    def register(fn: Summarizer) -> Summarizer:
        _REGISTRY.append((match, fn))
        return fn

    return register


def summarize(obj: Any, expr: str, ctx: _Ctx, hints: dict[str, Any] | None = None) -> dict[str, Any]:
    """Entry for one object. Never raises: a failing summarizer leaves a type-only entry with `error`."""
    entry = _entry(expr, _type_name(obj))
    root = _root(type(obj))
    if root and root != "builtins":
        ctx.libs.add(root)
    if ctx.over():
        entry["error"] = "time budget exhausted"
        return entry
    for match, fn in _REGISTRY:
        try:
            hit = match(obj)
        except Exception:
            hit = False
        if hit:
            try:
                fn(obj, entry, ctx, hints or {})
            except Exception as exc:
                entry["error"] = f"{type(exc).__name__}: {_trim(str(exc), 120)}"
            return entry
    try:
        _sum_object(obj, entry, ctx, hints or {})
    except Exception as exc:
        entry["error"] = f"{type(exc).__name__}: {_trim(str(exc), 120)}"
    return entry


def _add(entry: dict[str, Any], cat: str, key: str, value: Any) -> None:
    entry["facts"].append(_fact(cat, key, value))


# --- builtins -----------------------------------------------------------------------------------------


@_summarizer(lambda o: type(o) in SAFE_SCALARS)
def _sum_scalar(obj: Any, e: dict[str, Any], ctx: _Ctx, hints: dict[str, Any]) -> None:
    if isinstance(obj, (str, bytes)):
        _add(e, "S", "len", len(obj))
        _add(e, "V", "value", obj[: ctx.max_chars] if isinstance(obj, str) else _safe_repr(obj, ctx))
    elif isinstance(obj, complex):
        _add(e, "V", "value", repr(obj))
    else:
        _add(e, "V", "value", obj)


@_summarizer(lambda o: type(o) in (list, tuple, set, frozenset, dict, range))
def _sum_container(obj: Any, e: dict[str, Any], ctx: _Ctx, hints: dict[str, Any]) -> None:
    n = len(obj)
    _add(e, "S", "len", n)
    if type(obj) is range:
        _add(e, "V", "value", repr(obj))
        return
    if type(obj) is dict:
        keys = []
        for i, k in enumerate(obj):
            if i >= MAX_ITEMS:
                break
            keys.append(k if type(k) in SAFE_SCALARS else _safe_repr(k, ctx))
        _add(e, "S", "keys", keys)
        values = list(obj.values())[:5] if n <= 10_000 else []
        types_ = sorted({_short_type(v) for v in values})
        if types_:
            _add(e, "R", "element_types", types_)
        if all(type(v) in SAFE_SCALARS for v in values) and n <= MAX_ITEMS:
            if all(type(k) is str for k in obj):  # a small config dict: plain JSON
                _add(e, "V", "value", {k[: ctx.max_chars]: _short(v, ctx) for k, v in obj.items()})
            else:
                _add(e, "V", "value", f"<{_safe_repr(obj, ctx)}>")
        return
    head = []
    for i, item in enumerate(obj):
        if i >= MAX_ITEMS:
            break
        head.append(item)
    types_ = sorted({_short_type(v) for v in head[:10]})
    _add(e, "R", "element_types", types_)
    if all(type(v) in SAFE_SCALARS for v in head):
        values = [v if not isinstance(v, (str, bytes)) else v[: ctx.max_chars] for v in head]
        if type(obj) in (set, frozenset):
            values = sorted(values, key=repr)
        _add(e, "V", "items", [v if type(v) is not bytes else repr(v) for v in values])
    else:
        _add(e, "V", "items", [_short(v, ctx) for v in head[:5]])


@_summarizer(lambda o: _isinst(o, types.ModuleType))
def _sum_module(obj: Any, e: dict[str, Any], ctx: _Ctx, hints: dict[str, Any]) -> None:
    d = _module_dict(obj)
    version = d.get("__version__")
    if isinstance(version, str):
        _add(e, "R", "version", version)


@_summarizer(lambda o: _isroutine(o) or _isclass(o))
def _sum_callable(obj: Any, e: dict[str, Any], ctx: _Ctx, hints: dict[str, Any]) -> None:
    origin = _origin(obj)
    if origin is not None:  # where a name comes from: a library's or the notebook's (__main__)
        _add(e, "R", "module", origin[0])
        _add(e, "R", "qualname", origin[1])
    if _isclass(obj) and _trusted(obj):
        return  # a library class: its name says it; +D docs carry signatures when asked for
    sig = _signature(obj)
    if sig is not None:
        _add(e, "R", "signature", _trim(sig, 160))
    if _isfunction(obj) and not _trusted_callable(obj):
        names = _function_globals(obj)
        scope = obj.__globals__ if isinstance(obj.__globals__, dict) else {}
        missing = [n for n in names if n not in scope and not hasattr(builtins, n)]
        if missing:
            _add(e, "S", "undefined_globals", missing[:10])  # NameError when the body reaches them


def _origin(obj: Any) -> tuple[str, str] | None:
    """(defining module, qualified name) of a class or a plain/builtin function, read without user
    code (a metaclass may define `__getattribute__`; the type's own slot is used)."""
    try:
        if _isclass(obj):
            module, qualname = (
                type.__getattribute__(obj, "__module__"),
                type.__getattribute__(obj, "__qualname__"),
            )
        elif _isfunction(obj) or _isbuiltin(obj):
            module, qualname = obj.__module__, obj.__qualname__
        else:
            return None
    except Exception:
        return None
    if isinstance(module, str) and isinstance(qualname, str) and module and qualname:
        return module, qualname
    return None


def _function_globals(fn: Any) -> list[str]:
    """Global names a user function's body (and its nested code) reads, in first-use order."""
    out: list[str] = []
    stack = [fn.__code__]
    seen = 0
    while stack and seen < 50:
        code = stack.pop(0)
        seen += 1
        for ins in dis.get_instructions(code):
            name = ins.argval
            if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME") and isinstance(name, str) and name not in out:
                out.append(name)
        stack.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    return out


def _signature(obj: Any) -> str | None:
    plain = _isfunction(obj) or _isbuiltin(obj) or _ismethod(obj) or _isclass(obj)
    if not plain and not _trusted(type(obj)):
        return None  # inspect.signature would read __signature__ through a user __getattr__
    if _isclass(obj) and not _trusted(obj) and "__signature__" in _module_dict(obj):
        return None
    try:
        return str(inspect.signature(obj))
    except Exception:
        return None


@_summarizer(
    lambda o: (
        _isinst(o, (types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType))
        or type(o).__name__.endswith("iterator")
    )
)
def _sum_iterator(obj: Any, e: dict[str, Any], ctx: _Ctx, hints: dict[str, Any]) -> None:
    _add(e, "R", "note", "iterator (not consumed)")


# --- numpy --------------------------------------------------------------------------------------------


def _np() -> Any:
    return sys.modules.get("numpy")


@_summarizer(lambda o: _is(o, "numpy", "ndarray"))
def _sum_ndarray(a: Any, e: dict[str, Any], ctx: _Ctx, hints: dict[str, Any]) -> None:
    _add(e, "S", "shape", list(a.shape))
    _add(e, "R", "dtype", str(a.dtype))
    _array_stats(a, e, ctx)


def _array_stats(a: Any, e: dict[str, Any], ctx: _Ctx) -> None:
    """NaN count, min/max (on a sample when big) and, for 1-D data, uniques and value counts."""
    np = _np()
    if a.size == 0 or np is None:
        return
    flat, sampled = _flat_sample(a)
    if sampled:
        _add(e, "V", "sampled", int(flat.size))
    kind = a.dtype.kind
    if kind in "fc":
        _add(e, "V", "nan", int(np.isnan(flat).sum()))
    if kind in "biuf":
        with np.errstate(all="ignore"):
            lo, hi = (np.nanmin(flat), np.nanmax(flat)) if kind == "f" else (flat.min(), flat.max())
        _add(e, "V", "min", _num(lo))
        _add(e, "V", "max", _num(hi))
    if a.ndim == 1 or (a.ndim == 2 and a.shape[1] == 1):
        _values_1d(a.reshape(-1)[:UNIQUE_LIMIT] if not sampled else flat, e, ctx, kind in "iubUSO")
        if a.ndim == 1 and kind in "US" and a.size:
            _add(e, "V", "examples", [str(v)[: ctx.max_chars] for v in a[:3].tolist()])


def _flat_sample(a: Any) -> tuple[Any, bool]:
    """A 1-D view of at most ARRAY_SAMPLE evenly spaced elements (no copy of big arrays)."""
    if a.size <= ARRAY_SAMPLE:
        return a.reshape(-1), False
    if a.flags.c_contiguous:
        step = -(-a.size // ARRAY_SAMPLE)
        return a.reshape(-1)[::step], True
    rows = max(1, ARRAY_SAMPLE // max(1, a.size // a.shape[0]))
    step = -(-a.shape[0] // rows)
    return a[::step].reshape(-1)[:ARRAY_SAMPLE], True


def _num(v: Any) -> Any:
    scalar = _py_scalar(v)
    v = scalar if scalar is not _MISSING else v
    if isinstance(v, float) and math.isfinite(v):
        return float(f"{v:.4g}")
    return v


def _values_1d(flat: Any, e: dict[str, Any], ctx: _Ctx, discrete: bool) -> None:
    """Unique count, kind and (for few values) value counts of a 1-D numpy sample."""
    np = _np()
    if np is None or flat.size == 0:
        return
    if flat.dtype.kind == "O" and not all(type(v) in SAFE_SCALARS for v in flat[:50].tolist()):
        return
    try:
        values, counts = np.unique(flat, return_counts=True)
    except Exception:
        return
    n_unique = int(values.size)
    _add(e, "V", "unique", n_unique)
    _add(e, "V", "kind", _kind(n_unique, discrete or flat.dtype.kind == "b"))
    if discrete and n_unique <= 30:
        _add(e, "V", "counts", _counts(values.tolist(), counts.tolist(), ctx))


def _kind(n_unique: int, discrete: bool) -> str:
    if n_unique == 0:
        return "empty"
    if n_unique == 1:
        return "constant"
    if n_unique == 2:
        return "binary"
    if discrete and n_unique <= 30:
        return "categorical"
    return "continuous" if not discrete else "many-valued"


def _counts(values: list[Any], counts: list[int], ctx: _Ctx) -> list[list[Any]]:
    """Most frequent first; when there are many values keep the 4 most and the 2 least frequent."""
    pairs = sorted(zip(values, counts, strict=False), key=lambda p: (-p[1], repr(p[0])))
    if len(pairs) > 8:
        pairs = pairs[:4] + pairs[-2:]
    return [[v if not isinstance(v, str) else v[: ctx.max_chars], int(c)] for v, c in pairs]


@_summarizer(lambda o: _is(o, "numpy", "generic"))
def _sum_npscalar(obj: Any, e: dict[str, Any], ctx: _Ctx, hints: dict[str, Any]) -> None:
    _add(e, "R", "dtype", str(obj.dtype))
    _add(e, "V", "value", _num(obj))


# --- pandas -------------------------------------------------------------------------------------------


@_summarizer(lambda o: _is(o, "pandas", "DataFrame"))
def _sum_frame(df: Any, e: dict[str, Any], ctx: _Ctx, hints: dict[str, Any]) -> None:
    n_rows, n_cols = df.shape
    _add(e, "S", "shape", [n_rows, n_cols])
    cols = df.columns
    cap = 60
    names = [_label(c, ctx) for c in cols[:cap].tolist()]
    _add(e, "S", "columns", names)
    if n_cols > cap:
        _add(e, "S", "columns_more", n_cols - cap)
    # pandas and seaborn accept an index level's name where they accept a column's (groupby, x=...)
    levels = list(df.index.names)
    _add(e, "S", "index_names", [None if n is None else _label(n, ctx) for n in levels[:10]])
    dtypes = df.dtypes
    tally: dict[str, int] = {}
    odd: dict[Any, str] = {}  # columns a model cannot take as numbers: strings, objects, dates, categories
    for label, d in zip(cols[:2000].tolist(), dtypes.iloc[:2000].tolist(), strict=False):
        name = str(d)
        tally[name] = tally.get(name, 0) + 1
        if getattr(d, "kind", "O") not in "biufc" and len(odd) < 20:
            odd[_label(label, ctx)] = name
    _add(e, "R", "dtypes", tally)
    if n_cols > ctx.max_columns:
        _add(e, "R", "non_numeric_columns", odd)
    sample = df
    if n_rows > ROW_SAMPLE:
        sample = _row_sample(df, n_rows)
        _add(e, "V", "sampled", len(sample))
    scan = sample if n_cols <= 500 else sample.iloc[:, :500]
    nan = scan.isna().sum()
    nan_cols = {_label(k, ctx): int(v) for k, v in nan.items() if v}
    _add(e, "V", "nan_columns", dict(list(nan_cols.items())[:30]))  # {} says "no NaN anywhere"
    wanted = [w for w in hints.get("columns", []) if not isinstance(w, (list, tuple))]
    # natural order for the first max_columns, then the named columns beyond them (or missing)
    chosen: list[Any] = list(dict.fromkeys(cols[: ctx.max_columns].tolist()))
    for w in wanted:
        if w not in chosen:
            chosen.append(w)
    for c in chosen:
        expr = f"{e['expr']}[{c!r}]"
        if ctx.over():
            e["error"] = "time budget exhausted"
            break
        try:
            present = _has_column(cols, c)
        except Exception:
            present = False
        if not present:
            child = _entry(expr, "missing column")
            child["missing"] = True
            child["facts"].append(_fact("S", "close", _close(str(c), [str(x) for x in cols[:2000].tolist()])))
            e["children"].append(child)
            continue
        col = sample[c]
        if _is(col, "pandas", "DataFrame"):  # duplicated column label
            child = _entry(expr, "pandas.DataFrame")
            child["facts"].append(_fact("S", "shape", list(col.shape)))
        else:
            child = _entry(expr, "pandas.Series")
            _series_facts(col, child, ctx, counts=c in wanted)
        if c in wanted:
            child["named"] = True  # the cell names this column: renderers always show it
        e["children"].append(child)
    if len(cols) > len(chosen):
        _add(e, "S", "columns_left_out", len(cols) - len([c for c in chosen if _has_column(cols, c)]))


def _row_sample(obj: Any, n_rows: int) -> Any:
    """ROW_SAMPLE rows as 10 evenly spread contiguous runs: deterministic, and cache-friendly to copy
    (every k-th row of a multi-GB frame touches every page)."""
    np = _np()
    if np is None:
        return obj.iloc[:ROW_SAMPLE]
    run = ROW_SAMPLE // 10
    starts = np.linspace(0, n_rows - run, 10).astype(np.int64)
    return obj.take(np.concatenate([np.arange(a, a + run) for a in starts]))


def _has_column(cols: Any, c: Any) -> bool:
    try:
        return bool(c in cols)
    except Exception:
        return False


def _label(c: Any, ctx: _Ctx) -> Any:
    if type(c) in (str, int, float, bool):
        return c[: ctx.max_chars] if isinstance(c, str) else c
    if _is(c, "datetime", "date"):
        return _stamp(c)
    return _safe_repr(c, ctx)


def _series_facts(s: Any, e: dict[str, Any], ctx: _Ctx, counts: bool) -> None:
    """dtype, NaN, min/max, unique, kind, examples and value counts of one (possibly sampled) Series."""
    dtype = s.dtype
    _add(e, "R", "dtype", str(dtype))
    n = len(s)
    if n == 0:
        _add(e, "V", "kind", "empty")
        return
    np = _np()
    if np is not None and isinstance(dtype, np.dtype) and dtype.kind in "biuf" and not counts:
        _numeric_column(s.to_numpy(), e)  # plain numpy: pandas' per-call overhead dominates small frames
        return
    nan = int(s.isna().sum())
    _add(e, "V", "nan", nan)
    if nan == n:
        _add(e, "V", "kind", "all-nan")
        return
    kind = getattr(dtype, "kind", "O")
    if kind == "O" and str(dtype) not in ("str", "string", "category"):
        head = s.iloc[:50].tolist()
        if not all(type(v) in SAFE_SCALARS for v in head):
            _add(e, "R", "element_types", sorted({_short_type(v) for v in head})[:5])
            return
    numeric = kind in "iuf"
    discrete = kind not in "fcmM"
    uniq = int(s.nunique(dropna=True)) if n <= UNIQUE_LIMIT * 2 else int(s.iloc[:UNIQUE_LIMIT].nunique())
    if numeric or kind in "mM":
        _add(e, "V", "min", _num(s.min()) if numeric else _stamp(s.min()))
        _add(e, "V", "max", _num(s.max()) if numeric else _stamp(s.max()))
    _add(e, "V", "unique", uniq)
    _add(e, "V", "kind", _kind(uniq, discrete or uniq <= 10) if not (not numeric and uniq > 30) else "text")
    if not numeric and kind not in "mMb":
        vc = s.value_counts(dropna=True)
        _add(e, "V", "examples", [_label(v, ctx) for v in vc.index[:3].tolist()])
    if counts and uniq <= 30 and (discrete or uniq <= 10):
        vc = s.value_counts(dropna=True)
        _add(e, "V", "counts", _counts([_label(v, ctx) for v in vc.index.tolist()], vc.tolist(), ctx))


def _numeric_column(arr: Any, e: dict[str, Any]) -> None:
    np = _np()
    kind = arr.dtype.kind
    nan = int(np.isnan(arr).sum()) if kind == "f" else 0
    _add(e, "V", "nan", nan)
    if nan == arr.size:
        _add(e, "V", "kind", "all-nan")
        return
    if kind != "b":
        with np.errstate(all="ignore"):
            lo, hi = (np.nanmin(arr), np.nanmax(arr)) if kind == "f" else (arr.min(), arr.max())
        _add(e, "V", "min", _num(lo))
        _add(e, "V", "max", _num(hi))
    part = arr[:5000]
    part = part[~np.isnan(part)] if kind == "f" else part
    uniq = int(np.unique(part).size)
    _add(e, "V", "unique", uniq)
    _add(e, "V", "kind", _kind(uniq, kind in "biu" or uniq <= 10))


def _stamp(v: Any) -> str:
    text = str(v)
    return text[:-9] if text.endswith(" 00:00:00") else text


@_summarizer(lambda o: _is(o, "pandas", "Series"))
def _sum_series(s: Any, e: dict[str, Any], ctx: _Ctx, hints: dict[str, Any]) -> None:
    n = len(s)
    _add(e, "S", "shape", [n])
    if s.name is not None:
        _add(e, "R", "name", _label(s.name, ctx))
    sample = s if n <= ROW_SAMPLE else _row_sample(s, n)
    if sample is not s:
        _add(e, "V", "sampled", len(sample))
    _series_facts(sample, e, ctx, counts=True)


@_summarizer(lambda o: _is(o, "pandas", "Index"))
def _sum_index(idx: Any, e: dict[str, Any], ctx: _Ctx, hints: dict[str, Any]) -> None:
    _add(e, "S", "len", len(idx))
    _add(e, "R", "dtype", str(idx.dtype))
    _add(e, "V", "items", [_label(v, ctx) for v in idx[:MAX_ITEMS].tolist()])


# --- torch --------------------------------------------------------------------------------------------


@_summarizer(lambda o: _is(o, "torch", "Tensor"))
def _sum_tensor(t: Any, e: dict[str, Any], ctx: _Ctx, hints: dict[str, Any]) -> None:
    torch = sys.modules.get("torch")
    _add(e, "S", "shape", list(t.shape))
    _add(e, "R", "dtype", str(t.dtype).replace("torch.", ""))
    _add(e, "R", "device", str(t.device))
    _add(e, "R", "requires_grad", bool(t.requires_grad))
    if not t.is_contiguous():
        _add(e, "R", "contiguous", False)  # .view() would fail
    if torch is None or t.numel() == 0 or t.is_sparse or str(t.device) == "meta":
        return
    if _np() is not None and t.device.type == "cpu":
        # numpy on a zero-copy view: torch's first reductions in a process cost tens of ms (op warm-up)
        try:
            arr = t.detach().numpy()
        except Exception:
            arr = None
        if arr is not None:
            _array_stats(arr, e, ctx)
            return
    with torch.no_grad():
        flat = t.detach()
        sampled = False
        if t.numel() > ARRAY_SAMPLE:
            if not t.is_contiguous() or t.device.type != "cpu":
                _add(e, "R", "note", "stats skipped (large tensor)")
                return
            flat = flat.reshape(-1)[:: -(-t.numel() // ARRAY_SAMPLE)]
            sampled = True
            _add(e, "V", "sampled", int(flat.numel()))
        flat = flat.reshape(-1)
        if t.is_floating_point():
            _add(e, "V", "nan", int(torch.isnan(flat).sum().item()))
        if t.dtype != torch.bool and not t.is_complex():
            finite = flat[~torch.isnan(flat)] if t.is_floating_point() else flat
            if finite.numel():
                _add(e, "V", "min", _num(finite.min().item()))
                _add(e, "V", "max", _num(finite.max().item()))
        if t.dim() == 1 and not t.is_floating_point() and not t.is_complex() and not sampled:
            vals, counts = torch.unique(flat[:UNIQUE_LIMIT], return_counts=True)
            _add(e, "V", "unique", int(vals.numel()))
            if vals.numel() <= 30:
                _add(e, "V", "counts", _counts(vals.tolist(), counts.tolist(), ctx))


_LAYER_ATTRS = (
    "in_features", "out_features", "in_channels", "out_channels", "kernel_size", "num_embeddings",
    "embedding_dim", "num_features", "normalized_shape", "input_size", "hidden_size", "num_layers", "p",
)  # fmt: skip


def _layer_facts(m: Any, e: dict[str, Any]) -> None:
    d = _inst_dict(m)
    for key in _LAYER_ATTRS:
        v = d.get(key, _MISSING)
        if v is not _MISSING and (type(v) in (int, float, bool) or type(v) is tuple):
            _add(e, "S", key, list(v) if isinstance(v, tuple) else v)
    params = d.get("_parameters")
    w = params.get("weight") if isinstance(params, dict) else None
    if w is not None:
        _add(e, "R", "weight_dtype", str(w.dtype).replace("torch.", ""))


@_summarizer(lambda o: _is(o, "torch", "Module"))
def _sum_module_nn(m: Any, e: dict[str, Any], ctx: _Ctx, hints: dict[str, Any]) -> None:
    _add(e, "R", "class", type(m).__name__)
    d = _inst_dict(m)
    _add(e, "V", "training", bool(d.get("training", True)))
    dtypes: list[str] = []
    devices: list[str] = []
    n_params = 0
    grad = False
    for i, p in enumerate(m.parameters()):
        if i > 5000:
            break
        n_params += int(p.numel())
        grad = grad or bool(p.requires_grad)
        dt, dev = str(p.dtype).replace("torch.", ""), str(p.device)
        if dt not in dtypes:
            dtypes.append(dt)
        if dev not in devices:
            devices.append(dev)
    if dtypes:
        _add(e, "R", "param_dtype", dtypes[0] if len(dtypes) == 1 else dtypes)
        _add(e, "R", "param_device", devices[0] if len(devices) == 1 else devices)
        _add(e, "R", "param_requires_grad", grad)
    _add(e, "S", "n_params", n_params)
    _layer_facts(m, e)
    leaves: list[tuple[str, Any]] = []
    for i, (name, sub) in enumerate(m.named_modules()):
        if i > 500:
            break
        if name and not _inst_dict(sub).get("_modules"):
            leaves.append((name, sub))
    last_out = None
    for _, sub in leaves:
        v = _inst_dict(sub).get("out_features")
        if type(v) is int:
            last_out = v
    if last_out is not None:
        _add(e, "S", "last_out_features", last_out)
    shown = leaves if len(leaves) <= 12 else leaves[:8] + leaves[-4:]
    base = e["expr"]
    for name, sub in shown:
        path = "".join(f"[{p}]" if p.isdigit() else f".{p}" for p in name.split("."))
        child = _entry(base + path, _type_name(sub))
        _layer_facts(sub, child)
        e["children"].append(child)
    if len(leaves) > len(shown):
        _add(e, "S", "layers_left_out", len(leaves) - len(shown))


@_summarizer(lambda o: _is(o, "torch", "Optimizer"))
def _sum_optimizer(opt: Any, e: dict[str, Any], ctx: _Ctx, hints: dict[str, Any]) -> None:
    _add(e, "R", "class", type(opt).__name__)
    groups = _inst_dict(opt).get("param_groups")
    if isinstance(groups, list) and groups and isinstance(groups[0], dict):
        lr = groups[0].get("lr")
        if type(lr) in (int, float):
            _add(e, "V", "lr", lr)
        _add(e, "S", "param_groups", len(groups))
        params = groups[0].get("params")
        if isinstance(params, list):
            _add(e, "S", "n_tensors", sum(len(g.get("params", [])) for g in groups if isinstance(g, dict)))


@_summarizer(lambda o: _is(o, "torch", "DataLoader"))
def _sum_loader(dl: Any, e: dict[str, Any], ctx: _Ctx, hints: dict[str, Any]) -> None:
    d = _inst_dict(dl)
    _add(e, "S", "batch_size", d.get("batch_size"))
    _add(e, "S", "drop_last", bool(d.get("drop_last")))
    _add(e, "S", "num_workers", d.get("num_workers"))
    sampler = d.get("sampler")
    if sampler is not None:
        _add(e, "V", "shuffle", type(sampler).__name__ == "RandomSampler")
    collate = d.get("collate_fn")
    if (collate is not None and not _trusted(type(collate))) or (
        _isfunction(collate) and _root_of_function(collate) not in TRUSTED_ROOTS
    ):
        _add(e, "R", "collate_fn", _callable_name(collate))
    ds = d.get("dataset")
    if ds is not None:
        e["children"].append(summarize(ds, e["expr"] + ".dataset", ctx))


def _callable_name(fn: Any) -> str:
    """A function's name, else its type's: no attribute lookup on arbitrary objects."""
    return str(fn.__name__) if _isinst(fn, _ROUTINES) else _short_type(fn)


def _root_of_function(fn: Any) -> str:
    if not _isinst(fn, _ROUTINES):
        return _root(type(fn))
    mod = getattr(fn, "__module__", "") or ""
    return mod.split(".", 1)[0] if isinstance(mod, str) else ""


@_summarizer(lambda o: _is(o, "torch", "TensorDataset"))
def _sum_tensor_dataset(ds: Any, e: dict[str, Any], ctx: _Ctx, hints: dict[str, Any]) -> None:
    tensors = _inst_dict(ds).get("tensors", ())
    _add(e, "S", "len", int(tensors[0].shape[0]) if tensors else 0)
    for i, t in enumerate(tensors[:4]):
        e["children"].append(summarize(t, f"{e['expr']}.tensors[{i}]", ctx))


@_summarizer(lambda o: _is(o, "torch", "IterableDataset"))
def _sum_iterable_dataset(ds: Any, e: dict[str, Any], ctx: _Ctx, hints: dict[str, Any]) -> None:
    _add(e, "R", "note", "iterable dataset (not iterated)")


@_summarizer(lambda o: _is(o, "torch", "Dataset"))
def _sum_map_dataset(ds: Any, e: dict[str, Any], ctx: _Ctx, hints: dict[str, Any]) -> None:
    """Map-style dataset: len and up to `probe_samples` samples (this is the one place user code runs)."""
    n = len(ds)
    _add(e, "S", "len", n)
    shapes: list[Any] = []
    labels: list[Any] = []
    for i in range(min(n, ctx.probe_samples)):
        if ctx.over():
            break
        sample = ds[i]
        parts = sample if type(sample) in (tuple, list) else (sample,)
        shapes.append([_shape_of(p) for p in parts])
        if len(parts) >= 2:
            lab = _py_scalar(parts[-1])
            lab = lab if lab is not _MISSING else parts[-1]
            if type(lab) in (int, float, bool, str):
                labels.append(lab)
    if shapes:
        distinct = []
        for s in shapes:
            if s not in distinct:
                distinct.append(s)
        _add(e, "S", "sample_shapes", distinct[:4])
        if len(distinct) == 1:
            _add(
                e,
                "S",
                "batch_shape",
                [[len(shapes), *s] if isinstance(s, list) else len(shapes) for s in distinct[0]],
            )
    if labels:
        _add(e, "V", "labels", sorted(set(labels), key=repr)[:MAX_ITEMS])
    attrs = _attrs(ds, ctx)
    if attrs:
        _add(e, "V", "attrs", attrs)


def _shape_of(v: Any) -> Any:
    if _is(v, "torch", "Tensor") or _is(v, "numpy", "ndarray"):
        return list(v.shape)
    if _is(v, "PIL", "Image"):
        return ["PIL", *list(v.size)]
    if type(v) in SAFE_SCALARS:
        return type(v).__name__
    return _short_type(v)


# --- tensorflow / keras -------------------------------------------------------------------------------


@_summarizer(lambda o: _is(o, "tensorflow", "Tensor", "Variable", "EagerTensor", "ResourceVariable"))
def _sum_tf_tensor(t: Any, e: dict[str, Any], ctx: _Ctx, hints: dict[str, Any]) -> None:
    _add(e, "S", "shape", _tf_shape(t.shape))
    _add(e, "R", "dtype", getattr(t.dtype, "name", str(t.dtype)))


def _tf_shape(shape: Any) -> Any:
    try:
        return shape.as_list()
    except Exception:
        return _jsonable(list(shape)) if shape is not None else None


@_summarizer(lambda o: _is(o, "tensorflow", "DatasetV2", "Dataset"))
def _sum_tf_dataset(ds: Any, e: dict[str, Any], ctx: _Ctx, hints: dict[str, Any]) -> None:
    _add(e, "R", "element_spec", _trim(repr(ds.element_spec), 200))
    card = int(ds.cardinality().numpy())
    _add(e, "S", "cardinality", {-1: "infinite", -2: "unknown"}.get(card, card))


@_summarizer(lambda o: _is(o, "keras", "Model") or _is(o, "tf_keras", "Model"))
def _sum_keras_model(m: Any, e: dict[str, Any], ctx: _Ctx, hints: dict[str, Any]) -> None:
    _add(e, "R", "class", type(m).__name__)

    def attr(name: str, default: Any = None) -> Any:
        # _get_attr: a user subclass (class Net(keras.Model)) may override these with its own properties
        try:
            return _get_attr(m, name)
        except Exception:
            return default

    _add(e, "V", "built", bool(attr("built", False)))
    for key in ("input_shape", "output_shape"):
        value = attr(key, _MISSING)
        if value is not _MISSING:
            _add(e, "S", key, _jsonable(value))
    layers = attr("layers", [])
    layers = list(layers) if type(layers) in (list, tuple) else []
    if layers:
        last = layers[-1]
        units = _inst_dict(last).get("units")
        if type(units) is int:
            _add(e, "S", "last_units", units)
        act = _inst_dict(last).get("activation")
        if act is not None:
            _add(e, "R", "last_activation", _callable_name(act))
    compiled = bool(attr("compiled", False)) or attr("optimizer") is not None
    _add(e, "V", "compiled", compiled)
    loss = attr("loss")
    if loss is not None:
        name = _inst_dict(loss).get("name")
        _add(
            e, "R", "loss", loss if type(loss) is str else name if type(name) is str else _callable_name(loss)
        )
    shown = layers if len(layers) <= 10 else layers[:6] + layers[-3:]
    for layer in shown:
        name = _inst_dict(layer).get("name") or _short_type(layer)
        child = _entry(f"{e['expr']}.layers[{layers.index(layer)}]", _type_name(layer))
        child["facts"].append(_fact("R", "name", str(name)))
        ld = _inst_dict(layer)
        for key in ("units", "filters", "kernel_size", "rate", "pool_size", "output_dim", "input_dim"):
            v = ld.get(key)
            if type(v) in (int, float, tuple):
                child["facts"].append(_fact("S", key, v))
        act = ld.get("activation")
        if act is not None and _callable_name(act) != "linear":
            child["facts"].append(_fact("R", "activation", _callable_name(act)))
        e["children"].append(child)


_ITER_ATTRS = (
    ("S", "samples"), ("S", "num_classes"), ("V", "class_indices"), ("S", "batch_size"), ("S", "image_shape"),
    ("S", "target_size"), ("R", "class_mode"), ("R", "color_mode"), ("V", "shuffle"),
)  # fmt: skip


@_summarizer(
    lambda o: (
        _is(o, "keras", "Iterator", "DirectoryIterator", "NumpyArrayIterator", "DataFrameIterator")
        or _is(o, "tf_keras", "Iterator")
    )
)
def _sum_keras_iterator(it: Any, e: dict[str, Any], ctx: _Ctx, hints: dict[str, Any]) -> None:
    """Image iterators: attributes only, never next() (it would advance the epoch)."""
    d = _inst_dict(it)
    for cat, key in _ITER_ATTRS:
        v = d.get(key, _MISSING)
        if v is _MISSING:
            continue
        if key == "class_indices" and isinstance(v, dict):
            v = dict(list(v.items())[:MAX_ITEMS])
        _add(e, cat, key, _jsonable(v) if type(v) in (*SAFE_SCALARS, tuple, list, dict) else _short(v, ctx))


# --- sklearn ------------------------------------------------------------------------------------------


@_summarizer(lambda o: _is(o, "sklearn", "BaseEstimator"))
def _sum_estimator(est: Any, e: dict[str, Any], ctx: _Ctx, hints: dict[str, Any]) -> None:
    d = first = last = _inst_dict(est)
    _add(e, "R", "class", type(est).__name__)
    steps = d.get("steps")
    if isinstance(steps, list) and steps:
        # a Pipeline is fitted when its final step is; it takes its input width from the first step
        real = [
            s
            for _, s in (p for p in steps if isinstance(p, tuple) and len(p) == 2)
            if s not in (None, "passthrough")
        ]
        first, last = (_inst_dict(real[0]), _inst_dict(real[-1])) if real else (d, d)
    fitted = any(k.endswith("_") and not k.startswith("_") for k in last)
    _add(e, "V", "fitted", fitted)
    if "n_features_in_" in first:
        _add(e, "S", "n_features_in_", first["n_features_in_"])
    d = last
    names = first.get("feature_names_in_")
    if names is not None:
        _add(e, "R", "feature_names_in_", [str(x) for x in list(names[:MAX_ITEMS])])
    classes = d.get("classes_")
    if classes is not None and hasattr(classes, "__len__"):
        _add(e, "V", "classes_", [_label(_num(c), ctx) for c in list(classes[:MAX_ITEMS])])
        if len(classes) > MAX_ITEMS:
            _add(e, "S", "n_classes", len(classes))
        if _is(classes, "numpy", "ndarray"):
            _add(e, "R", "classes_dtype", str(classes.dtype))
    if "n_outputs_" in d:
        _add(e, "S", "n_outputs_", d["n_outputs_"])
    if isinstance(steps, list):
        _add(e, "R", "steps", [f"{n}={type(s).__name__}" for n, s in steps[:10] if isinstance(n, str)])
    used = _transformer_columns(_inst_dict(est).get("transformers"))
    if used:
        _add(e, "S", "columns_used", used)  # a ColumnTransformer's columns must exist in what it is given
    _add(e, "R", "params", _non_default_params(est, _inst_dict(est), ctx))


def _transformer_columns(transformers: Any) -> list[str]:
    out: list[str] = []
    if not isinstance(transformers, list):
        return out
    for t in transformers[:30]:
        cols = t[2] if type(t) is tuple and len(t) == 3 else None
        for c in [cols] if type(cols) is str else cols if type(cols) is list else []:
            if type(c) is str and c not in out and len(out) < 40:
                out.append(c)
    return out


def _non_default_params(est: Any, d: dict[str, Any], ctx: _Ctx) -> dict[str, Any]:
    out: dict[str, Any] = {}
    try:
        params = inspect.signature(type(est).__init__).parameters
    except Exception:
        return out
    for name, p in params.items():
        if name == "self" or name not in d or len(out) >= 6:
            continue
        v = d[name]
        if type(v) in SAFE_SCALARS and (p.default is inspect.Parameter.empty or v != p.default):
            out[name] = v if not isinstance(v, str) else v[: ctx.max_chars]
    return out


# --- scipy, PIL, matplotlib ---------------------------------------------------------------------------


@_summarizer(lambda o: _is(o, "scipy", "_spbase", "spmatrix", "sparray"))
def _sum_sparse(m: Any, e: dict[str, Any], ctx: _Ctx, hints: dict[str, Any]) -> None:
    _add(e, "S", "shape", list(m.shape))
    _add(e, "S", "nnz", int(m.nnz))
    _add(e, "R", "format", str(m.format))
    _add(e, "R", "dtype", str(m.dtype))


@_summarizer(lambda o: _is(o, "PIL", "Image"))
def _sum_image(img: Any, e: dict[str, Any], ctx: _Ctx, hints: dict[str, Any]) -> None:
    _add(e, "S", "size", list(img.size))
    _add(e, "R", "mode", str(img.mode))


@_summarizer(lambda o: _root(type(o)) in ("matplotlib", "seaborn", "statsmodels"))
def _sum_plot_object(obj: Any, e: dict[str, Any], ctx: _Ctx, hints: dict[str, Any]) -> None:
    return  # figures, axes, grids, fitted results: the type says enough


# --- anything else ------------------------------------------------------------------------------------


def _sum_object(obj: Any, e: dict[str, Any], ctx: _Ctx, hints: dict[str, Any]) -> None:
    """Unknown objects: type, instance attributes of plain objects, a repr only from trusted code."""
    attrs = _attrs(obj, ctx)
    if attrs:
        _add(e, "V", "attrs", attrs)
    elif _trusted(type(obj)):
        _add(e, "V", "repr", _safe_repr(obj, ctx))


def _attrs(obj: Any, ctx: _Ctx) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in list(_inst_dict(obj).items())[:40]:
        if not isinstance(k, str) or k.startswith("_"):
            continue
        if _isroutine(v) or _isinst(v, types.ModuleType):
            continue
        out[k] = _short(v, ctx)
        if len(out) >= 10:
            break
    return out


def _short(v: Any, ctx: _Ctx) -> Any:
    """A one-value description used inside containers and attribute maps."""
    if type(v) in (bool, int, float, type(None)):
        return _jsonable(v)
    if type(v) is str:
        return v[: ctx.max_chars]
    if (
        type(v) in (list, tuple)
        and len(v) <= MAX_ITEMS
        and all(type(x) in (bool, int, float, str) for x in v)
        and sum(len(str(x)) for x in v) <= ctx.max_chars * 2
    ):
        return [x if type(x) is not str else x[: ctx.max_chars] for x in v]
    if type(v) in (list, tuple, set, frozenset, dict):
        text = _safe_repr(v, ctx)
        return f"<{text}>" if len(text) <= ctx.max_chars else f"<{type(v).__name__} len {len(v)}>"
    scalar = _py_scalar(v)
    if scalar is not _MISSING:
        return _jsonable(scalar)
    shape = None
    if _is(v, "numpy", "ndarray") or _is(v, "torch", "Tensor") or _is(v, "pandas", "DataFrame", "Series"):
        with contextlib.suppress(Exception):
            dtype = str(v.dtype) if not _is(v, "pandas", "DataFrame") else ""
            shape = f"<{_short_type(v)} {tuple(v.shape)} {dtype.replace('torch.', '')}".strip() + ">"
    return shape or f"<{_short_type(v)}>"


# ----------------------------------------------------------------------------------------------------
# entry point
# ----------------------------------------------------------------------------------------------------


def run(
    source: str, options: dict[str, Any] | None = None, namespace: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Describe what `source` (a cell) will use from the kernel. Never raises, never prints."""
    t0 = time.perf_counter()
    result: dict[str, Any] = {
        "probe_version": PROBE_VERSION,
        "python": ".".join(str(x) for x in sys.version_info[:3]),
        "elapsed_ms": 0.0,
        "budget_exhausted": False,
        "syntax_error": None,
        "undefined": [],
        "modules": [],
        "objects": [],
        "docs": [],
        "history": [],
        "error": None,
    }
    opts = options if isinstance(options, dict) else {}
    sink = io.StringIO()
    gc_was_enabled = gc.isenabled()
    try:
        gc.disable()  # a collection pass over a big heap would be billed to whatever object comes next
        with warnings.catch_warnings(), contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            warnings.simplefilter("ignore")
            _run(result, source, opts, namespace, t0)
    except Exception as exc:  # the contract: never raise into the kernel
        result["error"] = f"{type(exc).__name__}: {_trim(str(exc), 200)}"
    finally:
        if gc_was_enabled:
            gc.enable()
    result["elapsed_ms"] = round((time.perf_counter() - t0) * 1000.0, 2)
    return result


def _user_namespace() -> tuple[dict[str, Any], Any]:
    getter = sys.modules.get("IPython.core.getipython")
    shell = None
    if getter is not None:
        with contextlib.suppress(Exception):
            shell = getter.get_ipython()
    ns = getattr(shell, "user_ns", None) if shell is not None else None
    return (ns if isinstance(ns, dict) else {}), shell


def _history(ns: dict[str, Any], shell: Any) -> list[str]:
    hist: Any = None
    if shell is not None:
        with contextlib.suppress(Exception):
            hist = shell.history_manager.input_hist_raw
    if not isinstance(hist, list):
        hist = ns.get("In")
    if not isinstance(hist, list):
        return []
    return [h for h in hist[1:] if isinstance(h, str)]


def _run(result: dict[str, Any], source: str, opts: dict[str, Any], namespace: Any, t0: float) -> None:
    ctx = _Ctx(opts, t0)
    shell = None
    if isinstance(namespace, dict):
        ns = namespace
    else:
        ns, shell = _user_namespace()
    if shell is None and namespace is None:
        _, shell = _user_namespace()
    history = _history(ns, shell)
    if opts.get("history"):
        kept, size = [], 0
        for cell in reversed(history):  # the newest cells matter most; the result stays bounded
            size += len(cell)
            if size > HISTORY_CHARS:
                break
            kept.append(cell)
        result["history"] = kept[::-1]
        if len(kept) < len(history):
            result["history_dropped"] = len(history) - len(kept)
    if not isinstance(source, str):
        result["error"] = "source must be a str"
        return
    try:
        tree = ast.parse(_python_source(source))
    except SyntaxError as exc:
        result["syntax_error"] = {"line": exc.lineno, "col": exc.offset, "msg": str(exc.msg)}
        return
    except (ValueError, MemoryError, RecursionError) as exc:
        result["syntax_error"] = {"line": None, "col": None, "msg": f"{type(exc).__name__}: {exc}"}
        return
    scan = _Scanner()
    scan.visit(tree)
    scan.finish()

    undefined = [n for n in scan.free if _undefined(n, ns)] + list(scan.deleted_reads)
    if not scan.star_import:
        result["undefined"] = undefined
    present = [n for n in scan.free if n in ns]

    hints = _column_hints(scan, ns)
    objects: list[dict[str, Any]] = []
    module_names: list[tuple[str, Any]] = []
    for name in present:
        value = ns[name]
        if _isinst(value, types.ModuleType):
            module_names.append((name, value))
            continue
        if len(objects) >= MAX_ENTRIES:
            break
        objects.append(summarize(value, name, ctx, hints.get(name)))
    done = {o["expr"] for o in objects}
    for ref in scan.refs:
        if len(objects) >= MAX_ENTRIES or ref.root not in ns:
            continue
        objects.extend(e for e in _chain_entries(ns[ref.root], ref, ctx) if e["expr"] not in done)
        done.update(o["expr"] for o in objects)
    objects.extend(_call_checks(scan, ns, ctx))
    objects.extend(_argument_checks(scan, ns, ctx))
    objects.extend(_path_checks(scan, ns))
    related = _lineage(history, present, ns)[:4]
    for name in present:  # data a called user function reads from the kernel's globals
        fn = ns[name]
        if _isfunction(fn) and not _trusted_callable(fn) and fn.__globals__ is ns:
            for g in _function_globals(fn)[:20]:
                if g in ns and g not in present and not _skip_lineage(ns[g]) and len(related) < 6:
                    related.append((g, name, "read"))
    for rel, via, relation in related:
        if len(objects) >= MAX_ENTRIES or rel in done:
            continue
        entry = summarize(ns[rel], rel, ctx, hints.get(rel))
        entry["via"] = via
        entry["relation"] = relation
        objects.append(entry)
        done.add(rel)
    result["objects"] = objects
    result["modules"] = _modules(module_names, scan, ctx)
    if opts.get("docs"):
        result["docs"] = _docs(scan, ns, ctx)
    result["budget_exhausted"] = ctx.exhausted


_TIMING_MAGICS = frozenset({"time", "timeit", "capture", "prun"})


def _python_source(source: str) -> str:
    """The cell as Python: IPython syntax (`%magic`, `!cmd`, `obj?`) turned into calls the way the kernel
    does it (IPython's own transformer when loaded, else those lines become `pass`). A cell magic that
    wraps Python (`%%time`) keeps its body; any other cell magic (`%%bash`) has no Python to analyse."""
    if source.lstrip().startswith("%%"):
        first, _, body = source.lstrip().partition("\n")
        name = first[2:].split()[0] if first[2:].split() else ""
        if name not in _TIMING_MAGICS:
            return ""
        source = "\n" + body  # keep line numbers
    if not any(ch in source for ch in "%!?"):
        return source
    ipt = sys.modules.get("IPython.core.inputtransformer2")
    if ipt is not None:
        try:
            return str(ipt.TransformerManager().transform_cell(source))
        except Exception:
            pass
    lines = []
    for line in source.split("\n"):
        stripped = line.strip()
        if stripped.startswith(("%", "!")) or (stripped.endswith("?") and stripped[:-1].isidentifier()):
            line = line[: len(line) - len(line.lstrip())] + "pass"
        lines.append(line)
    return "\n".join(lines)


def _undefined(name: str, ns: dict[str, Any]) -> bool:
    return name not in ns and not hasattr(builtins, name) and name not in IPYTHON_NAMES


def _column_hints(scan: _Scanner, ns: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per root name: the columns the cell names (subscripts, attribute access, call arguments)."""
    hints: dict[str, dict[str, Any]] = {}

    def want(root: str, col: Any, pos: int) -> None:
        if type(col) not in (str, int) or not _is(ns.get(root), "pandas", "DataFrame"):
            return
        created = scan.created.get((root, col))
        if created is not None and created <= pos:
            return  # the cell assigns this column before reading it
        cols = hints.setdefault(root, {"columns": []})["columns"]
        if col not in cols:
            cols.append(col)

    for ref in scan.refs:
        if ref.ops and ref.ops[0][0] == "item":
            key = ref.ops[0][1]
            for k in key if isinstance(key, (list, tuple)) else [key]:
                want(ref.root, k, ref.pos)
        elif ref.ops and ref.ops[0][0] == "attr" and _is(ns.get(ref.root), "pandas", "DataFrame"):
            with contextlib.suppress(Exception):
                if ref.ops[0][1] in ns[ref.root].columns:
                    want(ref.root, ref.ops[0][1], ref.pos)
    for call in scan.calls:
        frames = _call_frames(call, ns)
        strings = [s for k, v in call.kw_strings.items() if k in COLUMN_KWARGS for s in v]
        if call.method in COLUMN_METHODS and call.root in frames:
            strings += call.pos_strings
        for frame in frames:
            for s in strings:
                want(frame, s, call.pos)
    return hints


def _call_frames(call: _Call, ns: dict[str, Any]) -> list[str]:
    names = []
    if call.root is not None and call.ops[:-1] == [] and call.method is not None:
        names.append(call.root)
    names += call.arg_names + list(call.kw_names.values())
    return [n for n in dict.fromkeys(names) if _is(ns.get(n), "pandas", "DataFrame")]


def _chain_entries(value: Any, ref: _Ref, ctx: _Ctx) -> list[dict[str, Any]]:
    """Entries for the interesting prefixes of `root.a[k].b`: missing steps, sub-objects, scalars."""
    out: list[dict[str, Any]] = []
    cur = value
    for i, (kind, key) in enumerate(ref.ops):
        expr = _ops_text(ref.root, ref.ops[: i + 1])
        parent = cur
        if _is(parent, "pandas", "DataFrame") and (kind == "item" or _is_column_attr(parent, key)):
            return out  # columns are described inside the frame's entry
        try:
            cur = _get_attr(cur, key) if kind == "attr" else _get_item(cur, key)
        except _Unsafe as why:
            entry = _entry(expr, "?")
            entry["facts"].append(_fact("R", "note", str(why)))
            out.append(entry)
            return out
        except (AttributeError, KeyError, IndexError, TypeError) as exc:
            entry = _entry(expr, _type_name(parent))
            entry["missing"] = True
            if kind == "attr":
                names = _safe_dir(parent)
                if _is(parent, "pandas", "DataFrame"):  # df.Age: a column was meant
                    names = [str(c) for c in parent.columns[:2000].tolist()] + names
                entry["facts"].append(_fact("S", "close", _close(str(key), names)))
                msg = str(exc)
                if msg and msg != str(key) and len(msg) < 300:
                    entry["facts"].append(_fact("R", "note", _trim(msg, 200)))
            elif type(parent) is dict:
                keys = [k for k in list(parent)[:500] if isinstance(k, str)]
                entry["facts"].append(_fact("S", "close", _close(str(key), keys)))
            out.append(entry)
            return out
        except Exception as exc:
            entry = _entry(expr, _type_name(parent))
            entry["error"] = f"{type(exc).__name__}: {_trim(str(exc), 120)}"
            out.append(entry)
            return out
        if _isinst(cur, types.ModuleType):
            continue
        if _isroutine(cur) or _isclass(cur):
            return out
        if _isinst(parent, types.ModuleType) and callable(cur):
            return out  # np.exp, F.relu: library callables (ufuncs, functools.partial) are not data
        if kind == "attr" and _is_data(parent):
            return out  # df.values, X.T, t.shape: derived from an entry that is already there
        out.append(summarize(cur, expr, ctx))
    return out


def _is_column_attr(df: Any, key: Any) -> bool:
    try:
        return bool(key in df.columns) and inspect.getattr_static(df, key, _MISSING) is _MISSING
    except Exception:
        return False


def _is_data(obj: Any) -> bool:
    return (
        _is(obj, "numpy", "ndarray")
        or _is(obj, "pandas", "DataFrame", "Series", "Index")
        or _is(obj, "torch", "Tensor")
        or _is(obj, "tensorflow", "Tensor")
    )


def _call_checks(scan: _Scanner, ns: dict[str, Any], ctx: _Ctx) -> list[dict[str, Any]]:
    """Checks tied to a call's constant arguments, e.g. whether `plt.style.use('x')` names a known style."""
    out: list[dict[str, Any]] = []
    for call in scan.calls:
        if call.root is None or call.root not in ns or call.method != "use" or not call.pos_strings:
            continue
        try:
            owner: Any = ns[call.root]
            for kind, key in call.ops[:-1]:
                if kind != "attr":
                    raise _Unsafe("subscript")
                owner = _get_attr(owner, key)
        except Exception:
            continue
        if not (
            _isinst(owner, types.ModuleType) and _module_dict(owner).get("__name__") == "matplotlib.style"
        ):
            continue
        available = _module_dict(owner).get("available")
        if not isinstance(available, list):
            continue
        for style in call.pos_strings[:3]:
            entry = _entry(f"{_ops_text(call.root, call.ops)}({style!r})", "matplotlib style")
            ok = style in available or "/" in style or "." in style
            entry["facts"].append(_fact("V", "available", ok))
            if not ok:
                entry["missing"] = True
                entry["facts"].append(_fact("S", "close", _close(style, [str(s) for s in available])))
            out.append(entry)
            ctx.libs.add("matplotlib")
    return out


MAX_ARGUMENT_ENTRIES = 5


def _argument_checks(scan: _Scanner, ns: dict[str, Any], ctx: _Ctx) -> list[dict[str, Any]]:
    """Calls whose arguments cannot bind to the callee's signature (TypeError before its body runs):
    `sns.barplot(x, y)` where seaborn takes only `data` positionally, a keyword a library removed.

    The callee is looked up without running user code: a name of the kernel (with attribute steps), or
    a `from m import f` of this cell whose module the kernel has already imported. Only an entry for a
    call that cannot bind is emitted: the runtime text stays small."""
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for call in scan.calls:
        if len(out) >= MAX_ARGUMENT_ENTRIES or ctx.over():
            break
        if call.n_pos is None or call.keywords is None or not call.text or call.text in seen:
            continue
        seen.add(call.text)
        if len(call.text) > 300:
            continue
        try:
            if call.root is not None and call.root in ns:
                fn: Any = ns[call.root]
            elif call.origin is not None and call.origin[0] in sys.modules:
                fn = _module_dict(sys.modules[call.origin[0]]).get(call.origin[1], _MISSING)
                if fn is _MISSING:
                    continue
            else:
                continue
            for kind, key in call.ops:
                if kind != "attr":
                    raise _Unsafe("subscript")
                fn = _get_attr(fn, key)
        except Exception:
            continue
        failed = _bind_failure(fn, call.n_pos, call.keywords)
        if failed is None:
            continue
        signature, message = failed
        entry = _entry(call.text, "call")
        _add(entry, "R", "bind_error", _trim(message, 160))
        _add(entry, "R", "signature", _trim(signature, 200))
        if call.root is None and call.origin is not None:
            _add(entry, "R", "callee", ".".join(call.origin))
        out.append(entry)
    return out


def _plain_class(cls: type) -> bool:
    """A class whose call is `object.__new__` + a Python `__init__` (or object's): its signature is
    the whole truth. Metaclasses with their own `__call__`, custom `__new__` (keras layers, named
    tuples, enums) and C bases are left alone."""
    if type(cls) not in (type, abc.ABCMeta):
        return False
    new = init = None
    for klass in _mro(cls):
        d = _module_dict(klass)
        if new is None and "__new__" in d:
            new = d["__new__"]
        if init is None and "__init__" in d:
            init = d["__init__"]
    if new is not object.__new__:
        return False
    if init is object.__init__:
        return True
    return _isfunction(init) and not _decorated(init)


def _decorated(fn: Any) -> bool:
    """A wrapper that names what it wraps (functools.wraps) may accept other arguments than the
    signature inspect reports; an explicit __signature__ may say anything."""
    d = _inst_dict(fn)
    return "__wrapped__" in d or "__signature__" in d


def _bind_failure(fn: Any, n_pos: int, keywords: list[str]) -> tuple[str, str] | None:
    """(signature, TypeError message) when calling `fn` with `n_pos` positional arguments and these
    keywords must raise TypeError, whatever the values; None when it binds or when unsure."""
    if _ismethod(fn):
        target = fn.__func__
        if not _isfunction(target) or _decorated(target):
            return None
    elif _isclass(fn):
        if not _plain_class(fn) or any("__signature__" in _module_dict(k) for k in _mro(fn)):
            return None
    elif not _isfunction(fn) or _decorated(fn):
        return None
    try:
        signature = inspect.signature(fn, follow_wrapped=False)
    except Exception:
        return None
    try:
        signature.bind(*([None] * n_pos), **dict.fromkeys(keywords))
    except TypeError as exc:
        return str(signature), str(exc)
    except Exception:
        return None
    return None


def _path_checks(scan: _Scanner, ns: dict[str, Any]) -> list[dict[str, Any]]:
    """Whether the files the cell opens exist (relative to the kernel's working directory)."""
    import os

    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for call in scan.calls:
        for node in call.paths:
            path = _static_str(node, ns, scan, 0)
            if path is None or path in seen or len(seen) >= 5 or "\n" in path or not 0 < len(path) < 400:
                continue
            if "://" in path:
                continue  # a URL: not ours to fetch
            seen.add(path)
            entry = _entry(f"path {path!r}", "path")
            exists = os.path.exists(path)
            entry["facts"].append(_fact("V", "exists", exists))
            if not exists:
                entry["missing"] = True
                parent = os.path.dirname(path) or "."
                if os.path.isdir(parent):
                    names = sorted(os.listdir(parent))[:2000]
                    entry["facts"].append(_fact("S", "close", _close(os.path.basename(path), names)))
                else:
                    entry["facts"].append(_fact("R", "note", f"folder {parent!r} does not exist either"))
            out.append(entry)
    return out


def _static_str(node: ast.expr, ns: dict[str, Any], scan: _Scanner, depth: int) -> str | None:
    """A path expression's value when it needs no code to run: constants, kernel str/Path variables,
    simple f-strings, `+`, `Path / name`, `os.path.join(...)` and `Path(...)`."""
    import os

    if depth > 6:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        if node.id in scan.bound or node.id not in ns:
            return None
        value = ns[node.id]
        if type(value) is str:
            return value
        return str(value) if _is(value, "pathlib", "PurePath") else None
    if isinstance(node, ast.JoinedStr):
        parts = []
        for v in node.values:
            if isinstance(v, ast.Constant) and isinstance(v.value, str):
                parts.append(v.value)
            elif isinstance(v, ast.FormattedValue) and v.conversion == -1 and v.format_spec is None:
                inner = v.value
                val = ns.get(inner.id) if isinstance(inner, ast.Name) and inner.id not in scan.bound else None
                if type(val) not in (str, int):
                    return None
                parts.append(str(val))
            else:
                return None
        return "".join(parts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Div)):
        left = _static_str(node.left, ns, scan, depth + 1)
        right = _static_str(node.right, ns, scan, depth + 1)
        if left is None or right is None:
            return None
        return left + right if isinstance(node.op, ast.Add) else os.path.join(left, right)
    if isinstance(node, ast.Call) and not node.keywords and node.args:
        name = ast.unparse(node.func) if isinstance(node.func, (ast.Attribute, ast.Name)) else ""
        if name in ("os.path.join", "join", "Path", "pathlib.Path", "PurePath"):
            args = [_static_str(a, ns, scan, depth + 1) for a in node.args]
            if all(a is not None for a in args):
                return os.path.join(*[a for a in args if a is not None])
    return None


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
            tree = ast.parse(_python_source(cell))
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


def _modules(module_names: list[tuple[str, Any]], scan: _Scanner, ctx: _Ctx) -> list[dict[str, Any]]:
    """Versions of the libraries the cell references by alias, imports, or whose objects it uses."""
    out: list[dict[str, Any]] = []
    seen: set[str] = set()

    def add(alias: str, top: str) -> None:
        if top in seen or not top:
            return
        mod = sys.modules.get(top)
        version = _module_dict(mod).get("__version__") if mod is not None else None
        if mod is not None and not isinstance(version, str) and _trusted_module(mod):
            with contextlib.suppress(Exception):
                version = getattr(mod, "__version__", None)  # e.g. matplotlib computes it lazily
        if not isinstance(version, str):
            version = _dist_version(top)
        if version is None and mod is None:
            return
        seen.add(top)
        item: dict[str, Any] = {"name": alias or top, "module": top, "version": version}
        if mod is None:
            item["imported"] = False
        if top == "torch" and mod is not None:
            with contextlib.suppress(Exception):
                item["facts"] = [_fact("V", "grad_enabled", bool(mod.is_grad_enabled()))]
                cuda = _module_dict(mod).get("cuda")  # only if torch.cuda is already loaded
                if isinstance(cuda, types.ModuleType):
                    # device count from the driver, no CUDA context is created
                    item["facts"].append(_fact("V", "cuda_available", bool(cuda.is_available())))
        out.append(item)

    for alias, mod in module_names:
        name = _module_dict(mod).get("__name__")
        if isinstance(name, str):
            add(alias, name.split(".", 1)[0])
    for alias, full in scan.imports:
        add(alias if alias == full.split(".")[0] else "", full.split(".", 1)[0])
    for lib in sorted(ctx.libs):
        if lib in TRUSTED_ROOTS and lib not in ("builtins", "collections", "types", "typing", "functools"):
            add("", lib)
    return out


_DIST_NAMES = {"sklearn": "scikit-learn", "PIL": "pillow", "cv2": "opencv-python", "skimage": "scikit-image"}


_DIST_CACHE: dict[str, str | None] = {}


def _dist_version(top: str) -> str | None:
    """Version of an installed but not yet imported package, from its ``*.dist-info`` folder name.

    Neither the package nor importlib.metadata (~100 ms, pulls in the email package) is imported.
    """
    if top in sys.stdlib_module_names or not top.isidentifier():
        return None
    if top not in _DIST_CACHE:
        _DIST_CACHE[top] = None
        try:
            import os
            from importlib.machinery import PathFinder

            spec = PathFinder.find_spec(top)
            origin = spec.origin if spec is not None and spec.origin else None
            if origin is None and spec is not None and spec.submodule_search_locations:
                origin = os.path.join(next(iter(spec.submodule_search_locations)), "__init__.py")
            if origin:
                site = (
                    os.path.dirname(os.path.dirname(origin))
                    if spec and spec.submodule_search_locations
                    else (os.path.dirname(origin))
                )
                wanted = {_norm(top), _norm(_DIST_NAMES.get(top, top))}
                for name in os.listdir(site):
                    if name.endswith(".dist-info"):
                        dist, _, version = name[: -len(".dist-info")].partition("-")
                        if _norm(dist) in wanted and version:
                            _DIST_CACHE[top] = version
                            break
        except Exception:
            pass
    return _DIST_CACHE[top]


def _norm(name: str) -> str:
    return name.lower().replace("-", "_").replace(".", "_")


# ----------------------------------------------------------------------------------------------------
# +D: API docs of the callables the cell invokes
# ----------------------------------------------------------------------------------------------------


def _docs(scan: _Scanner, ns: dict[str, Any], ctx: _Ctx) -> list[dict[str, Any]]:
    """Docs of the library callables the cell calls: on kernel objects (`model.fit`, `pd.merge`), names
    the cell imports from already-imported modules, and methods of objects the cell constructs."""
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for call in scan.calls:
        if call.func is None or len(out) >= 8:
            continue
        try:
            text = ast.unparse(call.func)
        except Exception:
            continue
        if text in seen or len(text) > 200:
            continue
        seen.add(text)
        try:
            fn, _ = _resolve_callee(call.func, scan, ns, 0)
        except Exception:
            continue
        if fn is _MISSING or not callable(fn) or not _trusted_callable(fn):
            continue
        doc = _doc_entry(text, fn, ctx)
        if doc is not None:
            out.append(doc)
    return out


def _resolve_callee(node: ast.expr, scan: _Scanner, ns: dict[str, Any], depth: int) -> tuple[Any, bool]:
    """(object, is_an_instance_of_it) for a callee expression, without calling or importing anything.

    An instance the cell constructs (`clf = Ridge()`, `Ridge().fit`) resolves to its class, flagged True,
    so `clf.fit` resolves to `Ridge.fit`.
    """
    if depth > 8:
        return _MISSING, False
    if isinstance(node, ast.Name):
        name = node.id
        if name in scan.constructed and depth < 8:
            cls, _ = _resolve_callee(scan.constructed[name], scan, ns, depth + 1)
            return (cls, True) if _isclass(cls) else (_MISSING, False)
        if name in scan.from_imports:
            module, attr = scan.from_imports[name]
            mod = sys.modules.get(module)
            if mod is None:
                return _MISSING, False  # never import for docs
            sub = sys.modules.get(f"{module}.{attr}")
            return (sub if sub is not None else _get_attr(mod, attr)), False
        if name in scan.bound and name not in ns:
            return _MISSING, False
        return ns.get(name, _MISSING), False
    if isinstance(node, ast.Call):
        cls, _ = _resolve_callee(node.func, scan, ns, depth + 1)
        return (cls, True) if _isclass(cls) else (_MISSING, False)
    if isinstance(node, ast.Attribute):
        base, instance = _resolve_callee(node.value, scan, ns, depth + 1)
        if base is _MISSING:
            return _MISSING, False
        if instance:
            return (getattr(base, node.attr) if _trusted(base) else _MISSING), False
        return _get_attr(base, node.attr), False
    return _MISSING, False


def _trusted_callable(fn: Any) -> bool:
    if _isclass(fn):
        return _trusted(fn)
    return _root_of_function(fn) in TRUSTED_ROOTS or (_trusted(type(fn)) and not _isfunction(fn))


def _doc_entry(call: str, fn: Any, ctx: _Ctx) -> dict[str, Any] | None:
    target = fn.__init__ if _isclass(fn) else fn
    try:
        sig = inspect.signature(fn)
    except Exception:
        sig = None
    if sig is not None and _isfunction(fn) and list(sig.parameters)[:1] == ["self"]:
        sig = sig.replace(parameters=list(sig.parameters.values())[1:])  # a method taken from its class
    required: list[str] = []
    optional: dict[str, Any] = {}
    kwonly: list[str] = []
    if sig is not None:
        for p in sig.parameters.values():
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                continue
            if p.kind is p.KEYWORD_ONLY:
                kwonly.append(p.name)
            if p.default is p.empty and p.kind is not p.KEYWORD_ONLY:
                required.append(p.name)
            elif p.default is not p.empty:
                optional[p.name] = _safe_repr(p.default, ctx)
    raw = inspect.getdoc(fn) or (inspect.getdoc(target) if target is not fn else None) or ""
    qual = f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', _short_type(fn))}"
    return {
        "call": call,
        "qualname": qual,
        "signature": _trim(str(sig), 300) if sig is not None else None,
        "required": required,
        "optional": optional,
        "kwonly": kwonly,
        "notes": _doc_section(raw, "Notes"),
        "warnings": _doc_section(raw, "Warnings"),
    }


def _doc_section(doc: str, title: str) -> str:
    """A numpydoc section (title line underlined with dashes), whitespace-collapsed, ≤ 400 chars."""
    lines = doc.splitlines()
    for i in range(len(lines) - 1):
        if lines[i].strip() == title and set(lines[i + 1].strip()) == {"-"}:
            body: list[str] = []
            for j in range(i + 2, len(lines)):
                nxt = lines[j + 1].strip() if j + 1 < len(lines) else ""
                if lines[j].strip() and nxt and set(nxt) == {"-"}:
                    break
                body.append(lines[j].strip())
            text = " ".join(x for x in body if x)
            return text if len(text) <= 400 else text[:397] + "..."
    return ""
