"""Replica fidelity as a contract: a replica reproduces every fact the probe reports about its original,
or its spec says which it does not.

The property test probes many generated objects for real, builds each one's spec and its replicas (both
variants, with build.py as the runner does), probes the replicas the same way and compares every fact of
the object and of its children. A fact that differs must be listed in the spec: `unfaithful` (the replica
is not the original there: a claim whose line touches the object is withdrawn) or `open` (a value fact the
facts do not fix, which the variants fill differently: a claim needs every variant to agree). An `unknown`
spec rebuilds nothing and owes nothing.
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
import pytest

from crane_jupyterlab.checks import replica
from crane_jupyterlab.checks.replica.build import build
from crane_jupyterlab.checks.replica.spec import specs
from crane_jupyterlab.checks.view import from_probe
from crane_jupyterlab.kernel import probe
from crane_jupyterlab.server.trial import platform_sandbox

OPTIONS = {"budget_ms": 60_000}  # every fact, whatever the machine's load: the facts must be the same
SEED = 35


def _probe(value: Any) -> dict[str, Any]:
    return probe.run("x", OPTIONS, namespace={"x": value})


def _facts(entry: dict[str, Any], prefix: str = "") -> dict[str, tuple[str, Any]]:
    """Every fact of an entry and its children as (category, value), keyed `key` or `['col'].key` (the
    child's expr past `x`); the entry's type as an R fact."""
    out: dict[str, tuple[str, Any]] = {f"{prefix}type": ("R", entry.get("type"))}
    for fact in entry.get("facts") or []:
        out.setdefault(prefix + fact["key"], (fact["cat"], fact["value"]))
    for child in entry.get("children") or []:
        out.update(_facts(child, str(child["expr"])[1:] + "."))
    return out


Mismatch = tuple[int, str, str, Any, Any]  # variant, fact, its category, original value, replica value
ABSENT = ("-", "<absent>")


def mismatches(value: Any) -> tuple[dict[str, Any], list[Mismatch], int]:
    """The spec of `value`, the facts its replicas get wrong and how many facts were compared."""
    result = _probe(value)
    spec = specs(from_probe(result))["x"]
    if spec["kind"] == "unknown":
        return spec, [], 0
    original = _facts(result["objects"][0])
    out: list[Mismatch] = []
    compared = 0
    for variant in (0, 1):
        replica = build(spec, np.random.default_rng(1000 + variant), variant)
        rebuilt = _facts(_probe(replica)["objects"][0])
        compared += len(original.keys() | rebuilt.keys())
        for key in sorted(original.keys() | rebuilt.keys()):
            (cat, a), (cat_b, b) = original.get(key, ABSENT), rebuilt.get(key, ABSENT)
            if a != b:
                out.append((variant, key, cat if cat != "-" else cat_b, a, b))
    return spec, out, compared


def uncovered(spec: dict[str, Any], found: list[Mismatch]) -> list[Mismatch]:
    """The mismatches the spec does not own up to. `open` covers value facts only: a structural or
    representation fact the replica gets wrong must be `unfaithful`."""
    unfaithful, open_ = set(spec.get("unfaithful") or {}), set(spec.get("open") or [])
    return [m for m in found if m[1] not in unfaithful and not (m[1] in open_ and m[2] == "V")]


# ---- the objects -----------------------------------------------------------------------------------


def _values(dtype: str, n: int, rng: np.random.Generator) -> Any:
    """`n` values of one column kind."""
    if dtype == "float":
        return rng.normal(size=n).round(3)
    if dtype == "float-nan":
        v = rng.normal(size=n)
        v[rng.choice(n, max(1, n // 5), replace=False)] = np.nan
        return v
    if dtype == "whole-float":
        return rng.integers(0, 4, n).astype(float)
    if dtype == "int":
        return rng.integers(-50, 50, n)
    if dtype == "bool":
        return rng.random(n) < 0.4
    if dtype == "Int64":
        v = pd.array(rng.integers(0, 9, n), dtype="Int64")
        v[0] = pd.NA
        return v
    if dtype == "category":
        return pd.Categorical(rng.choice(["lo", "mid", "hi"], n), categories=["lo", "mid", "hi", "none"])
    if dtype == "string":
        return pd.array(rng.choice(["p", "q", "r"], n).tolist(), dtype="string")
    if dtype == "str":
        return rng.choice(["red", "green", "blue", "cyan"], n).tolist()
    if dtype == "datetime":
        return pd.to_datetime("2024-01-01") + pd.to_timedelta(rng.integers(0, 400, n), unit="D")
    if dtype == "object-numbers":
        return np.array([int(v) if i % 2 else float(v) for i, v in enumerate(rng.integers(0, 9, n))], object)
    if dtype == "object-strings":
        return np.array(rng.choice(["a", "b", "c"], n).tolist(), dtype=object)
    if dtype == "object-mixed":
        return np.array([("t" if i % 3 else i) for i in range(n)], dtype=object)
    raise ValueError(dtype)


COLUMN_KINDS = ["float", "float-nan", "whole-float", "int", "bool", "Int64", "category", "string", "str",
                "datetime", "object-numbers", "object-strings", "object-mixed"]  # fmt: skip
INDEX_KINDS = ["range", "range-offset", "dates-freq", "dates", "multi", "multi-named", "text", "ints"]
ARRAY_DTYPES = ["float64", "float32", "int64", "int32", "uint8", "bool", "complex128", "<U4", "datetime64[D]"]


def _index(kind: str, n: int, rng: np.random.Generator) -> Any:
    if kind == "range":
        return pd.RangeIndex(n)
    if kind == "range-offset":
        return pd.RangeIndex(100, 100 + 2 * n, 2)
    if kind == "dates-freq":
        return pd.date_range("2023-03-01", periods=n, freq="D")
    if kind == "dates":
        hours = pd.to_timedelta(np.sort(rng.integers(0, 999, n)), "h")
        return pd.DatetimeIndex(pd.to_datetime("2023-01-01") + hours)  # no freq
    if kind in ("multi", "multi-named"):
        names = ["city", "year"] if kind == "multi-named" else None
        return pd.MultiIndex.from_arrays([[f"c{i % 3}" for i in range(n)], list(range(n))], names=names)
    if kind == "text":
        return pd.Index([f"row{i}" for i in range(n)])
    if kind == "ints":
        return pd.Index(rng.permutation(n) * 3)
    raise ValueError(kind)


def objects() -> Iterator[tuple[str, Any]]:
    """(label, object): every kind of value the judge rebuilds, in the variety notebooks hold."""
    rng = np.random.default_rng(SEED)
    pick = random.Random(SEED)
    for i, column in enumerate(COLUMN_KINDS):
        for j, index in enumerate(INDEX_KINDS):
            n = pick.randint(3, 40)
            name = [None, "target", 7][(i + j) % 3]
            series = pd.Series(_values(column, n, rng), index=_index(index, n, rng), name=name)
            yield f"series {column} {index} name={name}", series
    yield "series long", pd.Series(rng.normal(size=60_000))  # the probe samples it
    yield "series empty", pd.Series([], dtype=float)
    named = pd.Series([1.0, 2.0, 3.0])
    named.index.name = "id"
    yield "series named RangeIndex", named
    yield "series odd name numpy", pd.Series([1.0, 2.0], name=np.int64(7))  # shown as '7'
    yield "series odd name tuple", pd.Series([1.0, 2.0], name=("a", 1))
    yield "series odd name long", pd.Series([1.0, 2.0], name="x" * 100)  # shown cut short
    for index in INDEX_KINDS:
        for k in range(3):
            n = pick.randint(4, 30)
            cols = pick.sample(COLUMN_KINDS, 3 + k)
            frame = pd.DataFrame({f"{c}_{m}": _values(c, n, rng) for m, c in enumerate(cols)})
            frame.index = _index(index, n, rng)
            yield f"frame {index} {cols}", frame
    plain = {"a": rng.normal(size=30), "b": rng.integers(0, 3, 30), "c": ["x", "y", "z"] * 10}
    yield "frame plain numbers", pd.DataFrame(plain)
    levels = pd.MultiIndex.from_product([["a", "b"], ["x", "y"]])
    yield "frame MultiIndex columns", pd.DataFrame(rng.normal(size=(5, 4)), columns=levels)
    yield "frame RangeIndex columns", pd.DataFrame(rng.normal(size=(6, 3)))
    titled = pd.DataFrame({"a": [1, 2], "b": [3, 4]})
    titled.columns.name = "field"
    yield "frame named columns", titled
    yield "frame named index", pd.DataFrame({"a": [1.0, 2.0]}, index=pd.Index([0, 1], name="id"))
    odd = pd.DataFrame({"a": [1.0, 2.0]})
    odd.index.name, odd.columns.name = np.int64(3), ("x", "y")
    yield "frame odd level names", odd
    yield "frame wide", pd.DataFrame(rng.normal(size=(5, 25)), columns=[f"f{i}" for i in range(25)])
    yield "frame long", pd.DataFrame({"a": rng.normal(size=60_000), "b": rng.integers(0, 5, 60_000)})
    for dtype in ARRAY_DTYPES:
        for shape in ((7,), (4, 3), (2, 3, 2)):
            base = rng.normal(size=shape) * 10
            whole = dtype in ("<U4", "datetime64[D]")  # (numpy makes these from integers only)
            yield f"ndarray {dtype} {shape}", (base.astype(int) if whole else base).astype(dtype)
    yield "ndarray float nan", np.where(rng.random(20) < 0.2, np.nan, rng.normal(size=20))
    yield "ndarray Fortran", np.asfortranarray(rng.normal(size=(5, 4)))
    yield "ndarray sliced", rng.normal(size=(6, 8))[:, ::2]
    yield "ndarray transposed", rng.normal(size=(3, 5)).T
    yield "ndarray long", rng.normal(size=300_000)
    for kind in ("object-numbers", "object-strings", "object-mixed"):
        yield f"ndarray {kind} 1-D", _values(kind, 12, rng)
        yield f"ndarray {kind} 2-D", _values(kind, 12, rng).reshape(4, 3)
    yield from _tensors(rng)
    yield from _estimators(rng)
    for literal in (3, -2.5, True, None, "text", [1, 2, 3], ("a", "b"), [1, "a", 2.0], [], [[1, 2], [3]]):
        yield f"literal {literal!r}", literal


def _tensors(rng: np.random.Generator) -> Iterator[tuple[str, Any]]:
    try:
        import torch
    except ImportError:
        return
    torch.manual_seed(SEED)
    for dtype in (torch.float32, torch.float64, torch.int64, torch.uint8, torch.bool, torch.bfloat16):
        for shape in ((6,), (3, 4)):
            t = torch.from_numpy(rng.normal(size=shape) * 5).to(dtype)
            yield f"tensor {dtype} {shape}", t
    yield "tensor requires_grad", torch.randn(4, 2, requires_grad=True)
    yield "tensor transposed", torch.randn(3, 5).t()
    yield "tensor empty", torch.zeros(0, 3)


def _estimators(rng: np.random.Generator) -> Iterator[tuple[str, Any]]:
    try:
        from sklearn.cluster import KMeans
        from sklearn.linear_model import LinearRegression, LogisticRegression
        from sklearn.preprocessing import StandardScaler
        from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor
    except ImportError:
        return
    X = rng.normal(size=(40, 3))
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    yield "estimator unfitted", LogisticRegression(C=0.5)
    yield "estimator unfitted default", DecisionTreeRegressor()
    yield "estimator int classes", LogisticRegression().fit(X, rng.integers(0, 3, 40))
    yield "estimator float classes", LogisticRegression().fit(X, rng.integers(0, 2, 40).astype(float))
    yield "estimator text classes", DecisionTreeClassifier(max_depth=2).fit(X, rng.choice(["no", "yes"], 40))
    text = rng.choice(["n", "y"], 40).tolist()
    yield "estimator object classes", DecisionTreeClassifier().fit(X, np.array(text, object))
    yield "estimator series classes", LogisticRegression().fit(frame, pd.Series(text))
    yield "estimator feature names", LinearRegression().fit(frame, rng.normal(size=40))
    yield "estimator regressor", LinearRegression(fit_intercept=False).fit(X, rng.normal(size=40))
    yield "estimator multi-output", DecisionTreeRegressor().fit(X, rng.normal(size=(40, 2)))
    yield "estimator transformer", StandardScaler().fit(X)
    yield "estimator clusters", KMeans(n_clusters=2, n_init=1, random_state=0).fit(X)


# ---- the property ----------------------------------------------------------------------------------

# Objects whose every fact the probe reports is rebuilt: their specs must list nothing unfaithful (a spec
# that gave up on everything would pass the property and claim nothing).
FAITHFUL = re.compile(
    r"^(series (?!category)\S+ (range|range-offset|dates-freq) |series (long|empty|named)"
    r"|frame (range|range-offset|dates-freq) (?!.*category)|frame (plain|long|RangeIndex|named columns)"
    r"|ndarray (?!sliced)|tensor (?!transposed)|estimator (?!multi)|literal)"
)


def test_every_fact_a_replica_gets_wrong_is_listed_in_its_spec(capsys: pytest.CaptureFixture[str]) -> None:
    started = time.perf_counter()
    n_objects = n_rebuilt = n_facts = n_faithful = 0
    wrong: list[str] = []
    for label, value in objects():
        spec, found, compared = mismatches(value)
        n_objects += 1
        n_rebuilt += spec["kind"] != "unknown"
        n_facts += compared
        for variant, key, cat, a, b in uncovered(spec, found):
            wrong.append(f"{label}: variant {variant} {key} ({cat}): {a!r} != {b!r}")
        if FAITHFUL.match(label) and spec["kind"] != "unknown":
            n_faithful += 1
            if spec.get("unfaithful"):
                wrong.append(f"{label}: rebuilt exactly, yet its spec says {spec['unfaithful']}")
    with capsys.disabled():
        print(f"\nreplica fidelity: {n_objects} objects ({n_rebuilt} rebuilt, {n_faithful} of them wholly "
              f"faithful), {n_facts} facts compared, {time.perf_counter() - started:.1f} s")  # fmt: skip
    assert not wrong, "\n".join(wrong)
    assert n_rebuilt >= 0.9 * n_objects and n_faithful >= 100


@pytest.mark.parametrize(
    "value", [np.array(["ab", "cd", "ef"] * 4).reshape(3, 4), np.arange(12), np.ones(5, bool)]
)
def test_what_cannot_hold_a_missing_value_gets_none_in_any_variant(value: Any) -> None:
    # (the probe reports no NaN count for these: a replica that made some up would be another array)
    spec = specs(from_probe(_probe(value)))["x"]
    for variant in (0, 1):
        replica = build(spec, np.random.default_rng(1000 + variant), variant)
        assert replica.dtype == value.dtype and "None" not in replica.astype(str).ravel().tolist()


# ---- the false claims it found in real notebooks, through the real runner ---------------------------

needs_sandbox = pytest.mark.skipif(
    not platform_sandbox().available, reason="no OS sandbox on this machine: the replica judge runs nothing"
)
SETUP = ["import numpy as np\nimport pandas as pd\nfrom sklearn.linear_model import LinearRegression"]


def _ask(cell: str, ns: dict[str, Any]) -> tuple[dict[str, Any] | None, list[Any], dict[str, Any]]:
    """What every variant raised alike (None: they did not agree), the findings, and the request. Every
    variant must have run the cell to its end or to a crash: a judgement that aborted proves nothing."""
    assert replica.warm_up(120), "the replica process did not warm up"
    view = from_probe(probe.run(cell, {}, namespace=ns))
    request = replica.request_for(cell, view, SETUP)
    assert request is not None
    answer = replica.run(request)
    statuses = [v.get("status") for v in answer.get("variants") or []]
    assert len(statuses) == replica.VARIANTS and "aborted" not in statuses, answer
    return replica.agreed(answer), replica.finding(request, view, answer), request


def _real(cell: str, ns: dict[str, Any]) -> None:
    exec(cell, {**ns, "np": np, "pd": pd})  # the cell runs on the real objects


@needs_sandbox
@pytest.mark.parametrize(
    "cell",
    ["s.index.month", "s.index.day_name()", "days = s.index\nnames = days.day_name()",
     "for stamp in s.index[:2]:\n    stamp.month_name()"],
)  # fmt: skip
def test_a_date_index_is_not_claimed_from_a_replica_without_one(cell: str) -> None:
    days = pd.to_datetime("2024-01-01") + pd.to_timedelta(np.arange(30) * 3 % 7 + np.arange(30) * 7, "D")
    ns = {"s": pd.Series(np.arange(30.0), index=pd.DatetimeIndex(days), name="sales")}  # irregular: no freq
    _real(cell, ns)
    crash, findings, request = _ask(cell, ns)
    assert findings == []
    assert "index_type" in request["specs"]["s"]["unfaithful"]
    if crash is not None:  # the replicas raised alike (a RangeIndex has no dates): withdrawn, not claimed
        assert replica.taint.withdrawn(request["cell"], crash["line"], request["specs"], SETUP)
    # Regular dates (a freq) are date_range(start, periods, freq): rebuilt exactly, they run as they do.
    ns["s"] = pd.Series(np.arange(30.0), index=pd.date_range("2024-01-01", periods=30, freq="W"))
    crash, findings, request = _ask(cell, ns)
    assert crash is None and findings == [] and not request["specs"]["s"]["unfaithful"]


@needs_sandbox
@pytest.mark.parametrize("cell", ["m.loc['a', 1]", "m.unstack()", "wide = m.unstack()\nwide.loc['a']"])
def test_a_multiindex_is_not_claimed_from_a_replica_with_one_level(cell: str) -> None:
    ns = {"m": pd.Series([1.0, 2.0, 3.0, 4.0], index=pd.MultiIndex.from_product([["a", "b"], [1, 2]]))}
    _real(cell, ns)
    crash, findings, request = _ask(cell, ns)
    assert findings == []
    assert "index_type" in request["specs"]["m"]["unfaithful"]
    if crash is not None:
        assert replica.taint.withdrawn(request["cell"], crash["line"], request["specs"], SETUP)


@needs_sandbox
def test_an_object_array_of_numbers_is_rebuilt_with_numbers_and_one_of_text_with_text() -> None:
    from sklearn.linear_model import LinearRegression

    rng = np.random.default_rng(SEED)
    numbers = np.array([[int(v), float(v) / 2] for v in rng.integers(0, 9, 40)], dtype=object)
    ns = {"X": numbers, "y": rng.normal(size=40), "LinearRegression": LinearRegression}
    cell = "model = LinearRegression().fit(X, y)"
    _real(cell, ns)
    crash, findings, request = _ask(cell, ns)
    assert crash is None and findings == []  # the replicas hold numbers: the fit runs on every variant
    assert request["specs"]["X"]["values"]["types"] == ["float", "int"]
    # The same array of text fails the fit for real, and on every replica: that claim stays.
    ns["X"] = np.array([["a", "b"]] * 40, dtype=object)
    with pytest.raises(ValueError, match="could not convert string to float"):
        _real(cell, ns)
    _, findings, _ = _ask(cell, ns)
    assert [f.message.split(":", 1)[0] for f in findings] == ["ValueError"]


@needs_sandbox
def test_a_missing_column_of_a_faithful_frame_is_still_claimed_beside_an_unfaithful_series() -> None:
    ns = {"df": pd.DataFrame({"a": np.arange(10.0), "b": list("xyxyxyxyxy")}),
          "s": pd.Series(np.arange(10.0), index=pd.date_range("2024-01-01", periods=10))}  # fmt: skip
    cell = "total = s.sum()\ndf['nope'].mean()"
    crash, findings, _ = _ask(cell, ns)
    assert [(f.line, f.message.split(":", 1)[0]) for f in findings] == [(2, "KeyError")], (crash, findings)


# ---- which lines an unfaithful replica reaches ------------------------------------------------------

UNFAITHFUL = {"s": {"kind": "series", "unfaithful": {"index_type": "a DatetimeIndex is not rebuilt"}},
              "X": {"kind": "ndarray", "unfaithful": {}}, "m": {"kind": "estimator"}}  # fmt: skip
DEFINITIONS = ["def uses_s(a):\n    return a + s.values", "def pure(a):\n    return a", "import numpy as np"]


@pytest.mark.parametrize(
    "cell, line, withdrawn",
    [
        ("s.index.day_name()", 1, True),
        ("X.sum(axis=2)", 1, False),
        ("y = s.values\nX.sum(axis=2)", 2, False),  # s is read, but not by the crashing line
        ("y = s.values\ny.sum(axis=2)", 2, True),  # made from s
        ("m.predict(\n    s)", 1, True),  # a statement over several lines
        ("m.fit(s, X)\nm.predict(X)", 2, True),  # m was changed by a call given s
        ("lst = []\nlst.append(s)\nlst[0].foo", 3, True),
        ("np.copyto(Z, s)\nZ.sum(axis=5)", 2, True),
        ("np.log(s)\nnp.sum(X, axis=5)", 2, True),  # a module's state may hold what s did to it
        ("np.log(X)\nnp.sum(s, axis=5)", 1, False),
        ("r = df.query('a > @s')\nr.x", 2, True),  # a name read from the query's text
        ("for v in s:\n    z = v\nX.sum(axis=2)", 3, True),  # how often the loop ran was s's
        ("if len(s) > 3:\n    X = X[:, :1]\nm.predict(X)", 3, True),  # which branch ran was s's
        ("while s.any():\n    break\nX.sum(axis=2)", 3, True),
        ("try:\n    s.foo\nexcept AttributeError:\n    pass\nX.sum(axis=2)", 5, True),
        ("with open(p) as fh:\n    y = s\nX.sum(axis=2)", 3, False),
        ("def f(a):\n    return a.index.day_name()\nf(s)", 2, True),  # in the cell's own function
        ("def f(a):\n    return a.sum(axis=2)\nf(X)", 2, False),
        ("uses_s(X)", 1, True),  # a notebook function that reads s
        ("pure(X)", 1, False),
    ],
)
def test_a_crash_is_withdrawn_where_an_unfaithful_replica_reaches_it(
    cell: str, line: int, withdrawn: bool
) -> None:
    assert bool(replica.taint.withdrawn(cell, line, UNFAITHFUL, DEFINITIONS)) is withdrawn
