"""Python's own objects: scalars, containers, modules, functions and classes, iterators (never advanced)."""

from __future__ import annotations

import builtins
import dis
import types
from typing import Any

from ..access import _trusted_callable
from ..facts import MAX_ITEMS, SAFE_SCALARS, _add, _Ctx, _safe_repr, _trim
from ..safe import (
    _TYPE_MODULE,
    _TYPE_QUALNAME,
    _class_str,
    _isbuiltin,
    _isclass,
    _isfunction,
    _isinst,
    _ismethod,
    _isroutine,
    _method_func,
    _module_dict,
    _short_type,
    _trusted,
)
from ..signatures import _signature_of, _signature_text
from .core import _summarizer
from .objects import _short


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
    sig = _signature(obj, ctx)
    if sig is not None:
        _add(e, "R", "signature", _trim(sig, 160))
    if _isfunction(obj) and not _trusted_callable(obj):
        names = _function_globals(obj)
        scope = obj.__globals__ if type(obj.__globals__) is dict else {}
        missing = [n for n in names if n not in scope and not hasattr(builtins, n)]
        if missing:
            _add(e, "S", "undefined_globals", missing[:10])  # NameError when the body reaches them


def _origin(obj: Any) -> tuple[str, str] | None:
    """(defining module, qualified name) of a class or a plain/builtin function, read without user
    code (a metaclass may define `__getattribute__`; the type's own slot is used)."""
    try:
        if _isclass(obj):
            module, qualname = _class_str(_TYPE_MODULE, obj), _class_str(_TYPE_QUALNAME, obj)
        elif _isfunction(obj) or _isbuiltin(obj):
            module, qualname = obj.__module__, obj.__qualname__  # C slots of exact function types
        elif _ismethod(obj):  # a bound method of a plain function (`ols = OLS.from_formula`): its function's
            func = _method_func(obj)
            module, qualname = func.__module__, func.__qualname__
        else:
            return None
    except Exception:
        return None
    if type(module) is str and type(qualname) is str and module and qualname:
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


def _signature(obj: Any, ctx: _Ctx) -> str | None:
    sig = _signature_of(obj)
    return _signature_text(sig, ctx) if sig is not None else None


@_summarizer(
    lambda o: (
        _isinst(o, (types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType))
        or type(o).__name__.endswith("iterator")
    )
)
def _sum_iterator(obj: Any, e: dict[str, Any], ctx: _Ctx, hints: dict[str, Any]) -> None:
    _add(e, "R", "note", "iterator (not consumed)")
