"""Variants of matplotlib and seaborn crash classes: x and y of different lengths, image arrays of the
wrong shape, style sheets that do not exist, seaborn variables that name no column, seaborn's
keyword-only API called positionally."""

from __future__ import annotations

from variants import Spec, State

COMMON = (
    "import numpy as np\nimport pandas as pd\nimport matplotlib\nmatplotlib.use('Agg')\nimport "
    "matplotlib.pyplot as plt"
)
NAMINGS = [
    {"x": "dates", "y": "sales", "img": "img", "df": "df", "n": "120"},
    {"x": "epochs", "y": "losses", "img": "sample", "df": "train", "n": "30"},
    {"x": "t", "y": "signal", "img": "batch0", "df": "tips", "n": "2000"},
]

SPECS = [
    Spec(
        rule="shape-mismatch",
        generator="matplotlib-plot-lengths",
        common=COMMON,
        states=[
            State("dropped", "$x = np.arange($n)\n$y = np.arange($n - 9) * 2.0", crash=True),
            State("series", "$x = np.arange($n)\n$y = pd.Series(np.ones($n + 1))", crash=True),
            State("same", "$x = np.arange($n)\n$y = np.arange($n) * 2.0", crash=False),
        ],
        forms=[
            "plt.plot($x, $y)",
            "plt.scatter($x, $y)",
            "fig, ax = plt.subplots()\nax.plot($x, $y, 'o-')",
            "plt.plot($x, $y, label='train')\nplt.legend()",
        ],
        namings=NAMINGS,
    ),
    Spec(
        rule="shape-mismatch",
        generator="matplotlib-plot-history",
        common=COMMON + "\nEPOCHS = 12",
        states=[
            State(
                "validated-every-other",
                "train_loss = [1.0 / (e + 1) for e in range(EPOCHS)]\n"
                "val_loss = [1.2 / (e + 1) for e in range(0, EPOCHS, 2)]",
                crash=True,
            ),
            State(
                "one-short",
                "train_loss = [1.0 / (e + 1) for e in range(EPOCHS)]\nval_loss = train_loss[1:]",
                crash=True,
            ),
            State(
                "every-epoch",
                "train_loss = [1.0 / (e + 1) for e in range(EPOCHS)]\n"
                "val_loss = [x * 1.1 for x in train_loss]",
                crash=False,
            ),
        ],
        forms=[
            "plt.plot(range(EPOCHS), val_loss)",
            "plt.plot(range(1, EPOCHS + 1), train_loss, label='train')\n"
            "plt.plot(range(1, EPOCHS + 1), val_loss, label='val')\nplt.legend()",
            "epochs = range(1, len(train_loss) + 1)\nplt.plot(epochs, val_loss, 'r-')",
            "fig, ax = plt.subplots()\nax.plot(list(range(EPOCHS)), val_loss)",
            "plt.scatter(range(EPOCHS), val_loss)",
        ],
    ),
    Spec(
        rule="shape-mismatch",
        generator="matplotlib-imshow",
        common=COMMON,
        states=[
            State("channels-first", "$img = np.random.default_rng(0).random((3, 32, 32))", crash=True),
            State("batch", "$img = np.zeros((4, 28, 28, 3))", crash=True),
            State("flat", "$img = np.zeros(784)", crash=True),
            State("channels-last", "$img = np.random.default_rng(0).random((32, 32, 3))", crash=False),
            State("gray", "$img = np.zeros((28, 28, 1))", crash=False),
        ],
        forms=[
            "plt.imshow($img)",
            "fig, ax = plt.subplots()\nax.imshow($img)",
            "plt.imshow($img, cmap='gray')\nplt.axis('off')",
        ],
        namings=NAMINGS,
    ),
    Spec(
        rule="missing-attribute",
        generator="matplotlib-style",
        common=COMMON,
        states=[State("pyplot", "", crash=True)],
        forms=[
            "plt.style.use('seaborn')",
            "plt.style.use('seaborn-whitegrid')",
            "plt.style.use('seaborn-darkgrid')\nplt.plot([1, 2])",
            ("plt.style.use('ggplot')", False),
            ("plt.style.use('seaborn-v0_8')", False),
            ("plt.style.use('default')", False),
        ],
        namings=NAMINGS[:1],
    ),
    Spec(
        rule="missing-key",
        generator="seaborn-variable",
        common=COMMON + "\nimport seaborn as sns",
        states=[
            State(
                "renamed",
                "$df = pd.DataFrame({'age_years': np.arange($n) % 70, 'fare': np.ones($n), 'sex': ['m', "
                "'f'] * ($n // 2)})",
                crash=True,
            ),
            State(
                "present",
                "$df = pd.DataFrame({'Age': np.arange($n) % 70, 'fare': np.ones($n), 'sex': ['m', 'f'] * "
                "($n // 2)})",
                crash=False,
            ),
            State(
                "index-level",
                "$df = pd.DataFrame({'fare': np.ones($n), 'sex': ['m', 'f'] * ($n // 2)}, "
                "index=pd.Index(np.arange($n) % 70, name='Age'))",
                crash=False,
            ),
        ],
        forms=[
            "sns.histplot(data=$df, x='Age')",
            "sns.scatterplot(data=$df, x='Age', y='fare')",
            "sns.boxplot(data=$df, x='sex', y='Age')",
            "sns.histplot($df, x='Age', hue='sex')",
        ],
        namings=NAMINGS,
    ),
    Spec(
        rule="bad-arguments",
        generator="seaborn-positional",
        common=COMMON + "\nimport seaborn as sns",
        states=[
            State(
                "frame",
                "$df = pd.DataFrame({'day': ['a', 'b'] * ($n // 2), 'total': np.ones($n)})",
                crash=True,
            )
        ],
        forms=[
            "sns.barplot($df['day'], $df['total'])",
            "sns.scatterplot($df['day'], $df['total'])",
            "sns.boxplot($df.day, $df.total)",
            ("sns.barplot(x=$df['day'], y=$df['total'])", False),
            ("sns.barplot(data=$df, x='day', y='total')", False),
        ],
        namings=NAMINGS,
    ),
]
