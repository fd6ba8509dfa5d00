"""Variants of numpy crash classes: shapes that do not go together, reshapes, positions out of range,
masks of the wrong length, in-place float arithmetic on integer arrays."""

from __future__ import annotations

from variants import FLOWS, Spec, State

COMMON = "import numpy as np"
NAMINGS = [
    {"A": "X", "B": "W", "n": "150"},
    {"A": "features", "B": "weights", "n": "8"},
    {"A": "emb", "B": "proj", "n": "3000"},
]

SPECS = [
    Spec(
        rule="shape-mismatch",
        generator="numpy-matmul",
        common=COMMON,
        states=[
            State("inner-differs", "$A = np.ones(($n, 5))\n$B = np.ones((4, 3))", crash=True),
            State("transposed", "$A = np.ones(($n, 4))\n$B = np.ones((3, 4))", crash=True),
            State("vector", "$A = np.ones(($n, 6))\n$B = np.ones(5)", crash=True),
            State("fits", "$A = np.ones(($n, 4))\n$B = np.ones((4, 3))", crash=False),
            State("fits-vector", "$A = np.ones(($n, 5))\n$B = np.ones(5)", crash=False),
        ],
        forms=[
            "$A @ $B",
            "np.dot($A, $B)",
            "$A.dot($B)",
            "scores = $A @ $B\nscores.shape",
            "np.matmul($A, $B)",
        ],
        namings=NAMINGS,
    ),
    Spec(
        rule="shape-mismatch",
        generator="numpy-broadcast",
        common=COMMON,
        states=[
            State("rows", "$A = np.ones(($n, 3))\n$B = np.ones(($n + 1, 3))", crash=True),
            State("cols", "$A = np.ones(($n, 3))\n$B = np.ones(4)", crash=True),
            State("broadcasts", "$A = np.ones(($n, 3))\n$B = np.ones(3)", crash=False),
            State("same", "$A = np.ones(($n, 3))\n$B = np.zeros(($n, 3))", crash=False),
        ],
        forms=[
            "$A + $B",
            "$A - $B",
            "($A * $B).sum()",
            "diff = $A / ($B + 1)\ndiff.mean()",
            "np.abs($A - $B).max()",
        ],
        namings=NAMINGS,
    ),
    Spec(
        rule="shape-mismatch",
        generator="numpy-reshape",
        common=COMMON,
        states=[
            State("odd-size", "$A = np.arange($n * 3 + 1)", crash=True),
            State("image-size", "$A = np.zeros(($n, 785))", crash=True),
            State("fits", "$A = np.arange($n * 784)", crash=False),
        ],
        forms=[
            "$A.reshape(-1, 28, 28)",
            "$A.reshape($n, 784)",
            "np.reshape($A, (-1, 784))",
            "images = $A.reshape(len($A) // 784, 28, 28)",
            "$A.reshape((-1, 28, 28))",
        ],
        namings=NAMINGS,
    ),
    Spec(
        rule="index-out-of-range",
        generator="numpy-index",
        common=COMMON,
        states=[
            State("short", "$A = np.arange(5)\n$B = np.ones((5, 3))", crash=True),
            State("empty", "$A = np.arange(0)\n$B = np.ones((0, 3))", crash=True),
            State("long", "$A = np.arange($n + 10)\n$B = np.ones(($n + 10, 8))", crash=False),
        ],
        forms=["$A[7]", "$B[7]", "$B[:, 5]", "first, last = $A[0], $A[7]", "$B[7, 0]", "$A[-8]"],
        namings=NAMINGS,
    ),
    Spec(
        rule="shape-mismatch",
        generator="numpy-mask",
        common=COMMON,
        states=[
            State("filtered-y", "$A = np.ones(($n, 2))\ny = np.arange($n + 7) % 3", crash=True),
            State("mask-short", "$A = np.ones(($n, 2))\ny = np.arange($n - 1) % 3", crash=True),
            State("same", "$A = np.ones(($n, 2))\ny = np.arange($n) % 3", crash=False),
        ],
        forms=["$A[y == 1]", "$A[y > 0].mean()", "pos = $A[y == 2]\npos.shape"],
        namings=NAMINGS,
    ),
    Spec(
        rule="bad-value",
        generator="numpy-inplace-float",
        common=COMMON,
        states=[
            State("uint8", "$A = np.zeros(($n, 4), dtype=np.uint8)", crash=True),
            State("int64", "$A = np.arange($n * 4).reshape($n, 4)", crash=True),
            State("float", "$A = np.zeros(($n, 4), dtype=np.float32)", crash=False),
        ],
        forms=["$A /= 255.0", "$A /= $A.max() + 1", "$A *= 0.5", "$A -= 0.5"],
        namings=NAMINGS,
        flows=tuple(f.name for f in FLOWS if f.name != "function"),  # (a function would make $A local)
        # (repeating `X /= 255.0` in a loop is still the same crash)
    ),
    Spec(
        rule="bad-value",
        generator="numpy-concatenate-axis",
        common=COMMON,
        states=[
            State("two-arrays", "$A = np.ones(($n, 3))\n$B = np.zeros(($n, 3))", crash=True),
            State("one-element", "$A = np.ones(($n, 3))\n$B = np.array([0])", crash=True),
            State("int-axis", "$A = np.ones(($n, 3))\n$B = 0", crash=False),
            State("scalar-array", "$A = np.ones(($n, 3))\n$B = np.array(0)", crash=False),
        ],
        forms=["np.concatenate($A, $B)", "np.stack($A, $B)", "both = np.concatenate($A, $B)\nboth.shape"],
        namings=NAMINGS,
    ),
    Spec(
        rule="missing-values",
        generator="numpy-histogram-nan",
        common=COMMON,
        states=[
            State("dropouts", "$A = np.sin(np.arange($n) / 9.0)\n$A[[2, 5]] = np.nan", crash=True),
            State(
                "from-frame",
                "import pandas as pd\n$A = pd.Series(np.arange($n) * 0.5).where(lambda s: s > 1)",
                crash=True,
            ),
            State("clean", "$A = np.sin(np.arange($n) / 9.0)", crash=False),
            State(
                "filled",
                "$A = np.sin(np.arange($n) / 9.0)\n$A[[2, 5]] = np.nan\n$A = np.nan_to_num($A)",
                crash=False,
            ),
        ],
        forms=[
            "np.histogram($A)",
            "counts, edges = np.histogram($A, bins=20)\nedges[:3]",
            "np.histogram($A, 'auto')",
            ("np.histogram($A, bins=[0, 0.5, 1])", False),
            ("np.histogram($A, bins=10, range=(-1, 1))", False),
        ],
        namings=NAMINGS,
    ),
]
