"""Argument values the objects at hand cannot satisfy, on real objects through the real probe."""

from __future__ import annotations

from typing import Any

import pytest
from support import Checker

np = pytest.importorskip("numpy")
pd = pytest.importorskip("pandas")
pytest.importorskip("sklearn")


@pytest.fixture
def ns() -> dict[str, Any]:
    from sklearn.model_selection import train_test_split

    return {
        "np": np,
        "pd": pd,
        "train_test_split": train_test_split,
        "features": ["temp", "humidity", "wind"],
        "X": np.arange(30.0).reshape(10, 3),
        "y_single": pd.Series(["a"] * 5 + ["b"] * 4 + ["c"]),
        "y_ok": pd.Series(["a"] * 5 + ["b"] * 5),
        "img": np.zeros((4, 2, 2), dtype=np.uint8),
        "df": pd.DataFrame({"zip": [10001, 94110], "name": ["x", "y"]}),
        "A": np.zeros((3, 2)),
        "B": np.zeros((2, 2)),
    }


@pytest.mark.parametrize(
    ("source", "error"),
    [
        ("features.remove('target')", ValueError),
        ("i = features.index('target')", ValueError),
        (
            "from sklearn.model_selection import train_test_split\n"
            "parts = train_test_split(X, y_single, stratify=y_single)",
            ValueError,
        ),
        ("img /= 255.0", TypeError),
        ("img *= 0.5", TypeError),
        ("df['zip3'] = df['zip'].str[:3]", AttributeError),
        ("df['zip'].dt.year", AttributeError),
        ("C = np.concatenate(A, B)", TypeError),
    ],
)
def test_certain_crashes(ns: dict[str, Any], source: str, error: type[Exception], rules: Checker) -> None:
    assert rules(source, ns) == ["bad-value"]
    with pytest.raises(error):
        exec(source, ns)


@pytest.mark.parametrize(
    "source",
    [
        "features.remove('wind')",
        "if 'target' in features:\n    features.remove('target')",
        "features.append('target')\nfeatures.remove('target')",
        "parts = train_test_split(X, y_ok, stratify=y_ok)",
        "parts = train_test_split(X, y_single)",
        "img = img / 255.0",
        "img += 1",
        "df['name'].str.upper()",
        "C = np.concatenate([A, B])",
        "C = np.concatenate((A, B), 0)",
    ],
)
def test_silent_when_fine(ns: dict[str, Any], source: str, rules: Checker) -> None:
    assert rules(source, ns) == []
