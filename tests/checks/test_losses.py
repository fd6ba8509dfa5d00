"""torch losses given targets they refuse, and embeddings given indices past their table
(checks/rules/losses.py), on real objects through the real probe."""

from __future__ import annotations

from typing import Any

import pytest
from support import Checker


@pytest.fixture
def tns() -> dict[str, Any]:
    torch = pytest.importorskip("torch")
    nn = torch.nn
    torch.manual_seed(0)
    hooked = nn.Sequential(nn.Linear(6, 1), nn.Sigmoid())
    hooked.register_forward_hook(lambda module, args, out: out.squeeze(1))  # output (n,), not (n, 1)
    return {
        "torch": torch,
        "nn": nn,
        "F": nn.functional,
        "clf": nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 3)),
        "X": torch.randn(10, 5),
        "y_float": (torch.arange(10) % 3).float(),
        "y_long": torch.arange(10) % 3,
        "binary": nn.Sequential(nn.Linear(6, 1), nn.Sigmoid()),
        "hooked": hooked,
        "xb": torch.randn(8, 6),
        "yb": (torch.arange(8) % 2).float(),
        "bce": nn.BCELoss(),
        "emb": nn.Embedding(9, 4),
        "ids": torch.tensor([[1, 9], [2, 3]]),
        "float_loader": torch.utils.data.DataLoader(
            torch.utils.data.TensorDataset(torch.randn(10, 5), (torch.arange(10) % 3).float()), batch_size=4
        ),
        "big_ids": torch.cat([torch.zeros(400_000, dtype=torch.long), torch.tensor([50])]),
    }


@pytest.mark.parametrize(
    ("source", "rule", "error"),
    [
        ("loss = nn.CrossEntropyLoss()(clf(X), y_float)", "loss-target", RuntimeError),
        ("logits = clf(X)\nF.nll_loss(F.log_softmax(logits, 1), y_float)", "loss-target", RuntimeError),
        ("criterion = nn.CrossEntropyLoss(weight=torch.ones(3))\ncriterion(clf(X), y_float)", "loss-target",
         RuntimeError),
        ("loss = F.cross_entropy(clf(X), F.one_hot(y_long, 3))", "loss-target", RuntimeError),
        ("loss = bce(binary(xb), yb)", "loss-target", ValueError),
        ("loss = F.binary_cross_entropy_with_logits(binary(xb), yb.unsqueeze(1).long())", "loss-target",
         RuntimeError),
        ("p = torch.softmax(clf(X), dim=1)\nF.nll_loss(p.log(), y_float)", "loss-target", RuntimeError),
        ("p = torch.softmax(clf(X), dim=1)\nF.nll_loss(torch.log(p + 1e-9), y_float)", None, RuntimeError),
        ("vectors = emb(ids)", "embedding-index", IndexError),
        ("for xb, yb in float_loader:\n    loss = F.cross_entropy(clf(xb), yb)", "loss-target", RuntimeError),
        ("if len(X) > 0:\n    for xb, yb in float_loader:\n        nn.NLLLoss()(clf(xb), yb)", "loss-target",
         RuntimeError),
    ],
)  # fmt: skip
def test_crashes(
    tns: dict[str, Any], source: str, rule: str | None, error: type[Exception], rules: Checker
) -> None:
    """A rule of None: a crash the checks cannot derive yet (a value they do not follow)."""
    assert rules(source, tns) == ([rule] if rule else [])
    with pytest.raises(error):
        exec(source, tns)


@pytest.mark.parametrize(
    "source",
    [
        "loss = nn.CrossEntropyLoss()(clf(X), y_long)",
        "loss = F.cross_entropy(clf(X), torch.softmax(clf(X), 1).detach())",
        "loss = bce(binary(xb), yb.unsqueeze(1))",
        "loss = bce(hooked(xb), yb)",  # a forward hook reshapes the output: not judged
        "loss = F.mse_loss(binary(xb), yb)",  # broadcasts with a warning
        "vectors = emb(ids.clamp(0, 8))",
        "for xb, yb in float_loader:\n    loss = F.cross_entropy(clf(xb), yb.long())",
        "for xb, yb in float_loader:\n    loss = F.mse_loss(clf(xb)[:, 0], yb)",
        "vectors = nn.Embedding(10, 4)(ids)",
        "try:\n    emb(ids)\nexcept IndexError:\n    pass",
    ],
)
def test_silent_when_fine(tns: dict[str, Any], source: str, rules: Checker) -> None:
    assert rules(source, tns) == []
    exec(source, tns)


def test_a_sampled_tensor_is_judged_on_what_was_seen(tns: dict[str, Any], rules: Checker) -> None:
    """400,001 indices are more than the probe scans: the 50 at the end may be out of its sample, so the
    rule may stay silent, but it never claims what it did not see."""
    found = rules("emb(big_ids)", tns)
    assert found in ([], ["embedding-index"])
    with pytest.raises(IndexError):
        exec("emb(big_ids)", tns)
