"""pandas DataFrames, Series and Indexes: shape, columns and dtypes, per-column value facts on a row
sample.
"""

from __future__ import annotations

from typing import Any

from ..facts import (
    MAX_ITEMS,
    ROW_SAMPLE,
    SAFE_SCALARS,
    UNIQUE_LIMIT,
    _add,
    _close,
    _Ctx,
    _entry,
    _fact,
    _safe_repr,
)
from ..safe import _is, _short_type
from .core import _summarizer
from .numpy import _counts, _kind, _np, _num, element_types


@_summarizer(lambda o: _is(o, "pandas", "DataFrame"))
def _sum_frame(df: Any, e: dict[str, Any], ctx: _Ctx, hints: dict[str, Any]) -> None:
    n_rows, n_cols = df.shape
    _add(e, "S", "shape", [n_rows, n_cols])
    cols = df.columns
    cap = 60
    names = [_label(c, ctx) for c in cols[:cap].tolist()]
    _add(e, "S", "columns", names)
    if n_cols > cap:
        _add(e, "S", "columns_more", n_cols - cap)
    as_text = _index_facts(df.index, e, ctx)
    # Levels of the column labels (a MultiIndex: `df['a', 'x']`, stack/unstack) and their names.
    _add(e, "R", "columns_type", _short_type(cols))
    levels = list(cols.names)[:10]
    _add(e, "S", "columns_names", _level_names(levels, ctx))
    as_text += ["columns_names"] if _not_plain(levels) else []
    if as_text:
        _add(e, "R", "label_reprs", as_text)
    dtypes = df.dtypes
    tally: dict[str, int] = {}
    odd: dict[Any, str] = {}  # columns a model cannot take as numbers: strings, objects, dates, categories
    for label, d in zip(cols[:2000].tolist(), dtypes.iloc[:2000].tolist()):
        name = str(d)
        tally[name] = tally.get(name, 0) + 1
        if getattr(d, "kind", "O") not in "biufc" and len(odd) < 20:
            odd[_label(label, ctx)] = name
    _add(e, "R", "dtypes", tally)
    if n_cols > ctx.max_columns:
        _add(e, "R", "non_numeric_columns", odd)
    sample = df
    if ctx.over():  # the budget is spent: keep the structure, skip the scans of values
        _add(e, "R", "note", "stats skipped (time budget)")
    else:
        if n_rows > ROW_SAMPLE:
            sample = _row_sample(df, n_rows)
            _add(e, "V", "sampled", len(sample))
        scan = sample if n_cols <= 500 else sample.iloc[:, :500]
        nan = scan.isna().sum()
        nan_cols = {_label(k, ctx): int(v) for k, v in nan.items() if v}
        _add(e, "V", "nan_columns", dict(list(nan_cols.items())[:30]))  # {} says "no NaN anywhere"
    attrs = hints.get("attrs")
    if attrs:  # columns the cell reads as attributes (`df.Age`), none shadowed by a DataFrame attribute
        _add(e, "S", "column_attrs", [_label(a, ctx) for a in attrs[:20]])
    wanted = [w for w in hints.get("columns", []) if not isinstance(w, list)]  # a tuple is one label
    # natural order for the first max_columns, then the named columns beyond them (or missing)
    chosen: list[Any] = list(dict.fromkeys(cols[: ctx.max_columns].tolist()))
    for w in wanted:
        if w not in chosen:
            chosen.append(w)
    for c in chosen:
        expr = f"{e['expr']}[{c!r}]"
        over = ctx.over()
        if over and c not in wanted:
            continue  # past the budget only the columns the cell names are described, by dtype
        try:
            present = _has_column(cols, c)
        except Exception:
            present = False
        if type(c) is tuple and not present:
            try:
                present = bool(c in cols)  # an index that cannot answer for a tuple proves nothing
            except Exception:
                continue
        if not present:
            child = _entry(expr, "missing column")
            child["missing"] = True
            child["facts"].append(_fact("S", "close", _close(str(c), [str(x) for x in cols[:2000].tolist()])))
            e["children"].append(child)
            continue
        col = sample[c]
        if _is(col, "pandas", "DataFrame"):  # duplicated column label
            child = _entry(expr, "pandas.DataFrame")
            child["facts"].append(_fact("S", "shape", list(col.shape)))
        elif over:
            child = _entry(expr, "pandas.Series")
            child["facts"].append(_fact("R", "dtype", str(col.dtype)))
        else:
            child = _entry(expr, "pandas.Series")
            _series_facts(col, child, ctx, counts=c in wanted)
        if c in wanted:
            child["named"] = True  # the cell names this column: renderers always show it
        e["children"].append(child)
    if len(cols) > len(chosen):
        _add(e, "S", "columns_left_out", len(cols) - len([c for c in chosen if _has_column(cols, c)]))


def _index_facts(index: Any, e: dict[str, Any], ctx: _Ctx) -> list[str]:
    """What the row labels are: partial indexing, unstack, resample and .loc depend on it. Returns
    ["index_names"] when a level's name is shown as text but is not (see `_not_plain`)."""
    # pandas and seaborn accept an index level's name where they accept a column's (groupby, x=...)
    names = list(index.names)[:10]
    _add(e, "S", "index_names", _level_names(names, ctx))
    _add(e, "R", "index_type", _short_type(index))  # resample/asfreq/.dt-like work needs a time index
    if _is(index, "pandas", "RangeIndex"):
        _add(e, "S", "index_range", [index.start, index.stop, index.step])  # labels, not positions
    elif _is(index, "pandas", "DatetimeIndex") and len(index):
        # With a freq the labels are date_range(start, periods, freq): asfreq, shift and seasonal
        # decompositions read it; `freq` None says the dates are irregular (or not known to be regular).
        dates = {"start": index[0].isoformat(), "freq": index.freqstr, "dtype": str(index.dtype)}
        _add(e, "R", "index_dates", dates)
    return ["index_names"] if _not_plain(names) else []


def _level_names(names: list[Any], ctx: _Ctx) -> list[Any]:
    return [None if n is None else _label(n, ctx) for n in names]


def _not_plain(labels: list[Any]) -> bool:
    """Labels `_label` shows as text that are not text (a numpy integer, a date, a tuple): `df[7]`
    finds a column named np.int64(7), not one named '7'. The `label_reprs` fact names such facts."""
    return any(n is not None and type(n) not in (str, int, float, bool) for n in labels)


def _row_sample(obj: Any, n_rows: int) -> Any:
    """ROW_SAMPLE rows as 10 evenly spread contiguous runs: deterministic, and cache-friendly to copy
    (every k-th row of a multi-GB frame touches every page)."""
    np = _np()
    if np is None:
        return obj.iloc[:ROW_SAMPLE]
    run = ROW_SAMPLE // 10
    starts = np.linspace(0, n_rows - run, 10).astype(np.int64)
    return obj.take(np.concatenate([np.arange(a, a + run) for a in starts]))


def _has_column(cols: Any, c: Any) -> bool:
    try:
        return bool(c in cols)
    except Exception:
        return False


def _label(c: Any, ctx: _Ctx) -> Any:
    if type(c) in (str, int, float, bool):
        return c[: ctx.max_chars] if isinstance(c, str) else c
    if _is(c, "datetime", "date"):
        return _stamp(c)
    return _safe_repr(c, ctx)


def _series_facts(s: Any, e: dict[str, Any], ctx: _Ctx, counts: bool) -> None:
    """dtype, NaN, min/max, unique, kind, examples and value counts of one (possibly sampled) Series."""
    dtype = s.dtype
    _add(e, "R", "dtype", str(dtype))
    n = len(s)
    if n == 0:
        _add(e, "V", "kind", "empty")
        return
    np = _np()
    if np is not None and isinstance(dtype, np.dtype) and dtype.kind in "biuf" and not counts:
        _numeric_column(s.to_numpy(), e)  # plain numpy: pandas' per-call overhead dominates small frames
        return
    nan = int(s.isna().sum())
    _add(e, "V", "nan", nan)
    kind = getattr(dtype, "kind", "O")
    text = str(dtype) in ("str", "string", "category")
    if kind == "O" and not text:
        _add(e, "R", "element_types", element_types(s.to_numpy(dtype=object).tolist()))
    if nan == n:
        _add(e, "V", "kind", "all-nan")
        return
    if kind == "O" and not text and not all(type(v) in SAFE_SCALARS for v in s.iloc[:50].tolist()):
        return
    numeric = kind in "iuf"
    discrete = kind not in "fcmM"
    uniq = int(s.nunique(dropna=True)) if n <= UNIQUE_LIMIT * 2 else int(s.iloc[:UNIQUE_LIMIT].nunique())
    if numeric or kind in "mM":
        _add(e, "V", "min", _num(s.min()) if numeric else _stamp(s.min()))
        _add(e, "V", "max", _num(s.max()) if numeric else _stamp(s.max()))
    _add(e, "V", "unique", uniq)
    kind_text = _kind(uniq, discrete or uniq <= 10) if not (not numeric and uniq > 30) else "text"
    if str(dtype) == "category" and kind_text in ("few-valued", "many-valued", "text"):
        kind_text = "categorical"  # the dtype says so; the number of distinct values does not
    _add(e, "V", "kind", kind_text)
    vc = None
    if not numeric and kind not in "mMb":
        vc = s.value_counts(dropna=True)
        _add(e, "V", "examples", [_label(v, ctx) for v in vc.index[:3].tolist()])
        _non_numeric(vc, e, ctx)
    if counts and uniq <= 30 and (discrete or uniq <= 10):
        vc = vc if vc is not None else s.value_counts(dropna=True)
        _add(e, "V", "counts", _counts([_label(v, ctx) for v in vc.index.tolist()], vc.tolist(), ctx))


def _non_numeric(vc: Any, e: dict[str, Any], ctx: _Ctx) -> None:
    """How many values of a text/object column are not numbers (strings float() cannot read, as in
    `astype(float)`): a column of mostly numbers with a few '10,000+' shows the few, which the most
    frequent examples would hide. Counted on the values of the (sampled) column, 2,000 distinct at most."""
    values, counts = vc.index[:2000].tolist(), vc.iloc[:2000].tolist()
    bad: list[Any] = []
    n = 0
    for v, c in zip(values, counts):
        if type(v) is not str:
            continue
        try:
            float(v)
        except ValueError:
            n += int(c)
            if len(bad) < 3:
                bad.append(_label(v, ctx))
    _add(e, "V", "non_numeric", n)
    if bad:
        _add(e, "V", "non_numeric_examples", bad)


def _numeric_column(arr: Any, e: dict[str, Any]) -> None:
    np = _np()
    kind = arr.dtype.kind
    nan = int(np.isnan(arr).sum()) if kind == "f" else 0
    _add(e, "V", "nan", nan)
    if nan == arr.size:
        _add(e, "V", "kind", "all-nan")
        return
    if kind != "b":
        with np.errstate(all="ignore"):
            lo, hi = (np.nanmin(arr), np.nanmax(arr)) if kind == "f" else (arr.min(), arr.max())
        _add(e, "V", "min", _num(lo))
        _add(e, "V", "max", _num(hi))
    part = arr[:5000]
    part = part[~np.isnan(part)] if kind == "f" else part
    uniq = int(np.unique(part).size)
    _add(e, "V", "unique", uniq)
    _add(e, "V", "kind", _kind(uniq, kind in "biu" or uniq <= 10))


def _stamp(v: Any) -> str:
    text = str(v)
    return text[:-9] if text.endswith(" 00:00:00") else text


@_summarizer(lambda o: _is(o, "pandas", "Series"))
def _sum_series(s: Any, e: dict[str, Any], ctx: _Ctx, hints: dict[str, Any]) -> None:
    n = len(s)
    _add(e, "S", "shape", [n])
    as_text = _index_facts(s.index, e, ctx)
    if s.name is not None:
        _add(e, "R", "name", _label(s.name, ctx))
        as_text += ["name"] if _not_plain([s.name]) else []
    if as_text:
        _add(e, "R", "label_reprs", as_text)
    if ctx.over():
        _add(e, "R", "dtype", str(s.dtype))
        _add(e, "R", "note", "stats skipped (time budget)")
        return
    sample = s if n <= ROW_SAMPLE else _row_sample(s, n)
    if sample is not s:
        _add(e, "V", "sampled", len(sample))
    _series_facts(sample, e, ctx, counts=True)


@_summarizer(lambda o: _is(o, "pandas", "Index"))
def _sum_index(idx: Any, e: dict[str, Any], ctx: _Ctx, hints: dict[str, Any]) -> None:
    _add(e, "S", "len", len(idx))
    _add(e, "R", "dtype", str(idx.dtype))
    _add(e, "V", "items", [_label(v, ctx) for v in idx[:MAX_ITEMS].tolist()])
