"""Reading objects without running user code: type tests that no metaclass can fool, attribute and
item access restricted to trusted libraries, bounded reprs, per-call options and the time budget.
"""

from __future__ import annotations

import abc
import difflib
import inspect
import math
import sys
import time
import types
import weakref
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
    """A bound method of a plain function (a MethodType may wrap any callable, whose attributes a
    method forwards to: those are user code)."""
    return _isinst(obj, types.MethodType) and _isfunction(_method_func(obj))


def _method_func(method: Any) -> Any:
    return _METHOD_FUNC.__get__(method, types.MethodType)


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
    # Exact types only: a subclass's __int__, __abs__ or __format__ is notebook code.
    if value is None or type(value) in (bool, str):
        return value
    if type(value) is int:
        return int(value) if abs(value) < 2**63 else f"<int of {value.bit_length()} bits>"
    if type(value) is float:
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return float(value)
    if depth > 6:
        return "..."
    if type(value) in (list, tuple):
        return [_jsonable(v, depth + 1) for v in value[:200]]
    if type(value) is dict:
        return {_jsonable_key(k): _jsonable(v, depth + 1) for k, v in list(value.items())[:200]}
    scalar = _py_scalar(value)
    if scalar is not _MISSING:
        return _jsonable(scalar, depth + 1)
    return _type_name(value)


def _jsonable_key(key: Any) -> str:
    scalar = _py_scalar(key)
    key = scalar if scalar is not _MISSING else key
    if type(key) in (str, int, float, bool) or key is None:
        return str(key)
    return _type_name(key)


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


# The interpreter's own accessors of a class's slots. `type.__getattribute__(cls, name)` would consult
# the metaclass's MRO first, where a metaclass may define `__dict__`, `__mro__` or `__module__` as
# properties of its own; these descriptors read the C slots directly.
_TYPE_DICT = type.__dict__["__dict__"]
_TYPE_MRO = type.__dict__["__mro__"]
_TYPE_MODULE = type.__dict__["__module__"]
_TYPE_QUALNAME = type.__dict__["__qualname__"]
_TYPE_NAME = type.__dict__["__name__"]
_TYPE_FLAGS = type.__dict__["__flags__"]
_MODULE_DICT: Any = vars(types.ModuleType)["__dict__"]
_METHOD_FUNC = types.MethodType.__dict__["__func__"]
_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by a class statement or type(), not static C


def _class_dict(cls: Any) -> Mapping[str, Any]:
    """A class's own namespace, read through the interpreter's slot (no metaclass code)."""
    try:
        d = _TYPE_DICT.__get__(cls, type)
    except Exception:
        return {}
    return d if type(d) is types.MappingProxyType else {}


def _class_str(descriptor: Any, cls: Any) -> str:
    """`__module__`/`__qualname__`/`__name__` of a class as an exact str ("" when it is anything else)."""
    try:
        value = descriptor.__get__(cls, type)
    except Exception:
        return ""
    return value if type(value) is str else ""


def _class_name(cls: Any) -> str:
    return _class_str(_TYPE_NAME, cls)


def _root(tp: type) -> str:
    """Top package of a class's module; "" for a class that only claims a library's module (a notebook
    class whose `__module__` was set to "pandas" does not make its code the library's)."""
    mod = _class_str(_TYPE_MODULE, tp)
    root = mod.split(".", 1)[0]
    if root in TRUSTED_ROOTS and not _genuine(tp, root):
        return ""
    return root


def _trusted(tp: type) -> bool:
    return _root(tp) in TRUSTED_ROOTS


# A trusted class's verdict, by id, with a weak reference that proves the id still names that class.
_GENUINE: dict[int, tuple[Any, bool]] = {}


def _genuine(tp: type, root: str) -> bool:
    """Whether a class claiming package `root` is that package's (or the interpreter's) code.

    A static C type cannot come from notebook code. A class made by Python code is genuine when every
    Python function in its namespace (methods, properties' accessors, static and class methods) was
    compiled from an installed package's file (a trusted library's folder, site-packages, the standard
    library); a notebook cell, a helper module beside it, or `exec` gives other file names. (A
    deliberate forger can still name a library file when compiling; the probe defends against
    objects, not against their author.)
    """
    try:
        flags = _TYPE_FLAGS.__get__(tp, type)
    except Exception:
        return False
    if not flags & _HEAPTYPE:
        return True
    key = id(tp)
    known = _GENUINE.get(key)
    if known is not None and known[0]() is tp:
        return bool(known[1])
    verdict = _functions_in_library(tp)
    try:
        ref = weakref.ref(tp)
    except TypeError:
        return verdict
    if len(_GENUINE) > 4096:
        _GENUINE.clear()
    _GENUINE[key] = (ref, verdict)
    return verdict


def _functions_in_library(tp: type) -> bool:
    libraries, stdlib = _library_dirs()
    for value in list(_class_dict(tp).values())[:2000]:
        for fn in _functions_of(value):
            filename = _FUNCTION_CODE.__get__(fn, types.FunctionType).co_filename
            if type(filename) is not str:
                return False
            if filename.startswith(libraries) or filename.startswith(stdlib) or _installed(filename):
                continue
            return False
    return True


def _installed(filename: str) -> bool:
    """A file of an installed package (libraries decorate their methods with helpers of other
    packages, e.g. typing_extensions): notebook cells and modules beside the notebook are not."""
    import os

    parts = filename.split(os.sep)
    return "site-packages" in parts or "dist-packages" in parts


_FUNCTION_CODE = types.FunctionType.__dict__["__code__"]


def _functions_of(value: Any) -> list[Any]:
    """The plain functions a class attribute holds: itself, a property's accessors, a static/class
    method's function."""
    if _isfunction(value):
        return [value]
    if type(value) is property:
        return [f for f in (value.fget, value.fset, value.fdel) if _isfunction(f)]
    if type(value) in (staticmethod, classmethod):
        inner = value.__func__
        return [inner] if _isfunction(inner) else []
    return []


_LIBRARY_DIRS: list[Any] = []


def _library_dirs() -> tuple[tuple[str, ...], str]:
    """(folders of the trusted libraries that are loaded, the standard library's folder). Installed
    packages may live under the latter (site-packages): the caller excludes those."""
    import os

    loaded = tuple(sorted(r for r in TRUSTED_ROOTS if r in sys.modules))
    if _LIBRARY_DIRS and _LIBRARY_DIRS[0] == loaded:
        return _LIBRARY_DIRS[1]  # type: ignore[no-any-return]
    dirs: list[str] = []
    for root in loaded:
        mod = sys.modules.get(root)
        if type(mod) is not types.ModuleType:
            continue
        path = _module_dict(mod).get("__file__")
        if type(path) is str and os.path.basename(path) == "__init__.py":
            dirs.append(os.path.dirname(path) + os.sep)
    found = (tuple(dirs), os.path.dirname(os.__file__) + os.sep)
    _LIBRARY_DIRS[:] = [loaded, found]
    return found


def _type_name(obj: Any) -> str:
    """Module-qualified type name, shortened to the public top package (pandas.DataFrame, torch.Tensor)."""
    tp = type(obj)
    name = _class_str(_TYPE_QUALNAME, tp)
    mod = _class_str(_TYPE_MODULE, tp)
    if not name:
        return "object"
    root = mod.split(".", 1)[0]
    if root == "builtins":
        return name
    if root in TRUSTED_ROOTS and "." not in name and _root(tp) == root:
        top = sys.modules.get(root)
        if top is not None and _module_dict(top).get(name) is tp:
            return f"{root}.{name}"
    return f"{mod}.{name}"


def _short_type(obj: Any) -> str:
    name = _type_name(obj)
    return name.rsplit(".", 1)[-1]


def _module_dict(mod: Any) -> Mapping[str, Any]:
    """A module's or class's namespace (a class gives a mappingproxy), read without user code."""
    if _isinst(mod, type):
        return _class_dict(mod)
    if not _isinst(mod, types.ModuleType):
        return {}
    try:
        d = _MODULE_DICT.__get__(mod, types.ModuleType)
    except Exception:
        return {}
    return d if type(d) is dict else {}


def _inst_dict(obj: Any) -> dict[str, Any]:
    """The instance __dict__, read through the interpreter's own `__dict__` slot of its class: a class
    that defines `__dict__` (a property) or `__getattribute__` is not asked."""
    if _isinst(obj, types.ModuleType):
        d = _module_dict(obj)
        return d if type(d) is dict else {}
    for cls in _mro(type(obj)):
        slot = _class_dict(cls).get("__dict__", _MISSING)
        if slot is _MISSING:
            continue
        if type(slot) is not types.GetSetDescriptorType:
            return {}
        try:
            d = slot.__get__(obj, type(obj))
        except Exception:
            return {}
        return d if type(d) is dict else {}
    return {}


def _mro(tp: type) -> tuple[type, ...]:
    try:
        mro = _TYPE_MRO.__get__(tp, type)
    except Exception:
        return (tp,)
    return mro if type(mro) is tuple else (tp,)


def _lookup(tp: type, name: str) -> tuple[Any, Any]:
    """(defining class, value) of `name` in the namespaces of `tp`'s MRO, or (None, _MISSING)."""
    for cls in _mro(tp):
        d = _class_dict(cls)
        if name in d:
            return cls, d[name]
    return None, _MISSING


def _is_data_descriptor(value: Any) -> bool:
    tp = type(value)
    return _lookup(tp, "__set__")[1] is not _MISSING or _lookup(tp, "__delete__")[1] is not _MISSING


def _static_attr(obj: Any, name: str) -> Any:
    """What `getattr(obj, name)` would start from, found without running any code (like
    inspect.getattr_static, which reads `cls.__dict__` through a metaclass's hooks): a class's own
    namespace then its metaclass's, an instance's class data descriptors, then its __dict__."""
    if _isinst(obj, type):
        _, meta = _lookup(type(obj), name)
        if meta is not _MISSING and _is_data_descriptor(meta):
            return meta
        _, own = _lookup(obj, name)
        return own if own is not _MISSING else meta
    _, attr = _lookup(type(obj), name)
    if attr is not _MISSING and _is_data_descriptor(attr):
        return attr
    d = _inst_dict(obj)
    if type(name) is str and name in d:
        return d[name]
    return attr


# Names a notebook's subclass of a library class may define over the library's without the probe
# treating it as foreign: the probe never calls them (models are never run, estimators never fitted,
# loaders and iterators never advanced).
OVERRIDABLE = frozenset(
    {
        "__init__", "__module__", "__qualname__", "__doc__", "__weakref__", "__dict__", "__slots__",
        "__annotations__", "__orig_bases__", "__parameters__", "__abstractmethods__", "_abc_impl",
        "__firstlineno__", "__static_attributes__", "__classcell__", "__init_subclass__",
        "forward", "extra_repr", "call", "build", "get_config", "from_config", "compute_output_shape",
        "train_step", "test_step", "predict_step", "compile", "fit", "predict", "predict_proba",
        "transform", "fit_transform", "inverse_transform", "score", "decision_function", "__call__",
        "training_step", "validation_step", "configure_optimizers", "reset_parameters", "step",
        "zero_grad", "__sklearn_tags__", "_more_tags", "__iter__", "__next__", "__aiter__", "__anext__",
    }
)  # fmt: skip
# Library classes whose notebook subclasses are meant to redefine some names the probe does call or
# skip on purpose: a map-style torch Dataset is sampled through its own `__len__`/`__getitem__` (under
# the time budget), an iterable one is never iterated.
SUBCLASS_HOOKS = {
    ("torch", "Dataset"): frozenset({"__len__", "__getitem__", "__iter__"}),
    ("torch", "IterableDataset"): frozenset({"__iter__", "__len__"}),
}
# Always foreign when a notebook class defines them: how attribute access and type tests behave.
NEVER_OVERRIDABLE = frozenset({"__getattr__", "__getattribute__", "__class__", "__dict__", "__setattr__"})


def _is(obj: Any, root: str, *names: str, allow: frozenset[str] = frozenset()) -> bool:
    """True when a class in type(obj).__mro__ is named one of `names` and lives in package `root`, and
    the object behaves as that library class: every notebook class before it in the MRO only adds
    names of its own or redefines names the probe never calls (OVERRIDABLE, plus `allow`, e.g. a
    Dataset's `__len__`/`__getitem__`, which sampling calls on purpose), and its metaclass is the
    library's. A DataFrame subclass with its own `shape` property is not a DataFrame to the probe."""
    mro = _mro(type(obj))
    for i, cls in enumerate(mro):
        name = _class_name(cls)
        if name in names and _root(cls) == root:
            return _behaves_as_library(mro, i, allow | SUBCLASS_HOOKS.get((root, name), frozenset()))
    return False


_PLAIN_METACLASSES = (type, abc.ABCMeta)


def _behaves_as_library(mro: tuple[type, ...], index: int, allow: frozenset[str]) -> bool:
    if index == 0:
        return True
    for cls in mro[:index]:
        if _trusted(cls):
            continue
        if type(cls) not in _PLAIN_METACLASSES and not _trusted(type(cls)):
            return False  # a notebook metaclass: class-level lookups run its code
        library = mro[index:]
        for key in _class_dict(cls):
            if type(key) is not str or key in NEVER_OVERRIDABLE:
                return False
            if key in OVERRIDABLE or key in allow:
                continue
            if any(key in _class_dict(base) for base in library):
                return False
    return True


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
    """Attribute value without running user code. Raises AttributeError (missing) or _Unsafe.

    The lookup follows Python's own order (a class's metaclass data descriptors, the class's MRO, then
    the metaclass's; an instance's class data descriptors, its __dict__, then its class), reading every
    namespace through the interpreter's slots. Functions, static and class methods and the C-level
    descriptors are bound here; anything else runs only when a trusted library defines both the
    attribute and the descriptor's type, and no notebook `__getattr__` could be reached.
    """
    if _isinst(obj, types.ModuleType):
        if type(obj) is not types.ModuleType and not _trusted(type(obj)):
            raise _Unsafe("module subclass not evaluated")
        d = _module_dict(obj)
        if name in d:
            return d[name]
        modname = d.get("__name__")
        sub = sys.modules.get(f"{modname}.{name}") if type(modname) is str else None
        if sub is not None:
            return sub
        if not _trusted_module(obj):
            raise _Unsafe("module __getattr__ not evaluated")
        if _is_unimported_submodule(d, name):
            raise _Unsafe("submodule not imported yet")
        return getattr(obj, name)  # PEP 562 hooks of trusted libraries (deprecations, lazy names)
    tp = type(obj)
    if not _isinst(obj, type):
        _, attr = _lookup(tp, name)
        d = _inst_dict(obj)
        if name in d and (attr is _MISSING or not _is_data_descriptor(attr)):
            return d[name]  # what the object holds (a custom __getattribute__ could answer otherwise)
    if not _owner_trusted(tp, "__getattribute__"):
        raise _Unsafe("custom __getattribute__ not evaluated")  # getattr() would run it
    hook_owner, hook = _lookup(tp, "__getattr__")
    foreign = hook is not _MISSING and not _trusted(hook_owner)
    if _isinst(obj, type):
        meta_owner, meta = _lookup(tp, name)
        if meta is not _MISSING and _is_data_descriptor(meta):
            return _bind(obj, name, meta, meta_owner, False, foreign)
        owner, attr = _lookup(obj, name)
        if attr is not _MISSING:
            return _bind(obj, name, attr, owner, True, foreign)
        if meta is not _MISSING:
            return _bind(obj, name, meta, meta_owner, False, foreign)
    else:
        owner, attr = _lookup(tp, name)
        if attr is not _MISSING and _is_data_descriptor(attr):
            return _bind(obj, name, attr, owner, False, foreign)
        d = _inst_dict(obj)
        if name in d:
            return d[name]
        if attr is not _MISSING:
            return _bind(obj, name, attr, owner, False, foreign)
    if hook is _MISSING:
        raise AttributeError(name)
    if foreign:
        raise _Unsafe("dynamic attribute (__getattr__ not evaluated)")
    return getattr(obj, name)  # a library's __getattr__ (nn.Module's parameters and submodules)


# Descriptors implemented in C by the interpreter: their __get__ reads a slot or binds a method.
_C_DESCRIPTORS = (
    types.MemberDescriptorType, types.GetSetDescriptorType, types.MethodDescriptorType,
    types.WrapperDescriptorType, types.ClassMethodDescriptorType,
)  # fmt: skip


def _bind(obj: Any, name: str, attr: Any, owner: Any, on_class: bool, foreign_getattr: bool) -> Any:
    """What `getattr(obj, name)` returns when the lookup found `attr` in class `owner`'s namespace
    (`on_class`: obj is a class and owner one of its bases, so descriptors get no instance)."""
    kind = type(attr)
    if _lookup(kind, "__get__")[1] is _MISSING:
        return attr
    if kind is types.FunctionType:
        return attr if on_class else types.MethodType(attr, obj)
    if kind is staticmethod:
        return attr.__func__
    if kind is classmethod:
        inner = attr.__func__
        if _isfunction(inner):  # (a classmethod may wrap another descriptor, whose __get__ would run)
            return types.MethodType(inner, obj if on_class else type(obj))
        raise _Unsafe("classmethod of a descriptor not evaluated")
    if kind is property and on_class:
        return attr
    if kind in _C_DESCRIPTORS:
        return attr.__get__(None if on_class else obj, obj if on_class else type(obj))
    if owner is not None and _trusted(owner) and _trusted(kind) and not foreign_getattr:
        return getattr(obj, name)
    raise _Unsafe("property not evaluated")


def _trusted_module(mod: Any) -> bool:
    """A module of a trusted library, really loaded as that (not a module object named like one)."""
    name = _module_dict(mod).get("__name__")
    return (
        type(name) is str
        and name.split(".", 1)[0] in TRUSTED_ROOTS
        and type(mod) is types.ModuleType
        and sys.modules.get(name) is mod
    )


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
    owner, _ = _lookup(tp, name)
    return owner is not None and _trusted(owner)


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
    fn = _method_func(fn) if _ismethod(fn) else fn
    if _isinst(fn, _ROUTINES) and not _isinst(fn, types.MethodType):
        name = fn.__name__
        return name if type(name) is str else _short_type(fn)
    return _short_type(fn)


def _root_of_function(fn: Any) -> str:
    fn = _method_func(fn) if _ismethod(fn) else fn
    if not _isinst(fn, _ROUTINES):
        return _root(type(fn))
    if _isinst(fn, types.MethodType):
        return ""  # a method of some other callable: its attributes are that callable's
    mod = fn.__module__ if _isinst(fn, (types.FunctionType, types.BuiltinFunctionType)) else None
    if mod is None:
        owner: Any = getattr(fn, "__objclass__", None)  # a method descriptor of a C type
        return _root(owner) if _isclass(owner) else ""
    return mod.split(".", 1)[0] if type(mod) is str else ""


def _trusted_callable(fn: Any) -> bool:
    if _isclass(fn):
        return _trusted(fn)
    return _root_of_function(fn) in TRUSTED_ROOTS or (_trusted(type(fn)) and not _isroutine(fn))


def _signature_of(obj: Any, follow_wrapped: bool = True) -> inspect.Signature | None:
    """A callable's signature, computed only where reading it runs no notebook code; None otherwise.

    `inspect.signature` reads `obj.__signature__` (through a metaclass's hooks on a class), follows
    `__wrapped__`, checks the types of what it finds with isinstance (whose `__class__` fallback runs
    properties) and formats them with repr. So: a plain function is read from its code (its own
    `__signature__` only when it is an inspect.Signature; `__wrapped__` followed while it holds plain
    functions), a method of one drops its first parameter, a plain class (`_plain_class`) is read
    from its `__init__`, and anything else only when a trusted library defines it. Format the
    result with `_signature_text`.
    """
    try:
        if _ismethod(obj):
            sig = _function_signature(_method_func(obj), follow_wrapped)
            return _drop_first(sig) if sig is not None else None
        if _isfunction(obj):
            return _function_signature(obj, follow_wrapped)
        if _isclass(obj):
            return _class_signature(obj)
        if type(obj) in (types.BuiltinFunctionType, types.MethodDescriptorType, types.WrapperDescriptorType):
            return inspect.signature(obj) if _trusted_callable(obj) else None
        if _trusted(type(obj)) and _root(type(obj)) not in ("functools", "builtins", "types"):
            return inspect.signature(obj)  # a library's callable object (a ufunc, a layer)
    except Exception:
        return None
    return None


# Attributes of a function that inspect.signature reads and type-checks (partialmethod markers).
_SIGNATURE_MARKERS = ("__signature__", "_partialmethod", "__partialmethod__")


def _function_signature(fn: Any, follow_wrapped: bool = False) -> inspect.Signature | None:
    if follow_wrapped:
        fn = _unwrapped(fn)
        if fn is None:
            return None
    d = _inst_dict(fn)
    own = d.get("__signature__", _MISSING)
    if own is not _MISSING:
        return own if type(own) is inspect.Signature else None
    if any(marker in d for marker in _SIGNATURE_MARKERS):
        return None
    return inspect.Signature.from_callable(fn, follow_wrapped=False)


def _unwrapped(fn: Any) -> Any:
    """inspect.unwrap for plain functions: follow `__wrapped__` (functools.wraps) to the innermost
    function, stopping at one that declares `__signature__`; None when a link is anything else."""
    for _ in range(20):
        d = _inst_dict(fn)
        if "__signature__" in d:
            return fn
        inner = d.get("__wrapped__", _MISSING)
        if inner is _MISSING:
            return fn
        if not _isfunction(inner):
            return None
        fn = inner
    return None


def _drop_first(sig: inspect.Signature) -> inspect.Signature | None:
    params = list(sig.parameters.values())
    if not params or params[0].kind not in (params[0].POSITIONAL_ONLY, params[0].POSITIONAL_OR_KEYWORD):
        return None if not params or params[0].kind is not params[0].VAR_POSITIONAL else sig
    return sig.replace(parameters=params[1:])


def _plain_class(cls: type) -> bool:
    """A class whose call is `object.__new__` plus a plain Python `__init__` (or object's), with a
    plain metaclass and no `__signature__` anywhere: its `__init__`'s signature is the whole truth.
    Metaclasses with their own `__call__`, custom `__new__` (keras layers, named tuples, enums) and C
    bases are left alone."""
    if type(cls) not in _PLAIN_METACLASSES:
        return False
    if _lookup(cls, "__signature__")[1] is not _MISSING:
        return False
    if _lookup(cls, "__new__")[1] is not object.__new__:
        return False
    init = _lookup(cls, "__init__")[1]
    if init is object.__init__:
        return True
    return _isfunction(init) and not any(k in _inst_dict(init) for k in ("__wrapped__", *_SIGNATURE_MARKERS))


def _class_signature(cls: type) -> inspect.Signature | None:
    if not _plain_class(cls):
        if _trusted(cls) and _trusted(type(cls)):
            return inspect.signature(cls)  # a library class: its own code says how it is called
        return None
    init = _lookup(cls, "__init__")[1]
    if init is object.__init__:
        return inspect.Signature()
    sig = _function_signature(init)
    return _drop_first(sig) if sig is not None else None


def _signature_text(sig: inspect.Signature, ctx: _Ctx | None = None) -> str:
    """`str(signature)` with defaults and annotations shown by `_safe_repr` / their type names, never
    by their own repr."""
    parts: list[str] = []
    kinds = inspect.Parameter
    seen_star = False
    params = list(sig.parameters.values())
    for i, p in enumerate(params):
        text = p.name
        if p.annotation is not p.empty:
            text += f": {_annotation_text(p.annotation, ctx)}"
        if p.default is not p.empty:
            default = _safe_repr(p.default, ctx) if ctx is not None else _short_repr(p.default)
            text += f" = {default}" if p.annotation is not p.empty else f"={default}"
        if p.kind is kinds.VAR_POSITIONAL:
            text, seen_star = "*" + text, True
        elif p.kind is kinds.VAR_KEYWORD:
            text = "**" + text
        elif p.kind is kinds.KEYWORD_ONLY and not seen_star:
            parts.append("*")
            seen_star = True
        parts.append(text)
        following = params[i + 1].kind if i + 1 < len(params) else None
        if p.kind is kinds.POSITIONAL_ONLY and following is not kinds.POSITIONAL_ONLY:
            parts.append("/")
    text = "(" + ", ".join(parts) + ")"
    if sig.return_annotation is not sig.empty:
        text += f" -> {_annotation_text(sig.return_annotation, ctx)}"
    return text


def _annotation_text(annotation: Any, ctx: _Ctx | None) -> str:
    if type(annotation) is str:
        return repr(annotation)  # as inspect shows a postponed annotation
    if _isclass(annotation):
        module = _class_str(_TYPE_MODULE, annotation)
        name = _class_str(_TYPE_QUALNAME, annotation) or "?"
        return name if module in ("builtins", "") else f"{module}.{name}"
    return _safe_repr(annotation, ctx) if ctx is not None else _short_repr(annotation)


def _short_repr(value: Any) -> str:
    """A default value's text without a per-call context: plain scalars, else the type's name."""
    if type(value) in (bool, int, float, type(None)) or (type(value) is str and len(value) <= 40):
        return repr(value)
    return f"<{_type_name(value)}>"
