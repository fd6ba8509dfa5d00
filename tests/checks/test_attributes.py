"""Missing attributes and styles, judged against the live (installed) libraries through the real probe."""

from __future__ import annotations

from typing import Any

import pytest
from support import Checker

from crane_jupyterlab.bench.junobench_adapter import from_junobench
from crane_jupyterlab.checks import check_view

np = pytest.importorskip("numpy")
pd = pytest.importorskip("pandas")


@pytest.fixture
def ns() -> dict[str, Any]:
    return {"np": np, "pd": pd, "df": pd.DataFrame({"a": [1, 2]}), "arr": np.zeros(3)}


def _removed(obj: Any, name: str) -> bool:
    return not hasattr(obj, name)


def test_attribute_missing_from_the_installed_numpy(ns: dict[str, Any], messages: Checker) -> None:
    if not _removed(np, "float"):
        pytest.skip("this numpy still has np.float")
    (message,) = messages("x = np.float(3)", ns)
    assert message.startswith("AttributeError") and "numpy" in message and "'float'" in message


def test_dataframe_append_in_pandas_2(ns: dict[str, Any], messages: Checker) -> None:
    if not _removed(pd.DataFrame, "append"):
        pytest.skip("this pandas still has DataFrame.append")
    (message,) = messages("df = df.append({'a': 3}, ignore_index=True)", ns)
    assert "'DataFrame' object has no attribute 'append'" in message


def test_missing_method_on_an_array(ns: dict[str, Any], messages: Checker) -> None:
    (message,) = messages("arr.join(arr)", ns)
    assert "no attribute 'join'" in message
    with pytest.raises(AttributeError):
        exec("arr.join(arr)", ns)


@pytest.mark.parametrize(
    "source",
    [
        "x = np.float64(3)",
        "if hasattr(np, 'float'):\n    x = np.float(3)",
        "x = getattr(np, 'float', float)(3)",
        "try:\n    arr.join(arr)\nexcept AttributeError:\n    pass",
        "arr = pd.Series([1])\narr.to_list()",
        "df.a.sum()",  # a column reached as an attribute
    ],
)
def test_silent_when_present_or_guarded(ns: dict[str, Any], source: str, messages: Checker) -> None:
    assert messages(source, ns) == []


def test_matplotlib_style_missing_from_the_installed_version(messages: Checker) -> None:
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if "seaborn" in plt.style.available:
        pytest.skip("this matplotlib still ships the 'seaborn' style")
    ns = {"plt": plt}
    (message,) = messages("plt.style.use('seaborn')", ns)
    assert message.startswith("OSError") and "'seaborn'" in message
    assert messages("plt.style.use('ggplot')", ns) == []


def test_junobench_records_never_prove_an_attribute_missing() -> None:
    record = {"X_train": {"type": "numpy.ndarray", "shape": [3, 2], "dtype": "float64"}}
    assert check_view("X_train.join(y)", from_junobench(record, "X_train.join(y)", ["y = 1"])) == []


def test_a_submodule_attribute_the_installed_matplotlib_removed(messages: Checker) -> None:
    matplotlib = pytest.importorskip("matplotlib")
    cm = pytest.importorskip("matplotlib.cm")
    if hasattr(cm, "get_cmap"):
        pytest.skip("this matplotlib still has matplotlib.cm.get_cmap")
    (message,) = messages("cmap = matplotlib.cm.get_cmap('viridis')", {"matplotlib": matplotlib})
    assert message.startswith("AttributeError: module 'matplotlib.cm'") and "'get_cmap'" in message
