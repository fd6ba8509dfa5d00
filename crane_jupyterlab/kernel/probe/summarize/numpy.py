"""numpy arrays and scalars; the sampled value statistics (NaN, range, uniques, counts) other
summarizers reuse.
"""

from __future__ import annotations

import math
import sys
from typing import Any

from ..facts import ARRAY_SAMPLE, SAFE_SCALARS, UNIQUE_LIMIT, _add, _Ctx, _py_scalar
from ..safe import _MISSING, _is, _short_type
from .core import _summarizer


def _np() -> Any:
    return sys.modules.get("numpy")


@_summarizer(lambda o: _is(o, "numpy", "ndarray"))
def _sum_ndarray(a: Any, e: dict[str, Any], ctx: _Ctx, hints: dict[str, Any]) -> None:
    _add(e, "S", "shape", list(a.shape))
    _add(e, "R", "dtype", str(a.dtype))
    # Memory order decides what works in place (`a.shape = ...`, `a.view(dtype)`), not only speed.
    flags = a.flags
    _add(e, "R", "order", "C" if flags.c_contiguous else "F" if flags.f_contiguous else "strided")
    _array_stats(a, e, ctx)


def _array_stats(a: Any, e: dict[str, Any], ctx: _Ctx) -> None:
    """NaN count, min/max (on a sample when big) and, for 1-D data, uniques and value counts."""
    np = _np()
    if a.size == 0 or np is None:
        return
    if ctx.over():
        _add(e, "R", "note", "stats skipped (time budget)")
        return
    flat, sampled = _flat_sample(a)
    if flat.dtype.kind == "O":
        _add(e, "R", "element_types", element_types(flat.tolist()))
    _sample_stats(flat, sampled, a.ndim == 1 or (a.ndim == 2 and a.shape[1] == 1), e, ctx)


def element_types(values: list[Any]) -> list[str]:
    """Sorted type names of the values, a float NaN as "nan": an object array or column of numbers
    converts where one of text does not, and None fails arithmetic where NaN does not; the dtype alone
    says neither."""
    first = dict(zip(map(type, values), values))  # one value per type, at C speed
    names = {_short_type(v) for t, v in first.items() if t is not float}
    if float in first:
        nan = [v != v for v in values if type(v) is float]
        names |= {"nan"} if all(nan) else {"float", "nan"} if any(nan) else {"float"}
    shown = sorted(names)
    return shown if len(shown) <= 8 else [*shown[:7], "..."]  # "...": more than it shows


def _sample_stats(flat: Any, sampled: bool, one_d: bool, e: dict[str, Any], ctx: _Ctx) -> None:
    """The value facts of a 1-D numpy sample (`sampled`: drawn from bigger data, which it stands for)."""
    np = _np()
    if sampled:
        _add(e, "V", "sampled", int(flat.size))
    kind = flat.dtype.kind
    if kind in "fc":
        _add(e, "V", "nan", int(np.isnan(flat).sum()))
    if kind in "biuf":
        with np.errstate(all="ignore"):
            lo, hi = (np.nanmin(flat), np.nanmax(flat)) if kind == "f" else (flat.min(), flat.max())
        _add(e, "V", "min", _num(lo))
        _add(e, "V", "max", _num(hi))
    if one_d:
        _values_1d(flat if sampled else flat[:UNIQUE_LIMIT], e, ctx, kind in "iubUSO")
        if kind in "US":
            _add(e, "V", "examples", [str(v)[: ctx.max_chars] for v in flat[:3].tolist()])


RUNS = 256  # contiguous runs in a sample: short enough that block structure averages out


def sample_plan(
    size: int, n: int = ARRAY_SAMPLE, runs: int = RUNS, spread: bool = True
) -> tuple[list[tuple[int, int]], Any]:
    """Where to read a sample of about `n` of `size` flat elements: `runs` contiguous runs (start,
    stop), one at a random offset in each of `runs` equal strata, holding three quarters of it (all of
    it without `spread`), and the last quarter at uniformly random positions.

    Every-k-th-element sampling is biased on periodic data (a NaN every 1000th element read with a
    step of 500 looks like half NaN); stratified runs at random offsets and random positions are both
    unbiased, and the random quarter also reaches structure longer than a run. Runs are cheap to read
    (cache lines, or one copy each from a GPU); random reads cost a cache miss each, hence a quarter.
    A fixed seed per size keeps the facts reproducible.
    """
    np = _np()
    rng = np.random.default_rng(size)  # its own generator: the user's global random state is untouched
    n_spread = n // 4 if spread else 0
    length = max(1, (n - n_spread) // runs)
    stride = (size - length) / runs
    starts = (np.arange(runs) + rng.random(runs)) * stride
    return [(int(s), int(s) + length) for s in starts.tolist()], rng.integers(0, size, n_spread)


def _flat_sample(a: Any) -> tuple[Any, bool]:
    """A 1-D array of at most ARRAY_SAMPLE elements of `a` (all of them when that is all there is);
    big arrays are read at `sample_plan`'s positions only, never copied whole. The statistics do not
    depend on element order, so a transposed array is read in memory order."""
    if a.size <= ARRAY_SAMPLE:
        return a.reshape(-1), False
    np = _np()
    dense = a.transpose(sorted(range(a.ndim), key=lambda i: -abs(a.strides[i]))) if a.ndim > 1 else a
    if dense.flags.c_contiguous:
        flat = dense.reshape(-1)  # a view
        runs, spread = sample_plan(int(a.size))
        return np.concatenate([flat[lo:hi] for lo, hi in runs] + [flat[spread]]), True
    # sliced views (a[:, :10], a[::2]): gathering by multi-index costs more per element, so read fewer
    runs, spread = sample_plan(int(a.size), ARRAY_SAMPLE // 4)
    positions = np.concatenate([np.arange(lo, hi) for lo, hi in runs] + [spread])
    return a[np.unravel_index(positions, a.shape)], True


def _num(v: Any) -> Any:
    scalar = _py_scalar(v)
    v = scalar if scalar is not _MISSING else v
    if type(v) is float and math.isfinite(v):
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
    """What 1-D values look like. A few distinct integers are "few-valued", not "categorical": only a
    category dtype says the values are categories (a count of rooms, a rating is a number)."""
    if n_unique == 0:
        return "empty"
    if n_unique == 1:
        return "constant"
    if n_unique == 2:
        return "binary"
    if discrete and n_unique <= 30:
        return "few-valued"
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
