"""Callables' signatures, read only where reading runs no notebook code, and written without the
defaults' own reprs.
"""

from __future__ import annotations

import inspect
import types
from typing import Any

from .access import _trusted_callable
from .facts import _Ctx, _safe_repr
from .safe import (
    _MISSING,
    _PLAIN_METACLASSES,
    _TYPE_MODULE,
    _TYPE_QUALNAME,
    _class_str,
    _inst_dict,
    _isclass,
    _isfunction,
    _ismethod,
    _lookup,
    _method_func,
    _root,
    _trusted,
    _type_name,
)


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


MAX_PARAMS = 80


def _param_names(sig: inspect.Signature) -> list[str]:
    """The parameters' names in order, with the markers a signature is written with: "/" after the
    positional-only ones, "*" before keyword-only ones (when there is no `*args`), "*args", "**kwargs"."""
    out: list[str] = []
    kinds = inspect.Parameter
    star = False
    params = list(sig.parameters.values())[:MAX_PARAMS]
    for i, p in enumerate(params):
        if p.kind is kinds.VAR_POSITIONAL:
            out.append("*" + p.name)
            star = True
        elif p.kind is kinds.VAR_KEYWORD:
            out.append("**" + p.name)
        else:
            if p.kind is kinds.KEYWORD_ONLY and not star:
                out.append("*")
                star = True
            out.append(p.name)
        following = params[i + 1].kind if i + 1 < len(params) else None
        if p.kind is kinds.POSITIONAL_ONLY and following is not kinds.POSITIONAL_ONLY:
            out.append("/")
    return out


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
