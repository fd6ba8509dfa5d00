"""Calls whose arguments cannot bind to the callee's signature, through the real probe on real objects.

Every call claimed to crash is also run, and must raise TypeError; every silent case either runs or is
out of the rule's reach (guarded, rebound, unpacked, decorated, not certain to run)."""

from __future__ import annotations

import functools
import sys
from typing import Any

import pytest

from crane_jupyterlab import runtime_text
from crane_jupyterlab.checks import check
from crane_jupyterlab.kernel import probe

pd = pytest.importorskip("pandas")


def f(a: Any, b: Any = 1) -> Any:
    return a


class Point:
    def __init__(self, x: Any) -> None:
        self.x = x


def _inner(a: Any) -> Any:
    return a


@functools.wraps(_inner)
def wrapped(*args: Any, **kwargs: Any) -> Any:  # accepts more than the signature it reports
    return args


class Anything:
    def __new__(cls, *args: Any, **kwargs: Any) -> Anything:
        return super().__new__(cls)

    def __init__(self, x: Any) -> None:
        self.x = x


class Meta(type):
    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return args


class Managed(metaclass=Meta):
    def __init__(self) -> None:
        pass


@pytest.fixture
def ns() -> dict[str, Any]:
    return {"pd": pd, "df": pd.DataFrame({"a": [1, 2], "b": [3, 4]}), "f": f, "Point": Point,
            "wrapped": wrapped, "Anything": Anything, "Managed": Managed, "g": lambda *a: 0}  # fmt: skip


def findings(source: str, ns: dict[str, Any]) -> list[str]:
    return [
        m.message for m in check(source, probe.run(source, {}, namespace=ns)) if m.rule == "bad-arguments"
    ]


def crashes(source: str, ns: dict[str, Any]) -> str:
    (message,) = findings(source, ns)
    with pytest.raises(TypeError):
        exec(source, dict(ns))
    return message


def test_user_function_called_with_too_many_arguments(ns: dict[str, Any]) -> None:
    assert crashes("f(1, 2, 3)", ns) == "TypeError: f() too many positional arguments (line 1)."


def test_unknown_keyword_and_missing_argument(ns: dict[str, Any]) -> None:
    assert "unexpected keyword argument 'c'" in crashes("y = f(1, c=2)", ns)
    assert "missing a required argument: 'x'" in crashes("p = Point()", ns)


def test_pandas_positional_axis_and_concat_of_two_frames(ns: dict[str, Any]) -> None:
    assert crashes("df.drop('a', 1)", ns).startswith("TypeError: df.drop() too many positional")
    assert "pd.concat()" in crashes("both = pd.concat(df, df)", ns)


def test_seaborn_takes_only_data_positionally() -> None:
    sns = pytest.importorskip("seaborn")
    counts = pd.Series([3, 1], index=["a", "b"])
    message = crashes("sns.barplot(counts.index, counts.values)", {"sns": sns, "counts": counts})
    assert "sns.barplot() too many positional arguments" in message


def test_keyword_removed_from_a_class_imported_in_the_cell() -> None:
    pytest.importorskip("sklearn")
    import sklearn.preprocessing

    if "sparse" in sklearn.preprocessing.OneHotEncoder().get_params():
        pytest.skip("this scikit-learn still takes OneHotEncoder(sparse=...)")
    source = "from sklearn.preprocessing import OneHotEncoder\nenc = OneHotEncoder(sparse=False)"
    message = crashes(source, {})
    assert "OneHotEncoder() got an unexpected keyword argument 'sparse'" in message
    result = probe.run(source, {}, namespace={})
    assert "arguments do not fit the signature (*, categories=" in runtime_text.render(result)


def test_torch_layer_missing_its_output_size() -> None:
    nn = pytest.importorskip("torch.nn")
    assert "'out_features'" in crashes("layer = nn.Linear(4)", {"nn": nn})


@pytest.mark.parametrize(
    "source",
    [
        "f(1, 2)",
        "f(*[1, 2, 3])",  # unpacked: the count is not known
        "f(1, **{'c': 2})",
        "try:\n    f(1, 2, 3)\nexcept TypeError:\n    pass",
        "f = g\nf(1, 2, 3)",  # rebound in the cell before the call
        "if len(df) > 5:\n    f(1, 2, 3)",  # not certain to run
        "wrapped(1, 2)",  # a functools.wraps wrapper takes more than it reports
        "Anything(1, 2)",  # custom __new__: left alone (it may return an object __init__ never sees)
        "Managed(1, 2)",  # a metaclass __call__ decides
        "pd.concat([df, df])",
        "from not_a_loaded_module import h\nh(1, 2, 3)",  # nothing to look at without importing
        "from functools import reduce\nreduce = f\nreduce(1, 2, 3)",
    ],
)
def test_silent(ns: dict[str, Any], source: str) -> None:
    assert findings(source, ns) == []


def test_probe_describes_only_calls_that_cannot_bind(ns: dict[str, Any]) -> None:
    result = probe.run("f(1)\nf(1, 2, 3)\nPoint(1)", {}, namespace=ns)
    calls = [e for e in result["objects"] if e["type"] == "call"]
    assert [e["expr"] for e in calls] == ["f(1, 2, 3)"]
    assert {x["key"]: x["value"] for x in calls[0]["facts"]} == {
        "bind_error": "too many positional arguments",
        "signature": "(a: 'Any', b: 'Any' = 1) -> 'Any'",
        "params": ["a", "b"],  # whole, for a fix that names an argument (fixes/library.py)
    }
    text = runtime_text.render(result)
    assert "f(1, 2, 3): arguments do not fit the signature (a: 'Any', b: 'Any' = 1)" in text
    assert "arguments do not fit" not in runtime_text.render(result, "SV")  # a representation fact


def test_hostile_attribute_lookups_are_not_run() -> None:
    class Proxy:
        def __getattr__(self, name: str) -> Any:
            raise AssertionError("the probe ran __getattr__")

    result = probe.run("p.method(1, 2)", {}, namespace={"p": Proxy()})
    assert result["error"] is None
    assert not [e for e in result["objects"] if e["type"] == "call"]
    assert "not_a_loaded_module" not in sys.modules
