"""The truth value of an array, a Series, a DataFrame or a tensor (checks/rules/truth.py), through the real
probe; every cell is also run, and a claim must name the exception it raises, on the line it raises."""

from __future__ import annotations

from typing import Any

import pytest

from crane_jupyterlab.checks import check
from crane_jupyterlab.kernel import probe


@pytest.fixture
def ns() -> dict[str, Any]:
    np = pytest.importorskip("numpy")
    pd = pytest.importorskip("pandas")
    out: dict[str, Any] = {
        "A": np.arange(5) > 2,
        "B": np.arange(5) < 3,
        "x": np.arange(10.0),
        "one": np.array([1]),
        "empty_frame": pd.DataFrame(),
        "o": np.array(["a", "b"], dtype=object),
        "s": pd.Series([1, 2]),
        "df": pd.DataFrame({"a": [1, 2]}),
        "n": 3,
    }
    try:
        import torch

        out["t"] = torch.zeros(3)
        out["t1"] = torch.zeros(1)
    except ImportError:
        pass
    return out


def _outcome(source: str, ns: dict[str, Any]) -> tuple[str, int | None]:
    import sys

    try:
        exec(compile(source, "<cell>", "exec"), dict(ns))
    except Exception as exc:
        tb = sys.exc_info()[2]
        line = None
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == "<cell>":
                line = tb.tb_lineno
            tb = tb.tb_next
        return type(exc).__name__, line
    return "ran", None


CRASHING = [
    "A or B",
    "(x > 4) and (x < 8)",
    "mask = (x > 4) or (x < 2)",
    "if s:\n    print('yes')",
    "not df",
    "0 < x < 5",
    "y = x if x else 0",
    "o and 1",
    "while x > 3:\n    break",
    "assert x",
    "df['a'] and 1",
    "empty_frame or 1",  # pandas: whatever the size
    "print('start')\nif x == 2:\n    pass",
    "t and 1",
    "-1.5 <= x <= 1.5",
]

FINE = [
    "one or B",  # one element: its truth is the element's
    "t1 and 1",
    "try:\n    A or B\nexcept ValueError:\n    pass",
    "A = 1\nA or B",  # rebound first
    "def f():\n    return A or B",  # never called
    "x.any() or B",
    "(x > 4) & (x < 8)",
    "x.shape and 1",
    "len(x) > 3 and n",
    "n > 2 and A",  # only the first operand is certain to be tested
    "if n > 5:\n    A or B",  # a branch that does not run... or might: not claimed either way
    "df.empty or s.empty",
    "x is None or A",
    "[v for v in x if v > 3]",
]


@pytest.mark.parametrize("source", CRASHING)
def test_claims_name_the_real_error(source: str, ns: dict[str, Any]) -> None:
    if "t" in source.split() and "t" not in ns:
        pytest.skip("torch is not installed")
    findings = check(source, probe.run(source, {}, namespace=dict(ns)))
    real, line = _outcome(source, ns)
    assert [f.rule for f in findings] == ["ambiguous-truth-value"], (findings, real)
    assert findings[0].message.split(":", 1)[0] == real
    assert findings[0].line == line


@pytest.mark.parametrize("source", FINE)
def test_no_claim_where_it_runs_or_is_not_certain(source: str, ns: dict[str, Any]) -> None:
    findings = [
        f
        for f in check(source, probe.run(source, {}, namespace=dict(ns)))
        if f.rule == "ambiguous-truth-value"
    ]
    assert findings == []
    real, _ = _outcome(source, ns)
    if source.startswith("if n > 5"):
        return  # n is 3: the branch does not run (the checks do not decide branches for this rule)
    assert real == "ran"


def test_the_hint_says_what_to_write(ns: dict[str, Any]) -> None:
    (finding,) = check("(x > 4) and (x < 8)", probe.run("(x > 4) and (x < 8)", {}, namespace=dict(ns)))
    assert "use `&`/`|` with parentheses" in finding.message
    assert finding.evidence[0] == "x > 4 is an element-wise comparison"
