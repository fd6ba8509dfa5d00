"""Reading objects without running user code: type tests that no metaclass can fool, a class's own
namespace read through the interpreter's slots, and which classes are a trusted library's own code
(`TRUSTED_ROOTS`, the one list of the project: the checks import it too).
"""

from __future__ import annotations

import abc
import sys
import types
import weakref
from collections.abc import Mapping
from typing import Any

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


def _safe_dir(obj: Any) -> list[str]:
    """Attribute names from the instance dict and the class dicts (no user __dir__)."""
    names: set[str] = set(k for k in _inst_dict(obj) if isinstance(k, str))
    for cls in _mro(type(obj)):
        names.update(k for k in _module_dict(cls) if isinstance(k, str))
    if _isinst(obj, types.ModuleType):
        names.update(k for k in _module_dict(obj) if isinstance(k, str))
    return sorted(n for n in names if not n.startswith("__"))
