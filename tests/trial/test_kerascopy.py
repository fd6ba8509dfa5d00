"""Which call made a Keras model of the notebook's own class (kernel/trial/kerascopy.py): read from the
cells the kernel ran, latest first, without running any of them; and which of a model's attributes go
with it. Plain objects stand in for models: only names and source are read."""

from __future__ import annotations

from typing import Any

from crane_jupyterlab.kernel.trial import kerascopy


class Net:
    pass


def namespace(cells: list[str], **names: Any) -> dict[str, Any]:
    return {"__name__": "__main__", "_ih": ["", *cells], "In": ["", *cells], **names}


def test_the_assignment_to_the_models_name_comes_first_then_any_call_of_its_class() -> None:
    net = Net()
    ns = namespace(
        [
            "UNITS = 8\nother = Net(UNITS * 2)",
            "def build(units):\n    return Net(units, rate=0.1)",
            "net = build(UNITS)\nnet.compile('adam', 'mse')",
        ],
        net=net,
    )
    assert kerascopy.constructor_calls(net, ns) == ["build(UNITS)", "Net(units, rate=0.1)", "Net(UNITS * 2)"]


def test_the_latest_cell_that_made_it_is_tried_first_and_each_call_once() -> None:
    net = Net()
    ns = namespace(["net = Net(4)", "net = Net(4)", "net = Net(16)", "print(net"], net=net)
    assert kerascopy.constructor_calls(net, ns) == ["Net(16)", "Net(4)"]


def test_no_history_or_no_call_of_the_class_gives_nothing() -> None:
    net = Net()
    assert kerascopy.constructor_calls(net, {"net": net}) == []
    assert kerascopy.constructor_calls(net, namespace(["x = 1", "y = Other(2)"], net=net)) == []


def test_the_public_attributes_that_are_not_keras_own_go_with_the_model() -> None:
    net: Any = Net()
    net.units, net.threshold, net.labels, net.marker = 8, 0.5, ["a", "b"], Net
    net._private, net.name, net.history = 1, "net", {"loss": [1.0]}
    assert kerascopy._attributes(net) == {"units": 8, "threshold": 0.5, "labels": ["a", "b"], "marker": Net}


def layer_config(name: str, act: str, code: str, closure: list[float]) -> dict[str, Any]:
    function = {"class_name": "__lambda__", "config": {"code": code, "closure": closure}}
    return {
        "name": name,
        "units": 4,
        "activation": {"config": {"name": act, "slope": 0.1}},
        "function": function,
    }


def test_configs_are_compared_without_names_nor_a_lambdas_marshalled_code() -> None:
    """A process numbers its layers (`leaky_re_lu_1`), and marshal's bytes for the same code differ between
    processes: neither tells two models apart; a Lambda's closure values still do."""
    kernel = layer_config("dense", "leaky_re_lu", "4wEAAA", [0.0, 1.0])
    assert kerascopy._nameless(kernel) == kerascopy._nameless(
        layer_config("dense_7", "leaky_re_lu_1", "4wEB", [0.0, 1.0])
    )
    assert kerascopy._nameless(kernel) != kerascopy._nameless(
        layer_config("dense", "leaky_re_lu", "4wEAAA", [0.0, 2.0])
    )
