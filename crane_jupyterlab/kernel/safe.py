"""Reading objects without running user code: type tests that no metaclass can fool, attribute and
item access restricted to trusted libraries, bounded reprs, per-call options and the time budget.
"""

from __future__ import annotations

import difflib
import inspect
import math
import sys
import time
import types
from collections.abc import Iterator, Mapping
from typing import Any

DEFAULT_OPTIONS: dict[str, Any] = {
    "max_columns": 20,
    "probe_samples": 10,
    "budget_ms": 150.0,
    "max_chars": 80,
    "docs": False,
    "history": False,
}


# Top-level packages of libraries: their objects' own properties, __getattr__, __getitem__ and __repr__
# run no notebook code, so the probe may call them, and the checks may trust what their methods do. The
# one list of the project (the checks import it).
TRUSTED_ROOTS = frozenset(
    {
        "builtins", "catboost", "collections", "cv2", "datetime", "decimal", "fractions", "functools",
        "imblearn", "itertools", "joblib", "json", "keras", "keras_tuner", "lightgbm", "math",
        "matplotlib", "nltk", "numpy", "os", "pandas", "pathlib", "pickle", "PIL", "plotly", "random",
        "re", "scipy", "seaborn", "skimage", "sklearn", "statsmodels", "string", "tensorflow", "tf_keras",
        "time", "torch", "torchvision", "tqdm", "transformers", "types", "typing", "xgboost",
    }
)  # fmt: skip


# Names an IPython kernel provides without the user defining them.
IPYTHON_NAMES = frozenset({"display", "get_ipython", "In", "Out", "exit", "quit", "_", "__", "___"})


SAFE_SCALARS = (bool, int, float, complex, str, bytes, type(None))


ROW_SAMPLE = 50_000  # frames/series longer than this are described from an evenly spaced sample


ARRAY_SAMPLE = 200_000  # array/tensor elements scanned at most for NaN/min/max


UNIQUE_LIMIT = 100_000  # elements at most for unique counts


MAX_ITEMS = 20  # elements of a container shown


_NOKEY = object()


_MISSING = object()


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
    """Per-call state: options, deadline, library modules and collected results.

    The budget bounds value statistics only (scans of arrays, tensors and frames, dataset samples):
    summarizers test `over()` before computing them. Structural and representation facts (shapes,
    dtypes, devices, layer sizes, columns) are cheap, bounded reads and are written whatever it says.
    """

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
        # Why GPU tensors get no value statistics in this call ("GPU busy", a CUDA error), once known:
        # after a device-side assert every CUDA call fails, so it is asked once per call, not per tensor.
        self.gpu_note: dict[str, str] = {}

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


def _add(entry: dict[str, Any], cat: str, key: str, value: Any) -> None:
    entry["facts"].append(_fact(cat, key, value))


def _callable_name(fn: Any) -> str:
    """A function's name, else its type's: no attribute lookup on arbitrary objects."""
    return str(fn.__name__) if _isinst(fn, _ROUTINES) else _short_type(fn)


def _root_of_function(fn: Any) -> str:
    if not _isinst(fn, _ROUTINES):
        return _root(type(fn))
    mod = getattr(fn, "__module__", "") or ""
    return mod.split(".", 1)[0] if isinstance(mod, str) else ""


def _trusted_callable(fn: Any) -> bool:
    if _isclass(fn):
        return _trusted(fn)
    return _root_of_function(fn) in TRUSTED_ROOTS or (_trusted(type(fn)) and not _isfunction(fn))
