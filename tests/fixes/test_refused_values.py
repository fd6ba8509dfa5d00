"""A value the library refuses and the one its message names instead, in the cell's strings (values.py):
the real messages of the installed pandas, the edited cell run for real."""

from __future__ import annotations

import pandas as pd
import pytest

from crane_jupyterlab.fixes.candidates import candidates
from crane_jupyterlab.fixes.values import pairs


def _message(cell: str, ns: dict[str, object]) -> str:
    try:
        exec(cell, ns)
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    raise AssertionError(f"{cell!r} ran: the installed pandas takes it")


@pytest.mark.parametrize(
    "cell",
    [
        "x = pd.date_range('2000-01-01', periods=3, freq='M')",
        "x = pd.date_range('2000-01-01', '2000-01-03', freq='4H')",
        "x = pd.Period('2011', freq='A-DEC')",
        "x = pd.period_range('2006', '2009', freq=\"A-DEC\")\ny = 'M'  # an unrelated string, the same",
        "s = pd.Series(range(90), index=pd.date_range('2000-01-01', periods=90))\nx = s.resample('BM').sum()",
    ],
)
def test_the_value_the_message_names_is_put_in_and_the_cell_then_runs(cell: str) -> None:
    message = _message(cell, {"pd": pd})
    assert pairs(message), message
    found = [c for c in candidates(cell, {}, [message]) if c.origin == "message"]
    assert found, message
    exec(found[0].source, {"pd": pd})  # the fix runs with the installed pandas


def test_names_comments_and_other_strings_are_left_alone() -> None:
    cell = "M = 1  # 'M' is a name\nx = pd.date_range('2000', periods=2, freq='M')\ny = 'Month'"
    message = _message(cell, {"pd": pd})
    (fix,) = [c for c in candidates(cell, {}, [message]) if c.origin == "message"]
    assert fix.source == cell.replace("freq='M'", "freq='ME'")
    assert "→" in fix.title


def test_no_pair_no_candidate() -> None:
    assert pairs("ValueError: could not convert string to float: 'abc'") == []
