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

# ----- losses and embeddings (rules/losses.py) ---------------------------------------------------------

CE_MODEL = "$m = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 3))\n$X = torch.randn($n, 5)\n"
BCE_MODEL = (
    "$m = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 1), nn.Sigmoid())\n"
    "$X = torch.randn($n, 6)\ncrit = nn.BCELoss()\n"
)
SPECS += [
    Spec(
        rule="loss-target",
        generator="torch-ce-target",
        common=COMMON,
        states=[
            State("float-labels", CE_MODEL + "$y = (torch.arange($n) % 3).float()", crash=True),
            State(
                "double-from-numpy",
                "$m = nn.Linear(5, 3)\n$X = torch.randn($n, 5)\n$y = torch.tensor(np.arange($n) % 3, "
                "dtype=torch.float64)",
                crash=True,
            ),
            State("int32-labels", CE_MODEL + "$y = torch.arange($n, dtype=torch.int32) % 3", crash=True),
            State("one-hot-long", CE_MODEL + "$y = F.one_hot(torch.arange($n) % 3, 3)", crash=True),
            State("long-labels", CE_MODEL + "$y = torch.arange($n) % 3", crash=False),
            State("probabilities", CE_MODEL + "$y = torch.softmax(torch.randn($n, 3), dim=1)", crash=False),
            State("byte-labels", CE_MODEL + "$y = (torch.arange($n) % 3).byte()", crash=False),
        ],
        forms=[
            "criterion = nn.CrossEntropyLoss()\nloss = criterion($m($X), $y)",
            "loss = F.cross_entropy($m($X), $y)",
            "logits = $m($X)\nloss = nn.CrossEntropyLoss(label_smoothing=0.1)(logits, $y)\nloss.item()",
            "out = $m($X)\nF.cross_entropy(input=out, target=$y).backward()",
            "from torch.nn.functional import cross_entropy\nce = cross_entropy($m($X), $y)",
            ("loss = F.cross_entropy($m($X), $y.long() if $y.dim() == 1 else $y.float())", False),
        ],
        namings=NAMINGS,
    ),
    Spec(
        rule="loss-target",
        generator="torch-bce-target",
        common=COMMON,
        states=[
            State("column-output", BCE_MODEL + "$y = (torch.arange($n) % 2).float()", crash=True),
            State("long-labels", BCE_MODEL + "$y = (torch.arange($n) % 2).unsqueeze(1)", crash=True),
            State("fits", BCE_MODEL + "$y = (torch.arange($n) % 2).float().unsqueeze(1)", crash=False),
            State("fits-random", BCE_MODEL + "$y = torch.rand($n, 1)", crash=False),
        ],
        forms=[
            "criterion = nn.BCELoss()\nloss = criterion($m($X), $y)",
            "loss = F.binary_cross_entropy($m($X), $y)",
            "probs = $m($X)\nloss = nn.BCEWithLogitsLoss()(probs, $y)",
            "loss_fn = nn.BCELoss(reduction='sum')\nl = loss_fn(input=$m($X), target=$y)\nl.item()",
            "F.binary_cross_entropy_with_logits($m($X), $y).backward()",
            "crit($m($X), $y)",
            ("crit($m($X), $y.float().view(-1, 1))", False),
        ],
        namings=NAMINGS,
    ),
    Spec(
        rule="embedding-index",
        generator="torch-embedding-index",
        common=COMMON,
        states=[
            State(
                "one-based-ids",
                "vocab = 9\n$e = nn.Embedding(vocab, 16, padding_idx=0)\n$ids = torch.arange(1, vocab + "
                "1).repeat(3, 1)",
                crash=True,
            ),
            State(
                "negative",
                "$e = nn.Embedding(10, 8)\n$ids = torch.tensor([[0, 3, -1], [2, 2, 1]])",
                crash=True,
            ),
            State(
                "sequential",
                "$e = nn.Sequential(nn.Embedding(20, 4), nn.Flatten())\n"
                "$ids = torch.arange(25).reshape(5, 5)",
                crash=True,
            ),
            State(
                "int32",
                "$e = nn.Embedding(5, 3, max_norm=1.0)\n$ids = torch.tensor([[4, 5]], dtype=torch.int32)",
                crash=True,
            ),
            State(
                "fits",
                "vocab = 9\n$e = nn.Embedding(vocab + 1, 16, padding_idx=0)\n$ids = torch.arange(1, vocab + "
                "1).repeat(3, 1)",
                crash=False,
            ),
            State(
                "fits-sequential",
                "$e = nn.Sequential(nn.Embedding(20, 4), nn.Flatten())\n"
                "$ids = torch.arange(20).reshape(4, 5)",
                crash=False,
            ),
        ],
        forms=[
            "$e($ids)",
            "vectors = $e($ids)\nvectors.mean(dim=1).shape",
            "with torch.no_grad():\n    out = $e($ids)",
            "print($e($ids).shape)",
            ("$e($ids.clamp(0, 4))", False),
        ],
        namings=[
            {"e": "emb", "ids": "token_ids"},
            {"e": "embedding", "ids": "x"},
            {"e": "embed", "ids": "batch"},
        ],
    ),
]

LOADER = (
    "from torch.utils.data import DataLoader, TensorDataset\n"
    "loader = DataLoader(TensorDataset(torch.randn($n, 5), labels), batch_size=4, shuffle=True)\n"
)
SPECS.append(
    Spec(
        rule="loss-target",
        generator="torch-loader-loss-target",
        common=COMMON,
        states=[
            State(
                "ce-float-labels",
                "labels = (torch.arange($n) % 3).float()\n" + LOADER + "$m = nn.Sequential(nn.Linear(5, 8), "
                "nn.ReLU(), nn.Linear(8, 3))\ncrit = nn.CrossEntropyLoss()",
                crash=True,
            ),
            State(
                "bce-flat-labels",
                "labels = (torch.arange($n) % 2).float()\n" + LOADER + "$m = nn.Sequential(nn.Linear(5, 1), "
                "nn.Sigmoid())\ncrit = nn.BCELoss()",
                crash=True,
            ),
            State(
                "ce-long-labels",
                "labels = torch.arange($n) % 3\n" + LOADER + "$m = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), "
                "nn.Linear(8, 3))\ncrit = nn.CrossEntropyLoss()",
                crash=False,
            ),
            State(
                "bce-column-labels",
                "labels = (torch.arange($n) % 2).float().unsqueeze(1)\n" + LOADER + "$m = nn.Sequential("
                "nn.Linear(5, 1), nn.Sigmoid())\ncrit = nn.BCELoss()",
                crash=False,
            ),
        ],
        forms=[
            "for xb, yb in loader:\n    loss = crit($m(xb), yb)\n    loss.backward()",
            "for batch_x, batch_y in loader:\n    out = $m(batch_x)\n    crit(out, batch_y).backward()",
            "total = 0.0\nfor xb, yb in loader:\n    preds = $m(xb)\n    loss = crit(preds, yb)\n"
            "    total += loss.item()",
        ],
        namings=NAMINGS,
    )
)
