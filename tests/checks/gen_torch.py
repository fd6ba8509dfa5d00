"""Variants of torch crash classes (shapes only; devices and dtypes are checks/rules/devices'):
inputs a first Linear/Conv layer cannot take, class indices past the model's outputs, views of the
wrong size, positions past a dimension, numpy() of an output that requires grad."""

from __future__ import annotations

from variants import Spec, State

COMMON = (
    "import numpy as np\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
    "torch.manual_seed(0)"
)
NAMINGS = [
    {"m": "model", "X": "X", "y": "y", "n": "32"},
    {"m": "net", "X": "xb", "y": "labels", "n": "8"},
    {"m": "classifier", "X": "inputs", "y": "targets", "n": "256"},
]

SPECS = [
    Spec(
        rule="shape-mismatch",
        generator="torch-linear-input",
        common=COMMON,
        states=[
            State(
                "wider",
                "$m = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 3))\n$X = "
                "torch.randn($n, 12)",
                crash=True,
            ),
            State(
                "one-hot-added", "$m = nn.Sequential(nn.Linear(8, 4))\n$X = torch.randn($n, 11)", crash=True
            ),
            State("layer", "$m = nn.Linear(20, 2)\n$X = torch.randn($n, 19)", crash=True),
            State(
                "fits",
                "$m = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 3))\n$X = "
                "torch.randn($n, 10)",
                crash=False,
            ),
            State("fits-layer", "$m = nn.Linear(20, 2)\n$X = torch.randn($n, 20)", crash=False),
        ],
        forms=[
            "$m($X)",
            "out = $m($X)\nout.shape",
            "with torch.no_grad():\n    preds = $m($X).argmax(dim=1)",
            "logits = $m($X.float())",
            "$m.eval()\nprobs = torch.softmax($m($X), dim=1)",
        ],
        namings=NAMINGS,
    ),
    Spec(
        rule="shape-mismatch",
        generator="torch-from-numpy-input",
        common=COMMON,
        states=[
            State(
                "wider",
                "$m = nn.Sequential(nn.Linear(6, 4), nn.ReLU(), nn.Linear(4, 2))\nfeatures = "
                "np.random.default_rng(0).normal(size=($n, 7)).astype('float32')",
                crash=True,
            ),
            State(
                "fits",
                "$m = nn.Sequential(nn.Linear(6, 4), nn.ReLU(), nn.Linear(4, 2))\nfeatures = "
                "np.random.default_rng(0).normal(size=($n, 6)).astype('float32')",
                crash=False,
            ),
        ],
        forms=[
            "$X = torch.from_numpy(features)\n$m($X)",
            "$X = torch.tensor(features)\nout = $m($X)",
            "$m(torch.tensor(features, dtype=torch.float32))",
            "$X = torch.FloatTensor(features)\n$m($X).shape",
        ],
        namings=NAMINGS,
    ),
    Spec(
        rule="shape-mismatch",
        generator="torch-conv-channels",
        common=COMMON,
        states=[
            State(
                "gray-to-rgb-conv",
                "$m = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU())\n$X = torch.randn(4, 1, 28, 28)",
                crash=True,
            ),
            State("rgb-to-gray-conv", "$m = nn.Conv2d(1, 4, 3)\n$X = torch.randn(4, 3, 28, 28)", crash=True),
            State(
                "fits",
                "$m = nn.Sequential(nn.Conv2d(1, 8, 3), nn.ReLU())\n$X = torch.randn(4, 1, 28, 28)",
                crash=False,
            ),
        ],
        forms=["$m($X)", "feats = $m($X)\nfeats.shape", "with torch.no_grad():\n    out = $m($X)"],
        namings=NAMINGS,
    ),
    Spec(
        rule="shape-mismatch",
        generator="torch-class-index",
        common=COMMON,
        states=[
            State(
                "one-based",
                "$m = nn.Sequential(nn.Linear(5, 3))\n$X = torch.randn($n, 5)\n$y = torch.arange($n) % 3 + 1",
                crash=True,
            ),
            State(
                "more-classes",
                "$m = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 2))\n$X = torch.randn($n, "
                "5)\n$y = torch.arange($n) % 4",
                crash=True,
            ),
            State(
                "fits",
                "$m = nn.Sequential(nn.Linear(5, 3))\n$X = torch.randn($n, 5)\n$y = torch.arange($n) % 3",
                crash=False,
            ),
        ],
        forms=[
            "F.cross_entropy($m($X), $y)",
            "criterion = nn.CrossEntropyLoss()\nloss = criterion($m($X), $y)",
            "loss = nn.functional.cross_entropy($m($X), $y)\nloss.item()",
        ],
        namings=NAMINGS,
    ),
    Spec(
        rule="shape-mismatch",
        generator="torch-view",
        common=COMMON,
        states=[
            State("odd", "$X = torch.randn($n, 3, 31, 31)", crash=True),
            State("fits", "$X = torch.randn($n, 3, 32, 32)", crash=False),
        ],
        forms=[
            "$X.view(-1, 3 * 32 * 32)",
            "flat = $X.view($n, 3072)",
            "$X.reshape($n, -1, 1024)",
            "$X.reshape(-1, 3072).shape",
        ],
        namings=NAMINGS,
    ),
    Spec(
        rule="index-out-of-range",
        generator="torch-index",
        common=COMMON,
        states=[
            State("few-columns", "$X = torch.zeros($n, 4)", crash=True),
            State("wide", "$X = torch.zeros($n, 10)", crash=False),
        ],
        forms=["$X[:, 5]", "$X[0, 7]", "col = $X[:, 9]\ncol.sum()"],
        namings=NAMINGS,
    ),
    Spec(
        rule="shape-mismatch",
        generator="torch-numpy-of-grad",
        common=COMMON,
        states=[
            State("grad", "$m = nn.Sequential(nn.Linear(4, 2))\n$X = torch.randn($n, 4)", crash=True),
            State(
                "frozen",
                "$m = nn.Sequential(nn.Linear(4, 2))\nfor p in $m.parameters():\n    "
                "p.requires_grad_(False)\n$X = torch.randn($n, 4)",
                crash=False,
            ),
        ],
        forms=[
            "$m($X).numpy()",
            "preds = torch.softmax($m($X), dim=1).numpy()",
            ("$m($X).detach().numpy()", False),
            ("with torch.no_grad():\n    p = $m($X).numpy()", False),
        ],
        namings=NAMINGS,
    ),
]
