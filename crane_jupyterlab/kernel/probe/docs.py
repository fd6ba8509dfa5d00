"""+D grounding: signatures and the Notes/Warnings sections of the library callables the cell calls."""

from __future__ import annotations

import ast
import inspect
import sys
import types
from typing import Any

from .access import _get_attr, _trusted_callable
from .facts import _Ctx, _safe_repr, _trim
from .safe import (
    _MISSING,
    _TYPE_MODULE,
    _TYPE_QUALNAME,
    _class_str,
    _isclass,
    _isfunction,
    _isinst,
    _ismethod,
    _lookup,
    _method_func,
    _short_type,
    _trusted,
    _type_name,
)
from .scan import _Scanner
from .signatures import _signature_of, _signature_text


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
        if fn is _MISSING or not _trusted_callable(fn):
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
            return (_get_attr(base, node.attr) if _trusted(base) else _MISSING), False
        return _get_attr(base, node.attr), False
    return _MISSING, False


def _doc_entry(call: str, fn: Any, ctx: _Ctx) -> dict[str, Any] | None:
    # A bound method's docs are its function's: inspect.getdoc on the method would look up the
    # instance's `__class__`, which a notebook object may compute.
    fn = _method_func(fn) if _ismethod(fn) else fn
    sig = _signature_of(fn)
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
    raw = _docstring(fn)
    if not raw and _isclass(fn):
        raw = _docstring(_lookup(fn, "__init__")[1])
    module, qualname = _origin_names(fn)
    return {
        "call": call,
        "qualname": f"{module}.{qualname}",
        "signature": _trim(_signature_text(sig, ctx), 300) if sig is not None else None,
        "required": required,
        "optional": optional,
        "kwonly": kwonly,
        "notes": _doc_section(raw, "Notes"),
        "warnings": _doc_section(raw, "Warnings"),
    }


def _docstring(fn: Any) -> str:
    """The cleaned docstring of a trusted library callable (inspect.getdoc, which may look the name up
    in the library's classes); "" for anything else."""
    if fn is _MISSING or not _trusted_callable(fn):
        return ""
    try:
        doc = inspect.getdoc(fn)
    except Exception:
        return ""
    return doc if type(doc) is str else ""


def _origin_names(fn: Any) -> tuple[str, str]:
    if _isclass(fn):
        return _class_str(_TYPE_MODULE, fn), _class_str(_TYPE_QUALNAME, fn) or _short_type(fn)
    if _isinst(fn, (types.FunctionType, types.BuiltinFunctionType)):
        module, qualname = fn.__module__, fn.__qualname__
        return (module if type(module) is str else ""), (qualname if type(qualname) is str else "")
    return _type_name(fn).rsplit(".", 1)[0], _short_type(fn)


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
