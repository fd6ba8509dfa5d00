"""Long library calls in a quick trial: a call that runs its loop inside a library (an estimator's `fit`,
a grid search, a `DataFrame.apply` of a Python function over many rows, `scipy.optimize.minimize`) runs
on a sample of its rows when it would outlast the trial's budget, so the code after it runs too.

quick.py wraps every call of a known long API in the cell (`METHODS`, `FUNCTIONS`) as
`__crane_quick__.call(id, func, *args, **kwargs)`; at run time (`run`) the call is recognised by the
object it is bound to (only libraries the kernel has imported are looked at), and:

- **row-wise calls** (`Series.apply/map`, `DataFrame.apply(axis=1)`, `DataFrame.map/applymap`,
  `GroupBy.apply/transform/agg` grouped by column names, and `transform` of any grouping, with a Python
  function) run on the whole data
  with the function counted and timed; once the rows so far project past what is left of the budget, the
  call stops before its next row and runs again on the rows that ran (the first rows, in the order the
  library takes them). The result is tiled back to the real index (its rows repeated in order), so the
  code after it sees the real length, index and dtypes; its values past the sample are not real. A crash
  inside the function before the cut is the real one (the full run processes the same rows first);
- **estimators** (`fit`, `fit_transform`, `fit_predict`, `partial_fit` of an object with
  `get_params`/`set_params`, a grid search or a pipeline included) and scikit-learn's
  `cross_val_score`-like functions: a clone is fitted on `PROBE_ROWS` evenly spaced rows (every
  argument with as many rows as `X` sampled alike: `y`, `groups`, `sample_weight`), timed, and the time
  projected to all rows; a call projected past half of what is left runs on an evenly spaced sample
  sized to take a small share of it (the probe's own fit when that is big enough). A `fit` whose time
  grew clearly slower than its rows from the probe to the sample (fixed costs per tree or iteration) is
  fitted once more on a larger sample, and projected from the two largest. Evenly spaced rows
  keep the classes of sorted data. The estimator keeps the real columns (`n_features_in_`, feature
  names); it may see fewer classes. A probe that fails (too few rows for its folds, one class) says
  nothing: the call runs whole (its validation errors come fast);
- **`scipy.optimize.minimize`** without a callback of the user's gets one that stops it (scipy's
  `StopIteration` protocol) after its first iterations once it has run a quarter of the budget.

A sampled call counts as a cut loop (`Loop.cut`, its rows as iterations): a crash on a line that reads
what it produced is at most *may crash*, and a run that finishes is *shortened*. Stdlib only; nothing is
imported (libraries are taken from `sys.modules`); a call that is not recognised runs unchanged.
"""

from __future__ import annotations

import contextlib
import sys
import time
from typing import Any, Callable

METHODS = frozenset(
    {"fit", "fit_transform", "fit_predict", "partial_fit", "apply", "map", "applymap", "transform", "agg",
     "aggregate"}
)  # fmt: skip
FUNCTIONS = frozenset(
    {"cross_val_score", "cross_validate", "cross_val_predict", "permutation_importance", "learning_curve",
     "validation_curve", "minimize"}
)  # fmt: skip
FITS = frozenset({"fit", "fit_transform", "fit_predict", "partial_fit"})
PROBE_ROWS = 400  # an estimator is first fitted (a clone) on this many rows, timed
MIN_ROWS = 2000  # an estimator call on fewer rows runs whole (its time is not in its rows)
SAMPLE_S = 0.3  # a row-wise call runs at least this long before it may be cut
SHARE = 0.25  # a sampled estimator call is sized to take this share of the time left
# A fit whose time grew by less than this power of its rows from the probe to the sample is fitted once
# more on a larger sample (`_larger`): at small sizes its fixed costs hid how its time grows.
SUBLINEAR = 0.75


class _Cut(BaseException):
    """Raised by a counted function to stop the library call around it (not an Exception: no `except
    Exception` of the library swallows it)."""


def run(rt: Any, loop: Any, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """`fn(*args, **kwargs)`, on a sample of its rows when it is a known long library call that would
    outlast the budget. `rt`: quick.Runtime (k, `left()`), `loop`: the call's quick.Loop."""
    try:
        how = _recognise(fn, args, kwargs)
    except Exception:
        how = None
    if how is None:
        return fn(*args, **kwargs)
    return how(rt, loop)


def _recognise(fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Callable[[Any, Any], Any] | None:
    name = getattr(fn, "__name__", "")
    owner = getattr(fn, "__self__", None)
    if owner is not None and not isinstance(owner, type):
        module = type(owner).__module__ or ""
        if module.startswith("pandas"):
            how: Callable[[Any, Any], Any] | None = _pandas(fn, owner, name, args, kwargs)
            return how
        if (
            name in FITS
            and callable(getattr(owner, "get_params", None))
            and callable(getattr(owner, "set_params", None))
        ):
            return lambda rt, loop: _estimator(rt, loop, fn, owner, name, args, kwargs)
        return None
    module = getattr(fn, "__module__", "") or ""
    if name in FUNCTIONS and module.startswith("sklearn") and len(args) >= 2:
        return lambda rt, loop: _function(rt, loop, fn, args, kwargs)
    # a callback of the user's, or a method scipy does not stop by StopIteration: whole
    method = str(kwargs.get("method") or "").lower()
    stoppable = kwargs.get("callback") is None and len(args) < 6 and method not in ("tnc", "cobyla", "cobyqa")
    if name == "minimize" and module.startswith("scipy.optimize") and stoppable:
        return lambda rt, loop: _minimize(rt, loop, fn, args, kwargs)
    return None


# -- row-wise pandas calls ----------------------------------------------------------------------------


def _python_function(func: Any) -> bool:
    import functools
    import types

    return isinstance(func, (types.FunctionType, types.MethodType, functools.partial))


def _pandas(fn: Any, owner: Any, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    pd = sys.modules.get("pandas")
    if pd is None:
        return None
    key = next((k for k in ("func", "arg") if k in kwargs), None)
    func = args[0] if args else kwargs.get(key) if key else None
    if not _python_function(func):
        return None
    per = 1
    if isinstance(owner, pd.Series) and name in ("apply", "map"):
        data = owner
    elif isinstance(owner, pd.DataFrame) and name == "apply":
        axis = args[1] if len(args) > 1 else kwargs.get("axis", 0)
        if axis not in (1, "columns") or kwargs.get("raw"):
            return None  # column by column: the columns are the loop, each one vectorised
        data = owner
    elif isinstance(owner, pd.DataFrame) and name in ("map", "applymap"):
        data, per = owner, max(1, owner.shape[1])
    elif name in ("apply", "transform", "agg", "aggregate") and hasattr(owner, "ngroups"):
        return _grouped(fn, owner, name, args, kwargs, key, func)
    else:
        return None

    def again(m: int, call_args: tuple[Any, ...], call_kwargs: dict[str, Any]) -> Any:
        return _tiled(getattr(data.iloc[:m], name)(*call_args, **call_kwargs), data.index, m)

    return lambda rt, loop: _rows(rt, loop, fn, args, kwargs, key, func, len(data), per, again)


def _grouped(fn: Any, owner: Any, name: str, args: Any, kwargs: Any, key: Any, func: Any) -> Any:
    """A groupby by column names of a frame: cut, it runs again on the first rows of the frame (the
    groups they hold)."""
    keys = getattr(owner, "keys", None)
    frame = getattr(owner, "obj", None)
    names = [keys] if isinstance(keys, str) else keys
    pd = sys.modules["pandas"]
    if not (
        isinstance(frame, pd.DataFrame)
        and isinstance(names, list)
        and all(isinstance(k, str) and k in frame.columns for k in names)
    ):
        # a column of a grouped frame, keys that are not column names: only a transform can run again
        return _by_numbers(fn, owner, args, kwargs, key, func) if name == "transform" else None
    if getattr(owner, "level", None) is not None:
        return None
    options = {
        o: getattr(owner, o) for o in ("as_index", "sort", "dropna", "group_keys") if hasattr(owner, o)
    }
    selection = getattr(owner, "_selection", None)
    ngroups = int(owner.ngroups)

    def again(m: int, call_args: tuple[Any, ...], call_kwargs: dict[str, Any]) -> Any:
        codes = owner.ngroup()
        head = frame[(codes < m).to_numpy()]
        grouped = head.groupby(keys, **options)
        if selection is not None:
            grouped = grouped[selection]
        result = getattr(grouped, name)(*call_args, **call_kwargs)
        if name == "transform":
            return _tiled(result, frame.index, len(head), positional=False)
        return result

    return lambda rt, loop: _rows(rt, loop, fn, args, kwargs, key, func, ngroups, 1, again)


def _by_numbers(fn: Any, owner: Any, args: Any, kwargs: Any, key: Any, func: Any) -> Any:
    """A transform of any grouping (a column of a grouped frame, keys given as arrays): its result is
    aligned with the rows, so cut, it runs again on the rows of the groups that ran, grouped by their
    numbers (`ngroup`, the order the library calls them in; a NaN key's rows are in none). Those rows
    get their values; the others the tiling's."""
    pd = sys.modules["pandas"]
    data = getattr(owner, "obj", None)
    if not isinstance(data, (pd.Series, pd.DataFrame)):
        return None
    ngroups = int(owner.ngroups)

    def again(m: int, call_args: tuple[Any, ...], call_kwargs: dict[str, Any]) -> Any:
        numbers = owner.ngroup().to_numpy()
        keep = (numbers >= 0) & (numbers < m)
        head = data[keep]
        result = head.groupby(numbers[keep], sort=False).transform(*call_args, **call_kwargs)
        out = _tiled(result, data.index, len(head), positional=False)
        if out is not result:  # the rows that ran hold their own values, not the tiling's
            with contextlib.suppress(Exception):
                out.iloc[keep.nonzero()[0]] = result.to_numpy()
        return out

    return lambda rt, loop: _rows(rt, loop, fn, args, kwargs, key, func, ngroups, 1, again)


def _rows(
    rt: Any, loop: Any, fn: Any, args: Any, kwargs: Any, key: Any, func: Any, total_rows: int, per: int,
    again: Callable[[int, Any, Any], Any],
) -> Any:  # fmt: skip
    """The call with its function counted; cut once what is left projects past the budget, then run
    again on the rows that ran."""
    loop.runs += 1
    loop.kind = "rows"
    total = total_rows * per
    started = time.monotonic()
    token = _Cut()
    held: list[tuple[int, int]] = []  # what the call holds at its first call (past its set-up), at the cut
    counted, state = counting(rt, func, total, per, started, token, lambda: held.append(rt._footprint()[0]))
    if args:
        new_args, new_kwargs = (counted, *args[1:]), kwargs
    else:
        new_args, new_kwargs = args, {**kwargs, key: counted}
    try:
        result = fn(*new_args, **new_kwargs)
        loop.iterations += min(total_rows, state()[0] // per)
        loop.seconds += time.monotonic() - started
        return result
    except _Cut as cut:
        if cut is not token:
            raise
    calls, first_call = state()
    m = max(1, min(total_rows, calls // per))
    loop.cut, loop.iterations, loop.sampled = True, loop.iterations + m, loop.sampled + 1
    now = time.monotonic()
    loop.seconds += now - started
    loop.length(total_rows)
    if len(held) == 2:  # what the rows so far keep (their results, before the library joins them)
        (rss, heap), (rss_cut, heap_cut) = held  # the larger growth of the two, as loops.grew
        loop.grew_kb = loop.steady_kb = loop.grew_kb + max(0, rss_cut - rss, heap_cut - heap)
    if first_call and calls > 1:  # the set-up once, then every row at the rate of the rows after it
        rate = (now - first_call) / (calls - 1)
        loop.whole_s = (first_call - started) + rate * total
    rt.note_globals(loop, func)
    return again(m, args, kwargs)


def counting(
    rt: Any, func: Any, total: int, per: int, started: float | None, token: BaseException,
    mark: Callable[[], Any] | None = None,
) -> tuple[Callable[..., Any], Callable[[], tuple[int, float]]]:  # fmt: skip
    """`func` counted: raises `token` once what is left of `total` calls projects past the budget; and a
    reader of (calls so far, when the library first called it: what came before is its set-up). Past 64
    calls the clock is read every 16th: a cheap function's rate is its own. `mark` is called at the
    first call and before the cut, while the library still holds what the calls returned."""
    started = time.monotonic() if started is None else started
    least = min(SAMPLE_S, 0.1 * rt.left(started))
    calls = 0
    first_call = 0.0

    def counted(*a: Any, **kw: Any) -> Any:
        nonlocal calls, first_call
        if calls >= rt.k * per and (calls < 64 or not calls & 15):
            now = time.monotonic()
            elapsed = now - started
            if elapsed >= least and elapsed / calls * (total - calls) > rt.left(now):
                if mark is not None:
                    mark()
                raise token
        elif not calls:
            if mark is not None:
                mark()
            first_call = time.monotonic()
        calls += 1
        return func(*a, **kw)

    return counted, lambda: (calls, first_call)


def _tiled(result: Any, index: Any, m: int, positional: bool = True) -> Any:
    """A result on the first `m` rows, its rows repeated in order to the real `index` (length, index and
    dtypes as the full call's); anything else as it is."""
    pd = sys.modules.get("pandas")
    if pd is None or not isinstance(result, (pd.Series, pd.DataFrame)):
        return result
    n = len(index)
    if len(result) != m or m <= 0 or n <= m:
        return result
    if positional and not result.index.equals(index[:m]):
        return result
    try:
        out = result.iloc[[i % m for i in range(n)]]
        out.index = index
    except Exception:
        return result
    return out


# -- estimators ---------------------------------------------------------------------------------------


def _rows_of(value: Any) -> int | None:
    if isinstance(value, (str, bytes, dict, set, frozenset)) or value is None:
        return None
    shape = getattr(value, "shape", None)
    if isinstance(shape, tuple) and shape and isinstance(shape[0], int):
        return shape[0]
    if isinstance(value, (list, tuple)):
        return len(value)
    return None


def _take(value: Any, step: int, n: int) -> Any:
    if hasattr(value, "iloc"):
        return value.iloc[0 : step * n : step]
    return value[0 : step * n : step]


def _sampled(args: tuple[Any, ...], kwargs: dict[str, Any], rows: int, n: int) -> tuple[Any, Any]:
    """Every argument with `rows` rows, as its `n` evenly spaced rows (the same rows in each); `n_jobs`
    in this process (the sandbox starts no worker processes; the results do not depend on it)."""
    step = max(1, rows // n)

    def one(value: Any) -> Any:
        return _take(value, step, n) if _rows_of(value) == rows else value

    sampled = {k: one(v) for k, v in kwargs.items()}
    if sampled.get("n_jobs") not in (None, 1):
        sampled["n_jobs"] = None
    return tuple(one(v) for v in args), sampled


def _in_process(estimator: Any) -> dict[str, Any]:
    """Sets every `n_jobs` of `estimator` (its own, its inner estimators') to None; what they were."""
    try:
        jobs = {k: v for k, v in estimator.get_params(deep=True).items() if k.endswith("n_jobs")}
        jobs = {k: v for k, v in jobs.items() if v not in (None, 1)}
        if jobs:
            estimator.set_params(**dict.fromkeys(jobs))
    except Exception:
        return {}
    return jobs


def _quietly(call: Callable[[], Any]) -> tuple[Any, float]:
    import warnings

    started = time.monotonic()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = call()
    return result, time.monotonic() - started


def _plan(rt: Any, rows: int, took: float, probe_rows: int) -> int | None:
    """How many rows the call runs on: None (all) when all rows project within half of what is left."""
    left = rt.left(time.monotonic())
    if took * rows / probe_rows <= 0.5 * left:
        return None
    return max(probe_rows, min(rows // 2, int(probe_rows * SHARE * left / max(took, 1e-6))))


def _estimator(rt: Any, loop: Any, fn: Any, owner: Any, name: str, args: Any, kwargs: Any) -> Any:
    X = args[0] if args else kwargs.get("X")
    rows = _rows_of(X)
    clone = getattr(sys.modules.get("sklearn.base"), "clone", None)
    if rows is None or rows < MIN_ROWS or clone is None:
        return fn(*args, **kwargs)
    loop.runs += 1
    loop.kind = "fit"
    n0 = min(PROBE_ROWS, rows // 4)
    try:
        probe = clone(owner)
        _in_process(probe)
        p_args, p_kwargs = _sampled(args, kwargs, rows, n0)
        result, took = _quietly(lambda: getattr(probe, name)(*p_args, **p_kwargs))
    except Exception:
        return fn(*args, **kwargs)  # the probe says nothing: the call runs whole
    n = _plan(rt, rows, took, n0)
    if n is None:
        return fn(*args, **kwargs)
    loop.cut, loop.iterations, loop.sampled = True, loop.iterations + n, loop.sampled + 1
    loop.length(rows)
    _project(loop, rows, (n0, took))
    if n <= 2 * n0 and name != "partial_fit":
        try:
            jobs = {k: v for k, v in owner.get_params(deep=True).items() if k.endswith("n_jobs")}
            vars(owner).update(vars(probe))  # the probe's fit is the sample's
            owner.set_params(**jobs)
            return owner if result is probe else result
        except Exception:
            pass
        n = n0
    s_args, s_kwargs = _sampled(args, kwargs, rows, n)
    jobs = _in_process(owner)
    started = time.monotonic()
    timed = [(n0, took)]
    try:
        result = fn(*s_args, **s_kwargs)
        timed.append((n, time.monotonic() - started))
        larger = _larger(rt, owner, name, rows, timed)
        if larger is not None:  # its time grows slower than its rows: a larger sample tells how
            s_args, s_kwargs = _sampled(args, kwargs, rows, larger)
            started = time.monotonic()
            result = fn(*s_args, **s_kwargs)
            timed.append((larger, time.monotonic() - started))
            loop.iterations += larger - n
        return result
    finally:
        if len(timed) == 1:  # the sample's fit raised: what ran of it
            timed.append((n, time.monotonic() - started))
        _project(loop, rows, *timed)
        if jobs:
            with contextlib.suppress(Exception):
                owner.set_params(**jobs)


def _larger(rt: Any, owner: Any, name: str, rows: int, timed: list[tuple[int, float]]) -> int | None:
    """A larger sample for a fit whose time grew clearly slower than its rows between the probe and the
    sample (a fixed cost per tree or per iteration, a gradient boosting's histograms): sized, at that
    growth, to take SHARE of what is left, at least 4 times the sample and at most half the rows; None
    where it grew about as fast as its rows, or more, or nothing larger fits what is left. A fit that goes
    on from its last state (`partial_fit`, `warm_start`) is not fitted twice."""
    import math

    (n0, t0), (n1, t1) = timed[-2], timed[-1]
    if name != "fit" or t0 <= 0 or t1 <= 0 or n1 <= n0:
        return None
    with contextlib.suppress(Exception):
        if owner.get_params().get("warm_start"):
            return None
    growth = math.log(t1 / t0) / math.log(n1 / n0)
    if growth >= SUBLINEAR:
        return None
    target = SHARE * rt.left(time.monotonic())
    larger = min(rows // 2, int(n1 * (target / t1) ** (1 / max(growth, 0.2))))
    return larger if larger >= 4 * n1 else None


def _project(loop: Any, rows: int, *timed: tuple[int, float]) -> None:
    """A sampled fit's time on all `rows`, from its timed sizes (rows, seconds): with two, the exponent
    of time against rows between them (a fit is rarely linear in its rows), kept within 1 and 2 (at
    small sizes a fixed cost hides how the time grows); with three (`_larger` took a larger sample of a
    fit that grew slower than its rows), the exponent between the two largest, kept within 0.2 and 2, its
    range's high end at most half a power steeper and at most linear; with one, linear (its range then
    runs to the exponent 1.5)."""
    import math

    sizes = [(n, t) for n, t in timed if n > 0 and t > 0]
    if not sizes:
        return
    n1, t1 = sizes[-1]
    exponents = (1.0, 1.5)
    if len(sizes) > 2 and sizes[-2][0] < n1:
        n0, t0 = sizes[-2]
        fitted = min(max(math.log(t1 / t0) / math.log(n1 / n0), 0.2), 2.0)
        exponents = (fitted, max(fitted, min(fitted + 0.5, 1.0)))
    elif len(sizes) > 1 and sizes[0][0] != n1:
        n0, t0 = sizes[0]
        fitted = math.log(t1 / t0) / math.log(n1 / n0)
        exponents = (min(max(fitted, 1.0), 2.0),) * 2
    loop.seconds = sum(t for _, t in sizes)
    loop.whole_s = t1 * (rows / n1) ** exponents[0]
    loop.whole_high_s = t1 * (rows / n1) ** exponents[1]


def _function(rt: Any, loop: Any, fn: Any, args: Any, kwargs: Any) -> Any:
    """scikit-learn's model-selection and inspection functions: (estimator, X, y, ...)."""
    rows = _rows_of(args[1])
    if rows is None or rows < MIN_ROWS:
        return fn(*args, **kwargs)
    loop.runs += 1
    loop.kind = "fit"
    n0 = min(PROBE_ROWS, rows // 4)
    estimator = args[0]
    jobs = _in_process(estimator) if callable(getattr(estimator, "get_params", None)) else {}
    try:  # the estimator's own n_jobs too (a forest's predict): its threads may wait on a lock forever
        try:
            p_args, p_kwargs = _sampled(args, kwargs, rows, n0)
            result, took = _quietly(lambda: fn(*p_args, **p_kwargs))
        except Exception:
            result, took = None, -1.0
        n = _plan(rt, rows, took, n0) if took >= 0 else None
        if n is not None:
            loop.cut, loop.iterations, loop.sampled = True, loop.iterations + n, loop.sampled + 1
            loop.length(rows)
            _project(loop, rows, (n0, took))
            if n <= 2 * n0:
                return result
            s_args, s_kwargs = _sampled(args, kwargs, rows, n)
            started = time.monotonic()
            try:
                return fn(*s_args, **s_kwargs)
            finally:
                _project(loop, rows, (n0, took), (n, time.monotonic() - started))
    finally:
        if jobs:
            with contextlib.suppress(Exception):
                estimator.set_params(**jobs)
    return fn(*args, **kwargs)  # all rows fit in the budget, or the probe says nothing: whole


def _minimize(rt: Any, loop: Any, fn: Any, args: Any, kwargs: Any) -> Any:
    loop.runs += 1
    loop.kind = "minimize"
    started = time.monotonic()
    budget = max(rt.long_s, 0.25 * rt.budget_s)

    def callback(intermediate_result: Any) -> None:
        loop.iterations += 1
        if loop.iterations >= rt.k and time.monotonic() - started > budget:
            loop.cut = True
            raise StopIteration

    return fn(*args, **{**kwargs, "callback": callback})
