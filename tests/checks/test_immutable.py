"""Item assignment to a pandas Index (checks/rules/immutable.py), through the real probe; every cell is run
too, and a claim must be the TypeError it raises."""

from __future__ import annotations

from typing import Any

import pytest

from crane_jupyterlab.checks import check
from crane_jupyterlab.kernel import probe


@pytest.fixture
def ns() -> dict[str, Any]:
    pd = pytest.importorskip("pandas")
    return {
        "ind": pd.Index([1, 2, 3]),
        "r": pd.RangeIndex(3),
        "m": pd.MultiIndex.from_tuples([(1, 2), (3, 4)]),
        "d": pd.date_range("2020-01-01", periods=2),
        "c": pd.CategoricalIndex(["a", "b"]),
        "s": pd.Series([1, 2]),
        "df": pd.DataFrame({"a": [1, 2]}),
    }


def _real(source: str, ns: dict[str, Any]) -> str:
    try:
        exec(compile(source, "<cell>", "exec"), dict(ns))
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return "ran"


def _claims(source: str, ns: dict[str, Any]) -> list[str]:
    findings = check(source, probe.run(source, {}, namespace=dict(ns)))
    return [f.message for f in findings if f.rule == "immutable-index"]


@pytest.mark.parametrize(
    "source",
    ["ind[1] = 0", "r[0] += 1", "m[0] = (5, 6)", "d[0] = None", "c[1] = 'a'", "print(ind)\nind[-1] = 9"],
)
def test_item_assignment_to_an_index_is_claimed(source: str, ns: dict[str, Any]) -> None:
    (message,) = _claims(source, ns)
    assert _real(source, ns) == "TypeError: Index does not support mutable operations"
    assert message.startswith("TypeError: Index does not support mutable operations (line ")


@pytest.mark.parametrize(
    "source",
    [
        "s[0] = 5",
        "df.loc[0, 'a'] = 3",
        "ind = list(ind)\nind[0] = 1",
        "try:\n    ind[0] = 1\nexcept TypeError:\n    pass",
        "ind2 = ind.insert(0, 7)\nx = ind2[0]",
        "y = ind[0]",
    ],
)
def test_no_claim_where_it_runs(source: str, ns: dict[str, Any]) -> None:
    assert _claims(source, ns) == []
    assert _real(source, ns) == "ran"
