"""rules/devices on generated variants, each one executed.

Every crashing variant must be found by its rule AND raise the exception the finding names when it runs;
every fine variant must run AND leave the rule silent. On the CPU the device paths run with the `meta`
device standing for a GPU: torch raises "Tensor on device ... is not on the expected device ..." for cpu
vs meta in module calls (Linear, recurrent layers, norms), cat/stack, elementwise operators and losses,
which proves that torch checks devices at those calls and that the rule finds the calls; it does not
prove what CUDA raises (convolution, embedding, matmul and indexing accept meta beside cpu, so their
variants are CUDA-only). The same generator runs on a real GPU with `cuda` in place of `meta` in
test_devices_cuda (marked `cuda`, skipped without one).
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from crane_jupyterlab.checks.cell import parse_cell
from crane_jupyterlab.checks.core import cell_context
from crane_jupyterlab.checks.rules import devices
from crane_jupyterlab.checks.view import from_probe
from crane_jupyterlab.kernel import probe

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")
nn = torch.nn


def world(other: str) -> dict[str, Any]:
    """A fresh kernel namespace: tensors and models on the CPU and on `other` (meta here, cuda on a GPU)."""
    from sklearn.metrics import accuracy_score
    from sklearn.preprocessing import StandardScaler
    from torch.utils.data import DataLoader, SequentialSampler, TensorDataset

    torch.manual_seed(0)
    X = torch.randn(16, 4)
    y = torch.arange(16) % 3
    y_bad = y.clone()
    y_bad[-1] = 5  # one label past the 3 outputs, in the last batch
    seq = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    deep = nn.Sequential(
        nn.Flatten(), nn.Dropout(0.1), nn.Sequential(nn.Linear(4, 6), nn.ReLU()), nn.Linear(6, 3)
    )
    ns: dict[str, Any] = {
        "torch": torch,
        "nn": nn,
        "F": nn.functional,
        "np": np,
        "accuracy_score": accuracy_score,
        "X": X,
        "y": y,
        "y_bad": y_bad,
        "Xd": X.double(),
        "Xh": X.half(),
        "W": torch.randn(4, 2),
        "Wd": torch.randn(4, 2, dtype=torch.float64),
        "img": torch.randn(2, 1, 6, 6),
        "conv": nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU()),
        "seq": seq,
        "deep": deep,
        "seq_nll": nn.Sequential(nn.Linear(4, 3), nn.LogSoftmax(dim=1)),
        "lstm": nn.LSTM(4, 5, batch_first=True),
        "bn": nn.Sequential(nn.BatchNorm1d(4), nn.Linear(4, 3)),
        "ln": nn.LayerNorm(4),
        "emb": nn.Embedding(10, 3),
        "ids": torch.tensor([1, 2, 3]),
        "crit": nn.CrossEntropyLoss(),
        "nll": nn.NLLLoss(),
        "mse": nn.MSELoss(),
        "crit_ignore": nn.CrossEntropyLoss(ignore_index=5),
        "g": torch.randn(6, requires_grad=True),
        "gX": torch.randn(6, 4, requires_grad=True),
        "scaler": StandardScaler(),
        "y6": torch.arange(6) % 2,
        "loader": DataLoader(TensorDataset(X, y), batch_size=4, shuffle=True),
        "loader_bad": DataLoader(TensorDataset(X, y_bad), batch_size=4, shuffle=True),
        "loader_bad_seq": DataLoader(TensorDataset(X, y_bad), batch_size=4, sampler=SequentialSampler(X)),
        "helper": lambda: None,
        "dev": torch.device(other),
    }
    ns.update(
        Xb=X.to(other),
        yb=y.to(other),
        y_bad_b=y_bad.to(other),
        seq_b=_copy(seq).to(other),
        lstm_b=_copy(ns["lstm"]).to(other),
        bn_b=_copy(ns["bn"]).to(other),
        ln_b=_copy(ns["ln"]).to(other),
        conv_b=_copy(ns["conv"]).to(other),
        emb_b=_copy(ns["emb"]).to(other),
    )
    return ns


def _copy(module: Any) -> Any:
    import copy

    return copy.deepcopy(module)


def found(source: str, ns: dict[str, Any], *, gpu: tuple[str, ...] = ()) -> list[Any]:
    """The devices rule's findings for `source` against `ns`, through the real probe. `gpu`: names whose
    device facts are rewritten to cuda:0 (the facts a GPU kernel would report), for CUDA-only logic."""
    result = probe.run(source, {"budget_ms": 60_000}, ns)  # facts complete however busy the machine
    json.dumps(result, allow_nan=False)
    for name in gpu:
        for entry in _entries(result["objects"]):
            if entry["expr"] == name or entry["expr"].startswith(name + "."):
                for fact in entry["facts"]:
                    if fact["key"] in ("device", "param_device"):
                        fact["value"] = "cuda:0"
    tree, _ = parse_cell(source)
    assert tree is not None
    view = from_probe(result)
    ctx = cell_context(source, tree, view)
    return list(devices.check(ctx))


def _entries(entries: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for e in entries:
        yield e
        yield from _entries(e["children"])


def outcome(source: str, ns: dict[str, Any]) -> str | None:
    """The exception `source` raises, if any; autograd's global switch is restored after it."""
    grad = torch.is_grad_enabled()
    try:
        exec(source, ns)
    except Exception as exc:
        return type(exc).__name__
    finally:
        torch.set_grad_enabled(grad)
    return None


# ----- the variants --------------------------------------------------------------------------------


def contexts(snippet: str) -> list[str]:
    """One crashing snippet, placed where it certainly runs."""
    inner = textwrap.indent(snippet, "    ")
    return [
        snippet,
        f"n_epochs = 3\n{snippet}",
        f"with torch.no_grad():\n{inner}",
        f"for _ in range(2):\n{inner}",
        f"try:\n{inner}\nexcept ValueError:\n    pass",
    ]


DEVICE_LINES = [
    "out = seq_b(X)",
    "out = seq(Xb)",
    "out = lstm_b(X.unsqueeze(1))",
    "out = lstm(Xb.unsqueeze(1))",
    "out = bn_b(X)",
    "out = bn(Xb)",
    "out = ln_b(X)",
    "out = ln(Xb)",
    "out = seq_b[0](X)",
    "z = torch.cat([X, Xb])",
    "z = torch.stack([Xb, X])",
    "z = X + Xb",
    "z = Xb * X",
    "z = X - Xb.T.T",
    "z = torch.add(X, Xb)",
    "z = X.add(Xb)",
    "loss = crit(seq(X), yb)",
    "loss = crit(seq_b(Xb), y)",
    "loss = F.cross_entropy(seq(X), yb)",
    "loss = mse(X, Xb)",
    "loss = F.mse_loss(Xb, X)",
    "a = X.float()\nz = seq_b(a)",
    "x2 = X * 2\nz = seq_b(x2)",
    "xb = X[:4]\nout = seq_b(xb)",
    "seq.to(dev)\nout = seq(X)",
    "model = seq_b\nout = model(X)",
    "for xb, yb in loader:\n    out = seq_b(xb)",
    "for i, (xb, yb) in enumerate(loader):\n    out = seq_b(xb)",
    "for batch in loader:\n    xb, yb = batch\n    out = seq_b(xb)",
]
DEVICE_FINE = [
    "out = seq(X)",
    "out = seq_b(Xb)",
    "out = seq_b(X.to(dev))",
    "out = seq(Xb.to('cpu')) if False else None",
    "z = torch.cat([X, X])",
    "z = torch.cat([X.to(dev), Xb])",
    "z = Xb + Xb",
    "z = Xb * torch.tensor(2.0)",
    "z = Xb + X.sum()",
    "loss = crit(seq(X), y)",
    "loss = crit(seq_b(Xb), yb)",
    "loss = crit(seq_b(Xb), y.to(dev))",
    "out = lstm_b(Xb.unsqueeze(1))",
    "out = ln(X)",
    "seq.to(dev)\nout = seq(Xb)",
    "seq_b.to('meta')\nout = seq_b(Xb)",
    "try:\n    z = X + Xb\nexcept RuntimeError:\n    z = None",
    "try:\n    z = seq_b(X)\nexcept Exception:\n    z = None",
    "if X.shape[0] > 100:\n    z = X + Xb",
    "for xb, yb in loader:\n    out = seq_b(xb.to(dev))",
    "for xb, yb in loader:\n    xb = xb.to(dev)\n    out = seq_b(xb)",
    "for xb, yb in loader:\n    out = seq(xb)\n    loss = crit(out, yb)",
    "X = Xb\nz = seq_b(X)",
    "def f(t):\n    return seq_b(t)\nz = f(Xb)",
]
DTYPE_LINES = [
    "out = seq(X.half())",
    "out = seq(X.double())",
    "out = seq(X.bfloat16())",
    "out = seq(X.long())",
    "out = seq(Xd)",
    "out = seq(Xh)",
    "out = deep(Xd)",
    "out = deep(X.half())",
    "out = conv(img.half())",
    "out = conv(img.double())",
    "out = lstm(X.unsqueeze(1).double())",
    "out = lstm(Xh.unsqueeze(1))",
    "out = emb(ids.float())",
    "out = emb(ids.double())",
    "z = X.half() @ W",
    "z = Xd @ W",
    "z = torch.matmul(X, Wd)",
    "z = X.mm(Wd)",
    "z = torch.mm(Xh, W)",
    "z = X.matmul(W.double())",
    "x16 = X.to(torch.float16)\nout = seq(x16)",
    "seq.double()\nout = seq(X)",
    "x = X.to(dtype=torch.float64)\nout = seq(x)",
]
DTYPE_FINE = [
    "out = seq(X)",
    "out = seq(X.half().float())",
    "seq.double()\nout = seq(X.double())",
    "out = seq(Xd.float())",
    "with torch.autocast('cpu', dtype=torch.bfloat16):\n    out = seq(X.bfloat16())",
    "out = emb(ids)",
    "out = emb(ids.int())",
    "z = X @ W",
    "z = Xd @ Wd",
    "z = torch.matmul(Xd, Wd)",
    "z = X.half().float() @ W",
    "out = lstm(X.unsqueeze(1))",
    "out = conv(img)",
    "out = seq(X.to(torch.float32))",
    "out = seq(Xd.to(dtype=torch.float32))",
    "out = deep(X)",
    "z = X.mm(Wd.float())",
    "z = Xd @ W if False else None",
    "try:\n    out = seq(Xd)\nexcept RuntimeError:\n    out = None",
    "lstm.double()\nout = lstm(Xd.unsqueeze(1))",
    "out = conv(img.double().float())",
    "out = seq_nll(X)",
    "z = (X + Xd).float() @ W",
]
NUMPY_LINES = [
    "a = g.numpy()",
    "a = np.asarray(g)",
    "a = np.array(g)",
    "a = np.unique(g)",
    "a = np.concatenate([g, g])",
    "a = np.sqrt(g)",
    "a = np.argmax(g)",
    "a = np.histogram(g)",
    "a = (g * 2).numpy()",
    "a = g.cpu().numpy()",
    "a = g[:3].numpy()",
    "a = seq(gX).numpy()",
    "a = np.asarray(seq(X))",
    "acc = accuracy_score(y6, g)",
    "scaler.fit(gX)",
    "a = Xb.numpy()",
    "a = np.asarray(Xb)",
    "a = np.array(Xb)",
    "a = np.unique(Xb)",
    "a = np.histogram(Xb)",
    "a = seq_b(Xb).numpy()",
    "a = np.stack([X, Xb])",
    "acc = accuracy_score(yb, yb)",
    "a = Xb.T.numpy()",
]
NUMPY_FINE = [
    "a = g.detach().numpy()",
    "with torch.no_grad():\n    a = g.numpy()",
    "a = np.asarray(g.detach())",
    "a = X.numpy()",
    "a = np.asarray(X)",
    "a = g.tolist()",
    "a = g.detach().cpu().numpy()",
    "torch.set_grad_enabled(False)\na = g.numpy()",
    "a = np.asarray(g.data)",
    "a = np.asarray(Xb.shape)",
    "with torch.no_grad():\n    a = seq(gX).numpy()",
    "a = seq(X).detach().numpy()",
    "a = np.unique(y)",
    "acc = accuracy_score(y, y)",
    "scaler.fit(gX.detach())",
    "a = np.concatenate([X, X])",
    "try:\n    a = g.numpy()\nexcept RuntimeError:\n    a = None",
    "if g.sum() > 1e9:\n    a = g.numpy()",
    "a = g.argmax().numpy()",
    "with torch.inference_mode():\n    a = np.sqrt(g)",
    "a = (g * 2).detach().numpy()",
    "a = np.histogram(X)",
]
LABEL_LINES = [
    "for xb, yb in loader_bad:\n    loss = crit(seq(xb), yb)",
    "for xb, yb in loader_bad:\n    loss = F.cross_entropy(seq(xb), yb)",
    "for i, (xb, yb) in enumerate(loader_bad):\n    loss = crit(seq(xb), yb)\n    loss.backward()",
    "for epoch in range(2):\n    for xb, yb in loader_bad:\n        loss = crit(seq(xb), yb)",
    "opt = torch.optim.SGD(seq.parameters(), lr=0.1)\nfor xb, yb in loader_bad:\n    opt.zero_grad()\n"
    "    loss = crit(seq(xb), yb)\n    loss.backward()\n    opt.step()",
    "for xb, yb in loader_bad_seq:\n    out = seq(xb)\n    loss = crit(out, yb)",
    "for xb, yb in loader_bad:\n    loss = nll(seq_nll(xb), yb)",
    "for xb, yb in loader_bad:\n    loss = F.nll_loss(seq_nll(xb), yb)",
    "for batch in loader_bad:\n    xb, yb = batch\n    loss = crit(seq(xb), yb)",
    "loss = crit(seq(X), y_bad)",
    "loss = F.cross_entropy(seq(X), y_bad)",
    "loss = nll(seq_nll(X), y_bad)",
    "out = seq(X)\nloss = crit(out, y_bad)",
    "t = y_bad.long()\nloss = crit(seq(X), t)",
    "loss = nn.CrossEntropyLoss()(seq(X), y_bad)",
    "criterion = nn.CrossEntropyLoss()\nloss = criterion(seq(X), y_bad)",
    "with torch.no_grad():\n    loss = crit(seq(X), y_bad)",
    "loss = crit(deep(X), y_bad)",
    "for xb, yb in loader_bad:\n    xb, yb = xb.float(), yb.long()\n    loss = crit(seq(xb), yb)",
    "seq.train()\nfor xb, yb in loader_bad:\n    loss = crit(seq(xb), yb)",
]
LABEL_FINE = [
    "for xb, yb in loader:\n    loss = crit(seq(xb), yb)",
    "loss = crit(seq(X), y)",
    "loss = crit_ignore(seq(X), y_bad)",
    "loss = F.cross_entropy(seq(X), y_bad, ignore_index=5)",
    "for xb, yb in loader_bad_seq:\n    loss = crit(seq(xb), yb)\n    break",
    "for xb, yb in loader_bad:\n    loss = crit(seq(xb), yb.clamp(max=2))",
    "loss = crit(seq(X), y_bad % 3)",
    "loss = crit(seq(X), y_bad.clamp(0, 2))",
    "for xb, yb in loader:\n    loss = F.cross_entropy(seq(xb), yb)",
    "loss = nll(seq_nll(X), y)",
    "for i, (xb, yb) in enumerate(loader):\n    loss = crit(seq(xb), yb)",
    "loss = crit(deep(X), y)",
    "if y_bad.max() < 3:\n    loss = crit(seq(X), y_bad)",
    "loss = mse(seq(X), torch.zeros(16, 3))",
    "try:\n    loss = crit(seq(X), y_bad)\nexcept IndexError:\n    loss = None",
    "loss = nn.CrossEntropyLoss(ignore_index=5)(seq(X), y_bad)",
    "loss = crit(seq(X), torch.zeros(16).long())",
    "for xb, yb in loader_bad_seq:\n    if yb.max() > 2:\n        break\n    loss = crit(seq(xb), yb)",
    "y_ok = y_bad.clone()\ny_ok[-1] = 0\nloss = crit(seq(X), y_ok)",
    "loss = crit(seq(X[:15]), y_bad[:15])",
]


def _variants(lines: list[str]) -> list[str]:
    return [v for line in lines for v in contexts(line)]


CASES: dict[str, tuple[list[str], list[str]]] = {
    devices.RULE_DEVICE: (_variants(DEVICE_LINES), DEVICE_FINE),
    devices.RULE_DTYPE: (DTYPE_LINES + [f"n = 1\n{line}" for line in DTYPE_LINES], DTYPE_FINE),
    devices.RULE_NUMPY: (NUMPY_LINES, NUMPY_FINE),
    devices.RULE_LABELS: (LABEL_LINES, LABEL_FINE),
}


def test_every_rule_has_enough_variants() -> None:
    for rule, (crashing, fine) in CASES.items():
        assert len(crashing) >= 20 and len(fine) >= 20, rule


@pytest.fixture
def meta_as_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    # every judged device lives in devices/values.py; `differ` and `off_cpu` read it there
    monkeypatch.setattr(devices.values, "JUDGED_DEVICES", frozenset({"cpu", "cuda", "meta"}))


def _check_crash(rule: str, source: str, make: Callable[[], dict[str, Any]]) -> None:
    ns = make()
    findings = [f for f in found(source, ns) if f.rule == rule]
    assert findings, f"{rule} missed:\n{source}"
    raised = outcome(source, make())
    claimed = findings[0].message.split(":", 1)[0]
    assert raised is not None, f"claimed {claimed} but it ran:\n{source}"
    assert raised == claimed or (claimed == "AcceleratorError" and raised == "AcceleratorError"), (
        raised,
        source,
    )


def _check_fine(rule: str, source: str, make: Callable[[], dict[str, Any]]) -> None:
    ns = make()
    assert [f.message for f in found(source, ns) if f.rule == rule] == [], source
    assert outcome(source, make()) is None, f"a fine variant crashed:\n{source}"


@pytest.mark.parametrize("source", CASES[devices.RULE_DEVICE][0])
def test_device_crashes(source: str, meta_as_gpu: None) -> None:
    _check_crash(devices.RULE_DEVICE, source, lambda: world("meta"))


@pytest.mark.parametrize("source", CASES[devices.RULE_DEVICE][1])
def test_device_fine(source: str, meta_as_gpu: None) -> None:
    _check_fine(devices.RULE_DEVICE, source, lambda: world("meta"))


@pytest.mark.parametrize("source", CASES[devices.RULE_DTYPE][0])
def test_dtype_crashes(source: str) -> None:
    _check_crash(devices.RULE_DTYPE, source, lambda: world("meta"))


@pytest.mark.parametrize("source", CASES[devices.RULE_DTYPE][1])
def test_dtype_fine(source: str) -> None:
    _check_fine(devices.RULE_DTYPE, source, lambda: world("meta"))


@pytest.mark.parametrize("source", CASES[devices.RULE_NUMPY][0])
def test_numpy_crashes(source: str, meta_as_gpu: None) -> None:
    _check_crash(devices.RULE_NUMPY, source, lambda: world("meta"))


@pytest.mark.parametrize("source", CASES[devices.RULE_NUMPY][1])
def test_numpy_fine(source: str, meta_as_gpu: None) -> None:
    _check_fine(devices.RULE_NUMPY, source, lambda: world("meta"))


@pytest.mark.parametrize("source", CASES[devices.RULE_LABELS][0])
def test_label_crashes_on_cpu(source: str) -> None:
    _check_crash(devices.RULE_LABELS, source, lambda: world("meta"))


@pytest.mark.parametrize("source", CASES[devices.RULE_LABELS][1])
def test_label_fine_on_cpu(source: str) -> None:
    _check_fine(devices.RULE_LABELS, source, lambda: world("meta"))


# ----- what only facts can show here -----------------------------------------------------------------


def test_meta_is_not_judged_in_production() -> None:
    """Convolution, embedding, matmul and indexing accept meta beside cpu: meta is never a GPU for real."""
    ns = world("meta")
    for source in ("out = seq_b(X)", "z = X @ Xb.T", "z = X[yb]", "a = Xb.numpy()"):
        assert found(source, ns) == [], source


CUDA_ONLY = [
    ("out = conv_b(img)", "RuntimeError"),
    ("out = conv(img.to(dev))", "RuntimeError"),
    ("out = emb_b(ids)", "RuntimeError"),
    ("z = X @ Xb.T", "RuntimeError"),
    ("z = torch.matmul(Xb, W)", "RuntimeError"),
    ("z = X[yb]", "RuntimeError"),
    ("z = X[yb > 0]", "RuntimeError"),
]


@pytest.mark.parametrize(("source", "error"), CUDA_ONLY)
def test_cuda_only_paths_on_gpu_facts(source: str, error: str) -> None:
    """These crash on CUDA only: the rule is checked on the facts a GPU kernel reports (devices rewritten
    to cuda:0); test_devices_cuda runs them on a GPU."""
    names = ("Xb", "yb", "conv_b", "emb_b", "dev")
    findings = found(source, world("meta"), gpu=names)
    assert [f.message.split(":", 1)[0] for f in findings] == [error], source


@pytest.mark.parametrize(
    "source",
    [
        "z = Xb[y]",  # a CUDA tensor indexed by CPU indices: allowed
        "out = emb(ids.to(dev))",  # CPU weights, CUDA indices: not judged (not seen to crash)
        "z = Xb @ Xb.T",
    ],
)
def test_cuda_only_paths_silent_where_torch_allows(source: str) -> None:
    assert found(source, world("meta"), gpu=("Xb", "yb", "dev")) == [], source


# CPU objects whose facts are rewritten to cuda:0 (a GPU kernel's): values are read from the CPU copies.
ON_GPU = ("X", "y_bad", "seq", "dev")
SYNC_AFTER = [
    ("loss = crit(seq(X), y_bad)\nprint(loss.item())", 2),
    ("loss = crit(seq(X), y_bad)\nloss.backward()\ntotal = loss.item()", 3),
    (
        "for xb, yb in loader_bad:\n    xb, yb = xb.to(dev), yb.to(dev)\n    loss = crit(seq(xb), yb)\n"
        "    running = loss.item()",
        4,
    ),
    ("loss = F.cross_entropy(seq(X), y_bad)\nvalue = float(loss)", 2),
    ("loss = crit(seq(X), y_bad)\ntorch.cuda.synchronize()", 2),
    ("loss = crit(seq(X), y_bad)\nprint(loss)", 2),
    ("out = seq(X)\nloss = crit(out, y_bad)\nacc = (out.argmax(1) == y_bad).float().mean().item()", 3),
    (
        "for epoch in range(3):\n    for xb, yb in loader_bad:\n"
        "        loss = crit(seq(xb.to(dev)), yb.to(dev))\n"
        "        loss.backward()\n        total = loss.item()",
        5,
    ),
    ("loss = crit(seq(X), y_bad)\nif len(X) > 0:\n    print(loss.item())", 3),  # a branch the runtime decides
]


@pytest.mark.parametrize(("source", "line"), SYNC_AFTER)
def test_cuda_label_assert_surfaces_at_the_next_sync(source: str, line: int) -> None:
    findings = found(source, world("meta"), gpu=ON_GPU)
    assert [(f.rule, f.line) for f in findings] == [(devices.RULE_LABELS, line)], source
    assert findings[0].message.startswith("AcceleratorError: CUDA error: device-side assert triggered")


@pytest.mark.parametrize(
    "source",
    [
        "loss = crit(seq(X), y_bad)",  # nothing waits for the GPU in this cell
        "loss = crit(seq(X), y_bad)\nloss.backward()",
        "import random\nloss = crit(seq(X), y_bad)\nif random.random() > 0.5:\n    print(loss.item())",
        "loss = crit(seq(X), y_bad)\nif len(X) > 10**6:\n    print(loss.item())",
        "for xb, yb in loader_bad:\n    loss = crit(seq(xb.to(dev)), yb.to(dev))\n"
        "    print(loss.item())\n    break",
        "loss = crit(seq(X), y_bad % 3)\nprint(loss.item())",
        "loss = crit(seq(X), y_bad)\ntry:\n    print(loss.item())\nexcept RuntimeError:\n    pass",
    ],
)
def test_cuda_label_assert_without_a_certain_sync_is_not_claimed(source: str) -> None:
    assert found(source, world("meta"), gpu=ON_GPU) == [], source


def test_custom_forward_is_not_trusted(meta_as_gpu: None) -> None:
    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(4, 3)

        def forward(self, x: Any) -> Any:
            return self.fc(x.to(self.fc.weight.device))  # a forward may move its input

    ns = world("meta")
    ns["net"] = Net().to("meta")
    assert found("out = net(X)", ns) == []
    assert outcome("out = net(X)", ns) is None


def test_a_pre_hook_makes_a_sequential_untrusted(meta_as_gpu: None) -> None:
    ns = world("meta")
    ns["seq_b"].register_forward_pre_hook(lambda module, args: tuple(a.to("meta") for a in args))
    assert found("out = seq_b(X)", ns) == []
    assert outcome("out = seq_b(X)", ns) is None


def test_an_alias_moved_in_place_leaves_every_module_unknown(meta_as_gpu: None) -> None:
    ns = world("meta")
    ns["same"] = ns["seq"]
    assert found("same.to(dev)\nout = seq(Xb)", ns) == []
    assert outcome("same.to(dev)\nout = seq(Xb)", ns) is None


def test_sklearn_with_array_api_dispatch_is_not_judged(
    monkeypatch: pytest.MonkeyPatch, meta_as_gpu: None
) -> None:
    """With array API dispatch on, scikit-learn takes tensors as they are (it needs array-api-compat and
    SCIPY_ARRAY_API=1 to switch on, so the probe's fact is set here)."""
    from crane_jupyterlab.kernel.probe import libraries

    ns = world("meta")
    assert [f.rule for f in found("acc = accuracy_score(y6, g)", ns)] == [devices.RULE_NUMPY]
    monkeypatch.setattr(
        libraries, "_sklearn_facts", lambda: [{"cat": "R", "key": "array_api_dispatch", "value": True}]
    )
    assert found("acc = accuracy_score(y6, g)", ns) == []
    monkeypatch.setattr(libraries, "_sklearn_facts", lambda: [])
    assert found("acc = accuracy_score(y6, g)", ns) == []  # not known: not judged
