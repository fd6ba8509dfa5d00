"""The replica judge: the cell runs on replicas rebuilt from the probe's facts, in the real runner process.

Each test reads a real namespace with the real probe, so the facts are the ones the product would have;
the claims are checked against running the cell on the real objects.
"""

from __future__ import annotations

import os
import time
import traceback
from typing import Any

import numpy as np
import pandas as pd
import pytest

from crane_jupyterlab.checks import replica
from crane_jupyterlab.checks.view import ModuleInfo, RuntimeView, from_probe
from crane_jupyterlab.kernel import probe

sklearn = pytest.importorskip("sklearn")
from sklearn.linear_model import LogisticRegression  # noqa: E402

SETUP = ["import numpy as np\nimport pandas as pd\nfrom sklearn.linear_model import LogisticRegression"]


def _state() -> dict[str, Any]:
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.normal(size=60), "b": rng.integers(0, 3, 60), "c": ["x", "y", "z"] * 20})
    X = df[["a", "b"]].to_numpy()
    m = LogisticRegression().fit(X, (df["b"] > 1).astype(int))
    return {"__name__": "__main__", "np": np, "pd": pd, "LogisticRegression": LogisticRegression,
            "df": df, "X": X, "m": m}  # fmt: skip


def _judge(cell: str, ns: dict[str, Any], setup: list[str] = SETUP) -> list[Any]:
    assert replica.warm_up(120), "the replica process did not warm up"
    return replica.judge(cell, from_probe(probe.run(cell, {}, namespace=ns)), setup)


def _real(cell: str, ns: dict[str, Any]) -> str | None:
    """The exception class the cell raises on the real objects (None: it runs)."""
    try:
        exec(cell, dict(ns))
    except Exception as exc:
        traceback.clear_frames(exc.__traceback__)
        return type(exc).__name__
    return None


@pytest.mark.parametrize(
    "cell",
    [
        "m.predict(np.hstack([X, X[:, :1]]))",  # a feature too many
        "m.predict_probability(X)",  # a method the class does not have
        "X.sum(axis=2)",  # an axis the array does not have
        "np.concatenate([X, df['a'].to_numpy()])",  # arrays of different ranks
        "df['c'].astype(float)",  # text into numbers: whichever value comes first fails
        "df.pivot(columns='c', values='a', index='nope')",  # a column the frame lacks
    ],
)
def test_a_crash_every_replica_raises_is_claimed_and_is_real(cell: str) -> None:
    ns = _state()
    findings = _judge(cell, ns)
    assert [f.rule for f in findings] == [replica.RULE], findings
    assert findings[0].message.split(":", 1)[0] == _real(cell, ns)
    assert findings[0].line == 1
    assert "replicas" in findings[0].evidence[-1]


@pytest.mark.parametrize(
    "cell",
    [
        "m.predict(X)\nm.coef_.shape",  # runs
        "df.groupby('c')['a'].mean()",  # runs
        "pd.read_csv('no-such-file.csv')",  # the machine, not the data: never claimed
        "import socket\nsocket.create_connection(('127.0.0.1', 9), 1)\nX.sum(axis=2)",  # refused first
    ],
)
def test_no_claim_where_the_cell_runs_or_the_machine_decides(cell: str) -> None:
    assert _judge(cell, _state()) == []


def test_a_file_written_lands_in_a_private_copy_and_the_crash_after_it_is_seen() -> None:
    cell = "open('/tmp/crane-replica-must-not-exist', 'w').write('x')\nX.sum(axis=2)"
    assert [f.line for f in _judge(cell, _state())] == [2]
    assert not os.path.exists("/tmp/crane-replica-must-not-exist")


def test_what_the_facts_leave_open_is_varied_so_a_value_dependent_crash_is_not_claimed() -> None:
    ns = _state()
    ns["t"] = ns["df"].set_index(np.random.default_rng(1).permutation(60) * 2)  # even labels, not a range
    assert _real("t.loc[3]", ns) == "KeyError"
    assert _judge("t.loc[3]", ns) == []  # the probe does not record the labels: no claim on them
    assert _judge("df.loc[3]", ns) == []  # a RangeIndex of 60 rows has 3 in every variant
    ns["r"] = ns["df"].set_index(ns["df"].index * 2)  # a RangeIndex(0, 120, 2): its bounds are recorded
    assert _real("r.loc[3]", ns) == "KeyError"
    assert [f.message for f in _judge("r.loc[3]", ns)] == ["KeyError: 3"]


def test_a_value_the_facts_do_not_rebuild_ends_the_judgement() -> None:
    ns = _state()

    class Opaque:
        def width(self) -> int:
            return 2

    ns["o"] = Opaque()
    cell = "X.reshape(o.width(), -1, 7)"
    assert _judge(cell, ns) == []  # o is a placeholder: using it aborts, whatever follows


def test_a_crash_inside_a_function_the_notebook_defined_is_claimed() -> None:
    ns = _state()
    helper = "def add_bias(a):\n    return np.hstack([a, np.ones((len(a) + 1, 1))])"
    exec(helper, ns)
    cell = "Z = add_bias(X)"
    assert _real(cell, ns) == "ValueError"
    findings = _judge(cell, ns, [*SETUP, helper])
    assert [f.message.split(":", 1)[0] for f in findings] == ["ValueError"]


def test_definitions_that_import_tensorflow_are_answered_at_once_without_a_claim() -> None:
    # The variants would import TensorFlow after their fork (it is not fork-safe before one) and wait
    # out the budget doing so: the process says why at once instead.
    ns = _state()
    cell = "X.sum(axis=2)"  # a crash every replica raises, were the variants run
    request = replica.request_for(cell, from_probe(probe.run(cell, {}, namespace=ns)),
                                  [*SETUP, "import tensorflow as tf"], budget_s=2.0)  # fmt: skip
    assert request is not None and replica.warm_up(120)
    started = time.monotonic()
    answer = replica.run(request)
    assert time.monotonic() - started < 1.0, answer
    assert answer["variants"] == [] and "tensorflow" in answer["error"]
    assert replica.finding(request, from_probe(probe.run(cell, {}, namespace=ns)), answer) == []


def test_a_definition_rebound_later_is_not_replayed() -> None:
    ns = _state()
    cells = [*SETUP, "def width(a):\n    return 3", "width = 2"]
    ns["width"] = 2
    # The kernel's `width` is 2 (an int, not the function): replaying the def would make the call work
    # or fail for the wrong reason.
    assert replica.spec.definitions(cells) == SETUP[0].splitlines()


def test_tuple_column_labels_are_not_rebuilt_as_text() -> None:
    cols = pd.MultiIndex.from_product([["a", "b"], ["x", "y"]])
    ns = {"pd": pd, "w": pd.DataFrame(np.zeros((3, 4)), columns=cols)}
    assert _real("w['a', 'x']", ns) is None
    assert _judge("w['a', 'x']", ns) == []


def test_another_environment_is_refused() -> None:
    view = RuntimeView(python="3.0.1")
    assert "Python 3.0" in (replica.other_environment(view) or "")
    view = RuntimeView(python=".".join(map(str, __import__("sys").version_info[:3])))
    view.modules = {"np": ModuleInfo("np", "numpy", "0.0.1")}
    assert "numpy 0.0.1" in (replica.other_environment(view) or "")
    view.modules = {"np": ModuleInfo("np", "numpy", np.__version__)}
    assert replica.other_environment(view) is None


def test_a_dead_replica_process_is_replaced() -> None:
    ns = _state()
    assert _judge("X.sum(axis=2)", ns)
    replica.close()
    assert _judge("X.sum(axis=2)", ns)


@pytest.mark.parametrize(
    "name, value, cell",
    [
        # A date index: resample works on the real frame; a RangeIndex replica would raise TypeError.
        ("t", pd.DataFrame({"v": np.arange(30.0)}, index=pd.date_range("2024-01-01", periods=30)),
         "t.resample('W').mean()"),
        # Whole-number float labels are classes; random floats in their range would be "continuous".
        ("yf", np.array([0.0, 1.0, 2.0] * 20), "LogisticRegression().fit(X, yf)"),
        # Arrays in a list are shown as text: the list is not its items.
        ("parts", [np.zeros((2, 3)), np.ones((2, 3))], "np.stack(parts).sum()"),
        # A name the query reads from its text, which no replica has.
        ("thr", 0.5, "df.query('a > @thr')"),
    ],
)  # fmt: skip
def test_what_the_facts_do_not_hold_exactly_is_never_claimed(name: str, value: Any, cell: str) -> None:
    ns = _state()
    ns[name] = value
    assert _real(cell, ns) is None
    assert _judge(cell, ns) == []
