"""numpy arrays and scalars; the sampled value statistics (NaN, range, uniques, counts) other
summarizers reuse.
"""

from __future__ import annotations

import math
import sys
from typing import Any

from ..safe import _MISSING, ARRAY_SAMPLE, SAFE_SCALARS, UNIQUE_LIMIT, _add, _Ctx, _is, _py_scalar
from .core import _summarizer


def _np() -> Any:
    return sys.modules.get("numpy")


@_summarizer(lambda o: _is(o, "numpy", "ndarray"))
def _sum_ndarray(a: Any, e: dict[str, Any], ctx: _Ctx, hints: dict[str, Any]) -> None:
    _add(e, "S", "shape", list(a.shape))
    _add(e, "R", "dtype", str(a.dtype))
    _array_stats(a, e, ctx)


def _array_stats(a: Any, e: dict[str, Any], ctx: _Ctx) -> None:
    """NaN count, min/max (on a sample when big) and, for 1-D data, uniques and value counts."""
    np = _np()
    if a.size == 0 or np is None:
        return
    flat, sampled = _flat_sample(a)
    if sampled:
        _add(e, "V", "sampled", int(flat.size))
    kind = a.dtype.kind
    if kind in "fc":
        _add(e, "V", "nan", int(np.isnan(flat).sum()))
    if kind in "biuf":
        with np.errstate(all="ignore"):
            lo, hi = (np.nanmin(flat), np.nanmax(flat)) if kind == "f" else (flat.min(), flat.max())
        _add(e, "V", "min", _num(lo))
        _add(e, "V", "max", _num(hi))
    if a.ndim == 1 or (a.ndim == 2 and a.shape[1] == 1):
        _values_1d(a.reshape(-1)[:UNIQUE_LIMIT] if not sampled else flat, e, ctx, kind in "iubUSO")
        if a.ndim == 1 and kind in "US" and a.size:
            _add(e, "V", "examples", [str(v)[: ctx.max_chars] for v in a[:3].tolist()])


def _flat_sample(a: Any) -> tuple[Any, bool]:
    """A 1-D view of at most ARRAY_SAMPLE evenly spaced elements (no copy of big arrays)."""
    if a.size <= ARRAY_SAMPLE:
        return a.reshape(-1), False
    if a.flags.c_contiguous:
        step = -(-a.size // ARRAY_SAMPLE)
        return a.reshape(-1)[::step], True
    rows = max(1, ARRAY_SAMPLE // max(1, a.size // a.shape[0]))
    step = -(-a.shape[0] // rows)
    return a[::step].reshape(-1)[:ARRAY_SAMPLE], True


def _num(v: Any) -> Any:
    scalar = _py_scalar(v)
    v = scalar if scalar is not _MISSING else v
    if isinstance(v, float) and math.isfinite(v):
        return float(f"{v:.4g}")
    return v


def _values_1d(flat: Any, e: dict[str, Any], ctx: _Ctx, discrete: bool) -> None:
    """Unique count, kind and (for few values) value counts of a 1-D numpy sample."""
    np = _np()
    if np is None or flat.size == 0:
        return
    if flat.dtype.kind == "O" and not all(type(v) in SAFE_SCALARS for v in flat[:50].tolist()):
        return
    try:
        values, counts = np.unique(flat, return_counts=True)
    except Exception:
        return
    n_unique = int(values.size)
    _add(e, "V", "unique", n_unique)
    _add(e, "V", "kind", _kind(n_unique, discrete or flat.dtype.kind == "b"))
    if discrete and n_unique <= 30:
        _add(e, "V", "counts", _counts(values.tolist(), counts.tolist(), ctx))


def _kind(n_unique: int, discrete: bool) -> str:
    if n_unique == 0:
        return "empty"
    if n_unique == 1:
        return "constant"
    if n_unique == 2:
        return "binary"
    if discrete and n_unique <= 30:
        return "categorical"
    return "continuous" if not discrete else "many-valued"


def _counts(values: list[Any], counts: list[int], ctx: _Ctx) -> list[list[Any]]:
    """Most frequent first; when there are many values keep the 4 most and the 2 least frequent."""
    pairs = sorted(zip(values, counts), key=lambda p: (-p[1], repr(p[0])))
    if len(pairs) > 8:
        pairs = pairs[:4] + pairs[-2:]
    return [[v if not isinstance(v, str) else v[: ctx.max_chars], int(c)] for v, c in pairs]


@_summarizer(lambda o: _is(o, "numpy", "generic"))
def _sum_npscalar(obj: Any, e: dict[str, Any], ctx: _Ctx, hints: dict[str, Any]) -> None:
    _add(e, "R", "dtype", str(obj.dtype))
    _add(e, "V", "value", _num(obj))
