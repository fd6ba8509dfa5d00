"""What the probe writes and how long it may take: per-call options and the time budget (`_Ctx`), facts
and entries as plain JSON, bounded reprs, close names.
"""

from __future__ import annotations

import difflib
import math
import time
from collections.abc import Iterator
from typing import Any

from .safe import _MISSING, _is, _root, _trusted, _type_name

DEFAULT_OPTIONS: dict[str, Any] = {
    "max_columns": 20,
    "probe_samples": 10,
    "budget_ms": 150.0,
    "max_chars": 80,
    "docs": False,
    "history": False,
}


SAFE_SCALARS = (bool, int, float, complex, str, bytes, type(None))


ROW_SAMPLE = 50_000  # frames/series longer than this are described from an evenly spaced sample


ARRAY_SAMPLE = 200_000  # array/tensor elements scanned at most for NaN/min/max


UNIQUE_LIMIT = 100_000  # elements at most for unique counts


MAX_ITEMS = 20  # elements of a container shown


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


def _add(entry: dict[str, Any], cat: str, key: str, value: Any) -> None:
    entry["facts"].append(_fact(cat, key, value))
