"""The catch-all summarizer: any other object, described by its type and its plain instance attributes."""

from __future__ import annotations

import contextlib
import types
from typing import Any

from ..facts import MAX_ITEMS, _add, _Ctx, _jsonable, _py_scalar, _safe_repr
from ..safe import _MISSING, _inst_dict, _is, _isinst, _isroutine, _short_type, _trusted


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
