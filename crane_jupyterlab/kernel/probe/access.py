"""Attribute and item access without running user code: each read answers from the namespaces
themselves, or runs a trusted library's own code, or raises `_Unsafe` (the value exists only behind
notebook code); and whether a callable is a library's.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Mapping
from typing import Any

from .safe import (
    _MISSING,
    _ROUTINES,
    TRUSTED_ROOTS,
    _inst_dict,
    _is,
    _is_data_descriptor,
    _isclass,
    _isfunction,
    _isinst,
    _ismethod,
    _isroutine,
    _lookup,
    _method_func,
    _module_dict,
    _root,
    _short_type,
    _trusted,
)


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
        _, custom = _lookup(tp, "__getattribute__")
        if _isinst(custom, types.FunctionType):
            # A library's own __getattribute__ may answer what no class defines (statsmodels' results
            # wrappers delegate every name to the results they wrap): not evaluated, never "missing".
            raise _Unsafe("a library's __getattribute__ not evaluated")
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
