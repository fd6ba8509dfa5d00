"""worker.graph_call: a cell that at once calls a Keras model's fit/predict/evaluate or a tf.function goes
to the worker without a fork first (the fork would only reach the graph function and stop)."""

from __future__ import annotations

from typing import Any

import pytest

from crane_jupyterlab.kernel.trial.worker import graph_call


@pytest.fixture(scope="module")
def ns() -> dict[str, Any]:
    keras = pytest.importorskip("keras")
    tf = pytest.importorskip("tensorflow")
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])

    class Plain:
        def predict(self, x: Any) -> Any:
            return x

    return {"model": model, "triple": tf.function(lambda a: a * 3), "plain": Plain(), "x": [1.0]}


@pytest.mark.parametrize(
    ("cell", "expected"),
    [
        ("p = model.predict(x)", True),
        ("model.fit(x, x, epochs=3)", True),
        ("history = model.fit(x, x)\nprint(history)", True),
        ("triple(2.0)", True),
        ("model.summary()", False),  # no graph function: the fork runs it
        ("plain.predict(x)", False),  # not a Keras model
        ("def go():\n    return model.predict(x)\ngo()", False),  # what the cell defines: the fork decides
        ("if x:\n    model.predict(x)", False),  # not at the top level: it may not run
        ("model.predict(", False),  # half-typed
        ("opt = make()\nmodel.fit(x, x)", False),  # what comes first may crash in the fork
    ],
)
def test_graph_calls(cell: str, expected: bool, ns: dict[str, Any]) -> None:
    assert graph_call(cell, ns) is expected
