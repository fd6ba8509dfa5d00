"""The summarizer registry and `summarize()`, which never raises: a failing summarizer leaves a type-only
entry with the reason.

The time budget never cuts an entry short: every object gets its summarizer, and the summarizers skip
their value statistics once `ctx.over()` (see `_Ctx`), so shapes, dtypes, devices and layer sizes of
late objects survive a slow first call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..access import _root_of_function
from ..facts import _Ctx, _entry, _trim
from ..safe import _isroutine, _root, _type_name
from .objects import _sum_object

Summarizer = Callable[[Any, dict[str, Any], _Ctx, dict[str, Any]], None]


_REGISTRY: list[tuple[Callable[[Any], bool], Summarizer]] = []


def _summarizer(match: Callable[[Any], bool]) -> Callable[[Summarizer], Summarizer]:
    def register(fn: Summarizer) -> Summarizer:
        _REGISTRY.append((match, fn))
        return fn

    return register


def summarize(obj: Any, expr: str, ctx: _Ctx, hints: dict[str, Any] | None = None) -> dict[str, Any]:
    """Entry for one object. Never raises: a failing summarizer leaves what it wrote and an `error`."""
    entry = _entry(expr, _type_name(obj))
    root = _root(type(obj))
    if root == "builtins" and _isroutine(obj):
        root = _root_of_function(obj)  # a library's function (accuracy_score): its library is used too
    if root and root != "builtins":
        ctx.libs.add(root)
    for match, fn in _REGISTRY:
        try:
            hit = match(obj)
        except Exception:
            hit = False
        if hit:
            try:
                fn(obj, entry, ctx, hints or {})
            except Exception as exc:
                entry["error"] = error_line(exc)
            return entry
    try:
        _sum_object(obj, entry, ctx, hints or {})
    except Exception as exc:
        entry["error"] = error_line(exc)
    return entry


def error_line(exc: BaseException, limit: int = 120) -> str:
    """`Type: first line of the message`: some messages (CUDA errors) run over many lines."""
    try:
        text = str(exc)
    except Exception:
        text = ""
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return f"{type(exc).__name__}: {_trim(first, limit)}" if first else type(exc).__name__
