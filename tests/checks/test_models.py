"""torch and Keras model rules on real models through the real probe."""

from __future__ import annotations

from typing import Any

import pytest
from support import Checker

np = pytest.importorskip("numpy")


# ----- torch ------------------------------------------------------------------------------------------


@pytest.fixture
def tns() -> dict[str, Any]:
    torch = pytest.importorskip("torch")
    nn = torch.nn
    torch.manual_seed(0)
    return {
        "torch": torch,
        "nn": nn,
        "F": nn.functional,
        "model": nn.Sequential(nn.Linear(16, 8), nn.ReLU(), nn.Linear(8, 5)),
        "cnn": nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU()),
        "X": torch.randn(20, 16),
        "X_wide": torch.randn(20, 12),
        "X_double": torch.randn(20, 16, dtype=torch.float64),
        "imgs": torch.randn(2, 1, 8, 8),
        "y_bad": torch.arange(20) % 6,  # labels 0..5 for 5 outputs
        "y_ok": torch.arange(20) % 5,
        "criterion": nn.CrossEntropyLoss(),
        "helper": lambda: None,
    }


@pytest.mark.parametrize(
    ("source", "error"),
    [
        ("out = model(X_wide)", RuntimeError),
        ("out = model(X_double)", RuntimeError),
        ("out = model(X_wide.double())", RuntimeError),  # the cell's cast is followed exactly
        ("out = cnn(imgs)", RuntimeError),
        ("loss = criterion(model(X), y_bad)", IndexError),
        ("for step in range(3):\n    loss = F.cross_entropy(model(X), y_bad)", IndexError),
    ],
)
def test_torch_crashes(tns: dict[str, Any], source: str, error: type[Exception], rules: Checker) -> None:
    assert rules(source, tns) == ["shape-mismatch"]
    with pytest.raises(error):
        exec(source, tns)


@pytest.mark.parametrize(
    "source",
    [
        "out = model(X)",
        "loss = criterion(model(X), y_ok)",
        "out = model(X.double().float())",  # derived in the cell: not the kernel's X
        "model = nn.Sequential(nn.Linear(12, 2))\nout = model(X_wide)",  # rebuilt in the cell
        "helper()\nout = model(X_wide)",
        "loss = F.cross_entropy(model(X), y_bad, ignore_index=5)",
        "for step in range(0):\n    out = model(X_wide)",
        "with torch.autocast('cpu'):\n    out = model(X_double)",
    ],
)
def test_torch_silent_when_not_certain(tns: dict[str, Any], source: str, rules: Checker) -> None:
    assert rules(source, tns) == []


def test_numpy_of_an_output_that_requires_grad(tns: dict[str, Any], rules: Checker) -> None:
    source = "probs = torch.softmax(model(X), dim=1).numpy()"
    assert rules(source, tns) == ["shape-mismatch"]
    with pytest.raises(RuntimeError, match="requires grad"):
        exec(source, tns)
    for fine in (
        "probs = torch.softmax(model(X), dim=1).detach().numpy()",
        "with torch.no_grad():\n    probs = model(X).numpy()",
        "torch.set_grad_enabled(False)\nprobs = model(X).numpy()",
        "probs = model(X).argmax(1).numpy()",
    ):
        assert rules(fine, tns) == [], fine


def test_custom_forward_is_not_judged(tns: dict[str, Any], rules: Checker) -> None:
    nn = tns["nn"]

    class Net(nn.Module):  # its forward could reshape before the first layer
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(16, 5)

        def forward(self, x: Any) -> Any:
            return self.fc(x[:, :16])

    tns["net"] = Net()
    assert rules("out = net(X_wide)", tns) == []


# ----- Keras --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def keras() -> Any:
    return pytest.importorskip("keras")


@pytest.fixture
def kns(keras: Any) -> dict[str, Any]:
    rng = np.random.default_rng(0)
    model = keras.Sequential([keras.Input(shape=(12,)), keras.layers.Dense(8), keras.layers.Dense(3)])
    model.compile(optimizer="adam", loss="categorical_crossentropy")
    return {
        "model": model,
        "X": rng.normal(size=(30, 12)).astype("float32"),
        "X10": rng.normal(size=(30, 10)).astype("float32"),
        "y_onehot": np.eye(3)[rng.integers(0, 3, 30)],
        "y_int": rng.integers(0, 3, 30),
        "y_short": np.eye(3)[rng.integers(0, 3, 20)],
    }


@pytest.mark.parametrize(
    "source",
    [
        "model.predict(X10, verbose=0)",
        "model.fit(X, y_int, epochs=1, verbose=0)",  # integer labels with categorical_crossentropy
        "model.fit(X, y_short, epochs=1, verbose=0)",
    ],
)
def test_keras_crashes(kns: dict[str, Any], source: str, rules: Checker) -> None:
    assert rules(source, kns) == ["shape-mismatch"]
    with pytest.raises(ValueError):
        exec(source, kns)


@pytest.mark.parametrize(
    "source",
    [
        "model.fit(X, y_onehot, epochs=1, verbose=0)",
        "model.predict(X, verbose=0)",
        "model.predict(X10[:, :12])",
    ],
)
def test_keras_silent_when_fine(kns: dict[str, Any], source: str, rules: Checker) -> None:
    assert rules(source, kns) == []
