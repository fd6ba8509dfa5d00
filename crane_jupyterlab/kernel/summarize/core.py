"""The summarizer registry and `summarize()`, which never raises: a failing summarizer leaves a type-only
entry with the reason.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..safe import _Ctx, _entry, _root, _trim, _type_name
from .objects import _sum_object

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
