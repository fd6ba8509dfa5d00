"""Variants of axis crash classes: an axis the array does not have (NumPy AxisError, torch "Dimension out
of range"), arrays that cannot be concatenated or stacked, ragged lists turned into arrays."""

from __future__ import annotations

from variants import FLOWS, Spec, State

NP = "import numpy as np"
TORCH = "import numpy as np\nimport torch\nimport torch.nn.functional as F"
NAMINGS = [
    {"A": "y_true", "B": "probs", "L": "chunks", "n": "30"},
    {"A": "labels", "B": "scores", "L": "parts", "n": "8"},
    {"A": "targets", "B": "logits", "L": "blocks", "n": "500"},
]
# Forms that build something from the target: a loop or a comprehension would do it again (harmless).
ALL = tuple(f.name for f in FLOWS)

SPECS = [
    Spec(
        rule="axis-out-of-range",
        generator="numpy-axis",
        common=NP,
        states=[
            State("labels-1d", "$A = np.arange($n) % 3\n$B = np.ones(($n, 3)) / 3", crash=True),
            State("flat-scores", "$A = np.arange($n) % 3\n$B = np.ones($n)", crash=True),
            State("images", "$A = np.zeros(($n, 4, 4))\n$B = np.ones(($n, 3))", crash=False),
            State("volumes", "$A = np.zeros(($n, 3, 3, 1))\n$B = np.ones(($n, 3, 2))", crash=False),
        ],
        forms=[
            "np.argmax($A, axis=1)",
            "true_cls = $A.argmax(axis=1)\npred_cls = $B.argmax(1)",
            "np.sum($A, 1) + $B.max(axis=-1).sum()",
            "np.mean($A, axis=(0, 1))",
            "$A.cumsum(axis=1)",
            "np.expand_dims($A, axis=3)",
            "np.sort($A, axis=1)[:3]",
            "from numpy import argmax\nargmax($A, 1)",
            "np.concatenate([$A, $A], axis=2)",
            "np.flip($A, 2)",
            "np.moveaxis($A, -1, 1)",
        ],
        namings=NAMINGS,
        flows=ALL,
    ),
    Spec(
        rule="axis-out-of-range",
        generator="torch-dim",
        common=TORCH,
        states=[
            State("vector", "$A = torch.arange($n) % 3\n$B = torch.randn($n)", crash=True),
            State("sequences", "$A = torch.zeros($n, 5, 3, 2)\n$B = torch.randn($n, 7, 3)", crash=False),
            State("batch3d", "$A = torch.zeros($n, 3, 2)\n$B = torch.randn($n, 4, 2)", crash=False),
        ],
        forms=[
            "$B.softmax(dim=1)",
            "torch.argmax($A, dim=1)",
            "$A.sum(1)",
            "F.softmax($B, dim=1).argmax(dim=1)",
            "torch.cat([$B, $B], dim=2)",
            "$B.unsqueeze(3)",
            "$A.size(2)",
            "$B.max(dim=1)",
            "p = torch.softmax($B, 1)",
            "$A.float().mean(dim=2)",
            "$B.transpose(1, 2)",
            "$B.permute(0, 2, 1).shape",
        ],
        namings=NAMINGS,
        flows=ALL,
    ),
    Spec(
        rule="shape-mismatch",
        generator="numpy-stack",
        common=NP,
        states=[
            State(
                "flat-last",
                "$L = [np.ones(($n, 1)), np.ones(($n, 1)), np.ones($n)]\nX1 = np.ones(($n, 2))\n"
                "X2 = np.ones($n + 1)",
                crash=True,
            ),
            State(
                "rows-differ",
                "$L = [np.ones(($n, 2)), np.ones(($n + 1, 2))]\nX1 = np.ones(($n, 2))\n"
                "X2 = np.ones(($n + 1, 2))",
                crash=True,
            ),
            State(
                "columns",
                "$L = [np.ones(($n, 1)), np.ones(($n, 1)), np.ones(($n, 1))]\nX1 = np.ones(($n, 2))\n"
                "X2 = np.ones(($n, 2))",
                crash=False,
            ),
        ],
        forms=[
            "np.concatenate($L, axis=1)",
            "features = np.hstack($L)\nfeatures.shape",
            "np.stack($L)",
            "np.column_stack([X1, X2])",
            "np.concatenate((X1, X2), 1)",
            "from numpy import hstack\nhstack([X1, X2])",
            "np.stack([X1, X2], axis=0).shape",
        ],
        namings=NAMINGS,
        flows=ALL,
    ),
    Spec(
        rule="shape-mismatch",
        generator="torch-cat",
        common=TORCH,
        states=[
            State(
                "widths",
                "$L = [torch.ones($n, 3), torch.ones($n, 4)]\nt1 = torch.ones($n, 3)\n"
                "t2 = torch.ones($n + 2, 4)",
                crash=True,
            ),
            State(
                "ndim",
                "$L = [torch.ones($n, 3), torch.ones($n)]\nt1 = torch.ones($n, 3)\nt2 = torch.ones(3)",
                crash=True,
            ),
            State(
                "same",
                "$L = [torch.ones($n, 3), torch.ones($n, 3)]\nt1 = torch.ones($n, 3)\nt2 = torch.ones($n, 3)",
                crash=False,
            ),
        ],
        forms=[
            "torch.cat($L)",
            "torch.stack($L, dim=0)",
            "batch = torch.stack([t1, t2])",
            "torch.cat([t1, t2], dim=0).shape",
            "torch.cat((t1, t2))",
            "torch.concat($L, 0)",
        ],
        namings=NAMINGS,
        flows=ALL,
    ),
    Spec(
        rule="shape-mismatch",
        generator="numpy-ragged",
        common=TORCH,
        states=[
            State(
                "unpadded",
                "corpus = ['the cat sat', 'a dog ran in the park', 'birds sing']\n"
                "$L = [[len(w) for w in s.split()] for s in corpus]",
                crash=True,
            ),
            State("last-short", "$L = [[1, 2, 3]] * 7 + [[4, 5]]\n$L = $L[-2:] + $L", crash=True),
            State("padded", "$L = [[1, 2, 3, 0], [4, 5, 0, 0], [6, 0, 0, 0]]", crash=False),
        ],
        forms=[
            "np.array($L)",
            "batch = np.array($L, dtype=np.int64)\nbatch.shape",
            "np.asarray($L, dtype='float32')",
            "torch.tensor($L)",
            "x = torch.tensor($L, dtype=torch.long)",
            "from numpy import array\narray($L).mean()",
        ],
        namings=NAMINGS,
        flows=ALL,
    ),
]
SPECS.append(
    Spec(
        rule="axis-out-of-range",
        generator="pandas-axis",
        common=NP + "\nimport pandas as pd",
        states=[
            State(
                "label-column",
                "df = pd.DataFrame({'x': np.arange($n), 'label': np.arange($n) % 3})\n$A = df['label']",
                crash=True,
            ),
            State("series", "$A = pd.Series(np.arange($n) % 3, name='label')", crash=True),
            State(
                "one-hot", "$A = pd.DataFrame(np.eye(3)[np.arange($n) % 3], columns=list('abc'))", crash=False
            ),
        ],
        forms=[
            "np.argmax($A, axis=1)",
            "$A.sum(axis=1)",
            "np.mean($A, axis=1)",
            "$A.max(axis=1).mean()",
            "best = $A.idxmax(axis=1)",
            "np.sum($A, 1)",
        ],
        namings=NAMINGS,
        flows=ALL,
    )
)
