"""Array shape rules on real NumPy/pandas/matplotlib objects through the real probe."""

from __future__ import annotations

from typing import Any

import pytest
from support import Checker

np = pytest.importorskip("numpy")
pd = pytest.importorskip("pandas")
pytest.importorskip("matplotlib")
import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


@pytest.fixture
def ns() -> dict[str, Any]:
    rng = np.random.default_rng(0)
    return {
        "np": np,
        "plt": plt,
        "X": rng.normal(size=(150, 5)),
        "W": rng.normal(size=(4, 3)),
        "W_ok": rng.normal(size=(5, 3)),
        "y": rng.integers(0, 2, 100),
        "X93": rng.normal(size=(93, 2)),
        "a3": np.arange(3.0),
        "a4": np.arange(4.0),
        "dates": pd.Series(pd.date_range("2023-01-01", periods=120)),
        "sales": pd.Series(np.arange(111.0)),
        "sales120": pd.Series(np.arange(120.0)),
    }


@pytest.mark.parametrize(
    "source",
    [
        "Z = X @ W",
        "Z = X.dot(W)",
        "Z = np.dot(X, W)",
        "for epoch in range(3):\n    Z = X @ W",
        "b = a3 + a4",
        "m = X93[y == 1].mean(axis=0)",
        "m = X[y[:150] == 1]",  # y has 100 elements: the slice keeps 100
        "fig, ax = plt.subplots()\nax.plot(dates, sales)",
        "plt.plot(dates, sales)",
        "plt.scatter(dates, sales)",
    ],
)
def test_shape_mismatches_are_crashes(ns: dict[str, Any], source: str, rules: Checker) -> None:
    assert rules(source, ns) == ["shape-mismatch"]
    with pytest.raises((ValueError, IndexError)):
        exec(source, ns)
    plt.close("all")


@pytest.mark.parametrize(
    "source",
    [
        "Z = X @ W_ok",
        "b = a3 + a3[:, None]",  # a computed operand: not the kernel's shape
        "W = W_ok\nZ = X @ W",
        "for w in []:\n    Z = X @ W",
        "if X.shape[1] == 4:\n    Z = X @ W",
        "m = X[:100][y == 1]",  # a derived array of the mask's length
        "fig, ax = plt.subplots()\nax.plot(dates, sales120)",
        "fig, axes = plt.subplots(1, 2)\naxes[0].plot(dates, sales120)",
        "sales.plot()",
    ],
)
def test_silent_when_not_certain(ns: dict[str, Any], source: str, rules: Checker) -> None:
    assert rules(source, ns) == []
    plt.close("all")
