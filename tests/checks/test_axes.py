"""Axis, stacking and ragged-list rules: the edges the generated variants do not reach, each executed."""

from __future__ import annotations

from typing import Any

import pytest
from support import Checker

np = pytest.importorskip("numpy")
pd = pytest.importorskip("pandas")
torch = pytest.importorskip("torch")


@pytest.fixture
def ns() -> dict[str, Any]:
    return {
        "np": np,
        "pd": pd,
        "torch": torch,
        "y": np.arange(30) % 3,
        "scalar": np.array(5.0),
        "onehot": np.eye(3)[np.arange(30) % 3],
        "df": pd.DataFrame({"a": [1.0, 2.0], "b": [3.0, 4.0]}),
        "s": pd.Series([1.0, 2.0]),
        "t": torch.ones(4),
        "t0": torch.tensor(2.0),
        "empty": torch.ones(0),
        "m": torch.ones(2, 3),
        "rows": [[1, 2, 3], [4, 5]],
        "square": [[1, 2], [3, 4]],
        "texts": ["<ndarray (5, 1) float64>", "<ndarray (5,) float64>"],
        "cols": [np.ones((5, 1)), np.ones(5)],
        "flat": [np.ones(3), np.ones(4)],
        "mixed": [np.ones(3), np.ones((2, 3))],
        "long_ragged": [[1, 2], [3]] + [[1, 2]] * 40,
        "arrays": [np.ones((2, 2)), np.ones(3)],
    }


@pytest.mark.parametrize(
    ("source", "rule"),
    [
        ("np.argmax(y, axis=1)", "axis-out-of-range"),
        ("y.argmax(1)", "axis-out-of-range"),
        ("np.mean(onehot, axis=(0, 2))", "axis-out-of-range"),
        ("np.expand_dims(y, -3)", "axis-out-of-range"),
        ("np.take(onehot, [0], 2)", "axis-out-of-range"),
        ("t.softmax(-2)", "axis-out-of-range"),
        ("t.transpose(0, 1)", "axis-out-of-range"),
        ("onehot.transpose(2, 0, 1)", "axis-out-of-range"),  # axes don't match array
        ("m.permute(1, 1)", "axis-out-of-range"),  # repeated dim
        ("s.sum(axis=1)", "axis-out-of-range"),  # a Series has axis 0 only
        ("np.argmax(s, axis=1)", "axis-out-of-range"),
        ("df.mean(axis=2)", "axis-out-of-range"),
        ("np.concatenate(cols, axis=1)", "shape-mismatch"),
        ("np.vstack(flat)", "shape-mismatch"),
        ("np.vstack([y, scalar])", "shape-mismatch"),  # atleast_2d: (1, 30) and (1, 1)
        ("np.array(rows)", "shape-mismatch"),
        ("np.array(long_ragged)", "shape-mismatch"),  # seen rows disagree: the unseen ones do not matter
        ("np.asarray(arrays, dtype=float)", "shape-mismatch"),
        ("torch.tensor(rows, dtype=torch.float32)", "shape-mismatch"),
    ],
)
def test_crashes(ns: dict[str, Any], source: str, rule: str | None, rules: Checker) -> None:
    assert rules(source, ns) == ([rule] if rule else [])
    with pytest.raises((ValueError, IndexError, RuntimeError)):
        exec(source, ns)


@pytest.mark.parametrize(
    "source",
    [
        "scalar.sum(axis=0)",  # 0-d arrays take axis 0
        "t0.sum(dim=0)",  # and 0-d tensors dim 0
        "df.sum(axis=1)",  # pandas: axis means rows/columns
        "s.mean(axis=0)",
        "np.sum(df, axis=1)",
        "np.argmax(df, axis=1)",
        "np.expand_dims(y, 1)",
        "t.unsqueeze(1)",
        "np.hstack(flat)",  # 1-d arrays join on axis 0
        "np.vstack(mixed)",  # (3,) becomes (1, 3)
        "np.hstack([scalar, y])",  # atleast_1d: (1,) and (30,) on axis 0
        "np.column_stack([np.ones(5), np.ones((5, 2))])",
        "torch.cat([empty, m])",  # torch skips empty 1-d tensors
        "np.array(rows, dtype=object)",
        "np.array(square)",
        "np.array(texts)",  # strings that look like arrays are strings
        "np.sort(y, axis=None)",
        "onehot.transpose(1, 0)",
        "m.permute(-1, 0)",
        "m.transpose(-1, 0)",
        "rows2 = rows[:1]\nnp.array(rows2)",
        "rows[1].append(6)\nnp.array(rows)",  # the cell pads the short row first
        "rows.pop()\nnp.array(rows)",
        "cols[1] = cols[1].reshape(-1, 1)\nnp.concatenate(cols, axis=1)",
        "flat2 = flat\nflat2[1] = np.ones(3)\nnp.vstack(flat2)",
    ],
)
def test_silent_and_fine(ns: dict[str, Any], source: str, rules: Checker) -> None:
    assert rules(source, ns) == []
    exec(source, ns)


@pytest.mark.parametrize(
    "source",
    [
        "try:\n    np.argmax(y, axis=1)\nexcept IndexError:\n    pass",
        "try:\n    np.array(rows)\nexcept ValueError:\n    pass",
    ],
)
def test_silent_when_the_cell_may_not_crash(ns: dict[str, Any], source: str, rules: Checker) -> None:
    assert rules(source, ns) == []
