"""Numeric conversions of values that are not numbers, on real Series through the real probe."""

from __future__ import annotations

from typing import Any

import pytest
from support import Checker

from crane_jupyterlab.bench.junobench_adapter import from_junobench
from crane_jupyterlab.checks import check_view
from crane_jupyterlab.checks.rules.conversion import unparsable

np = pytest.importorskip("numpy")
pd = pytest.importorskip("pandas")


@pytest.fixture
def ns() -> dict[str, Any]:
    df = pd.DataFrame(
        {
            "installs": ["10,000+", "500+", "10,000+", "1,000+"],
            "digits": ["1", "2", "3", "4"],
            "lot": [60.0, None, 70.0, 80.0],
            "full": [1.0, 2.0, 3.0, 4.0],
        }
    )
    return {"pd": pd, "np": np, "df": df}


@pytest.mark.parametrize(
    "source",
    [
        "df['installs'] = df['installs'].astype('int')",
        "df['installs'].astype(float)",
        "df['installs'].astype(np.int64)",
        "pd.to_numeric(df['installs'])",
        "df['lot'] = df['lot'].astype(int)",  # NaN cannot become a NumPy integer
    ],
)
def test_certain_conversion_errors(ns: dict[str, Any], source: str, rules: Checker) -> None:
    assert rules(source, ns) == ["bad-conversion"]
    with pytest.raises((KeyError, IndexError, ValueError, TypeError)):  # and it really does crash
        exec(source, ns)


@pytest.mark.parametrize(
    "source",
    [
        "df['digits'].astype(int)",
        "df['lot'].astype(float)",
        "df['lot'].astype('Int64')",  # nullable integers accept NaN
        "df['full'].astype(int)",
        "pd.to_numeric(df['installs'], errors='coerce')",
        "df['installs'].str.replace(',', '').str.rstrip('+').astype(int)",  # computed first
        "df['installs'] = df['digits']\ndf['installs'].astype(int)",
        "df['installs'].astype(str)",
    ],
)
def test_silent_when_not_certain(ns: dict[str, Any], source: str, rules: Checker) -> None:
    assert rules(source, ns) == []


@pytest.mark.parametrize(
    ("text", "bad"),
    [
        ("10,000+", True),
        ("$5", True),
        ("abc", True),
        ("12", False),
        (" 3.5 ", False),
        ("nan", False),
        ("", False),
        ("1e3", False),
    ],
)
def test_unparsable(text: str, bad: bool) -> None:
    assert unparsable(text) is bad


def test_datetime_columns_convert_to_integers(rules: Checker) -> None:
    dates = pd.DataFrame({"d": pd.to_datetime(["2015-10-23", "2016-01-06"])})
    assert rules("dates['d'].astype('int64')", {"dates": dates}) == []
    record = {"df": {"type": "pandas.core.frame.DataFrame", "shape": [2, 1],
                     "per_column": {"d": {"example_values": ["2015-10-23", "2016-01-06"]}}}}  # fmt: skip
    assert check_view("df['d'].astype(int)", from_junobench(record, "df['d'].astype(int)", [])) == []
