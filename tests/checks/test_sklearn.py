"""scikit-learn rules on real estimators through the real probe."""

from __future__ import annotations

from typing import Any

import pytest
from support import Checker

from crane_jupyterlab.checks import check
from crane_jupyterlab.kernel import probe

np = pytest.importorskip("numpy")
pd = pytest.importorskip("pandas")
pytest.importorskip("sklearn")

from sklearn.linear_model import LinearRegression, LogisticRegression  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402


@pytest.fixture
def ns() -> dict[str, Any]:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 4))
    y = (X[:, 0] > 0).astype(int)
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    return {
        "np": np,
        "X": X,
        "y": y,
        "X_wide": rng.normal(size=(5, 6)),
        "frame": frame,
        "frame_renamed": frame.rename(columns={"d": "e"}),
        "fitted": LogisticRegression().fit(X, y),
        "fitted_named": LinearRegression().fit(frame, y),
        "unfitted": LinearRegression(),
        "pipe": make_pipeline(StandardScaler(), LogisticRegression()).fit(X, y),
        "helper": lambda: None,
    }


def test_predict_on_an_unfitted_estimator(ns: dict[str, Any], messages: Checker) -> None:
    (message,) = messages("pred = unfitted.predict(X)", ns)
    assert message.startswith("NotFittedError") and "LinearRegression" in message
    with pytest.raises(ValueError):
        exec("pred = unfitted.predict(X)", ns)


def test_feature_count_mismatch(ns: dict[str, Any], messages: Checker) -> None:
    (message,) = messages("fitted.predict(X_wide)", ns)
    assert "X has 6 features, but LogisticRegression is expecting 4" in message
    with pytest.raises(ValueError, match="X has 6 features"):
        exec("fitted.predict(X_wide)", ns)


def test_feature_names_mismatch(ns: dict[str, Any], messages: Checker) -> None:
    (message,) = messages("fitted_named.predict(frame_renamed)", ns)
    assert "feature names" in message and "'e'" in message
    with pytest.raises(ValueError, match="feature names"):
        exec("fitted_named.predict(frame_renamed)", ns)


@pytest.mark.parametrize(
    "source",
    [
        "fitted.predict(X)",
        "fitted_named.predict(frame)",
        "unfitted.fit(X, y)\nunfitted.predict(X)",  # fitted earlier in the cell
        "unfitted = LinearRegression().fit(X, y)\nunfitted.predict(X)",
        "pipe.predict(X)",  # a fitted Pipeline keeps no fitted attribute of its own
        "X_wide = X\nfitted.predict(X_wide)",  # X_wide rebound in the cell
        "helper()\nfitted.predict(X_wide)",  # user code ran first
        "if X.shape[1] == 6:\n    fitted.predict(X_wide)",
        "try:\n    unfitted.predict(X)\nexcept ValueError:\n    pass",
        "fitted.predict(X_wide[:, :4])",  # a computed X: its shape is not the kernel's
    ],
)
def test_silent_when_not_certain(ns: dict[str, Any], source: str, messages: Checker) -> None:
    ns["LinearRegression"] = LinearRegression
    assert messages(source, ns) == []


@pytest.mark.parametrize(
    "source",
    [
        "from sklearn.preprocessing import StandardScaler\n"
        "scaler = StandardScaler()\nA = scaler.fit_transform(X)\nB = scaler.transform(X_wide)",
        "from sklearn.linear_model import LinearRegression\nm = LinearRegression()\nm.predict(X)",
        "from sklearn.linear_model import LinearRegression\nLinearRegression().predict(X)",
    ],
)
def test_estimators_built_in_the_cell(ns: dict[str, Any], source: str, messages: Checker) -> None:
    assert [f for f in messages(source, ns)] != []
    with pytest.raises(ValueError):
        exec(source, ns)


@pytest.mark.parametrize(
    "source",
    [
        "from sklearn.preprocessing import StandardScaler\n"
        "scaler = StandardScaler()\nA = scaler.fit_transform(X)\nB = scaler.transform(X)",
        "from sklearn.preprocessing import StandardScaler\n"
        "scaler = StandardScaler()\nA = scaler.fit_transform(X)\n"
        "scaler.fit(X_wide)\nB = scaler.transform(X_wide)",
        "from sklearn.linear_model import LinearRegression\n"
        "m = LinearRegression()\nm.fit(X, y)\nm.predict(X)",
        "from sklearn.pipeline import make_pipeline\nfrom sklearn.preprocessing import StandardScaler\n"
        "p = make_pipeline(StandardScaler())\np.fit(X)\np.transform(X)",
        "from sklearn.linear_model import LinearRegression\nm = LinearRegression()\nhelper()\nm.predict(X)",
    ],
)
def test_estimators_built_in_the_cell_silent_when_fine(
    ns: dict[str, Any], source: str, messages: Checker
) -> None:
    assert messages(source, ns) == []


def test_pipeline_checks_the_width_through_its_first_step(ns: dict[str, Any], messages: Checker) -> None:
    (message,) = messages("pipe.predict(X_wide)", ns)
    assert "X has 6 features" in message
    with pytest.raises(ValueError, match="features"):
        exec("pipe.predict(X_wide)", ns)
    from sklearn.compose import make_column_transformer

    ns["ct_pipe"] = make_pipeline(make_column_transformer(("passthrough", [0, 1])), LogisticRegression()).fit(
        ns["X"], ns["y"]
    )
    assert messages("ct_pipe.predict(X_wide)", ns) == []  # a ColumnTransformer picks its columns


def test_kernel_classes_are_traced_to_their_library(ns: dict[str, Any]) -> None:
    ns["LogisticRegression"] = LogisticRegression
    ns["X_nan"] = np.where(np.arange(160).reshape(40, 4) % 7 == 0, np.nan, 1.0)
    source = "clf = LogisticRegression().fit(X_nan, y)"
    plain = check(source, probe.run(source, {}, namespace=ns))
    with_docs = check(source, probe.run(source, {"docs": True}, namespace=ns))
    assert [f.rule for f in plain] == [f.rule for f in with_docs] == ["missing-values"]
    with pytest.raises(ValueError, match="NaN"):
        exec(source, ns)


def test_classes_of_the_notebook_or_its_helper_modules_are_not_trusted(ns: dict[str, Any]) -> None:
    class Imputing(LogisticRegression):  # defined outside the known libraries: may handle NaN itself
        pass

    ns["LogisticRegression"] = Imputing
    ns["X_nan"] = np.where(np.arange(160).reshape(40, 4) % 7 == 0, np.nan, 1.0)
    source = "clf = LogisticRegression().fit(X_nan, y)"
    assert check(source, probe.run(source, {}, namespace=ns)) == []
