"""Variants of APIs the installed libraries removed: attributes (rule missing-attribute, looked up on the
live module or class) and keywords of matplotlib's hist that are no Patch property (rule bad-arguments).

The crashing forms crash with the versions installed here (NumPy 2, pandas 2, seaborn >= 0.12,
matplotlib >= 3.9); execution confirms it for every variant, so an older install shows up as a
generator error, not as a wrong score."""

from __future__ import annotations

from variants import Spec, State

SPECS = [
    Spec(
        rule="missing-attribute",
        generator="library-removed-attribute",
        common="import numpy as np\nimport pandas as pd\nimport matplotlib\nmatplotlib.use('Agg')\n"
        "import matplotlib.cm\nimport matplotlib.pyplot as plt\nimport seaborn as sns",
        states=[
            State("installed-versions", "$df = pd.DataFrame({'a': [1.0, 2.0], 'b': [3.0, 4.0]})", crash=True)
        ],
        forms=[
            "np.float(3)",
            "x = np.int(2)",
            "$df.append({'a': 1.0, 'b': 2.0}, ignore_index=True)",
            "$df.ix[0, 'a']",
            "sns.factorplot(x='a', y='b', data=$df)",
            "cmap = matplotlib.cm.get_cmap('viridis')",
            "pd.datetime.now()",
            ("np.float64(3)", False),
            ("pd.concat([$df, $df])", False),
            ("$df.loc[0, 'a']", False),
            ("matplotlib.colormaps['viridis']", False),
            ("pd.Timestamp('2024-01-01')", False),
        ],
        namings=[{"df": "df"}, {"df": "sales"}],
    ),
    Spec(
        rule="bad-arguments",
        generator="matplotlib-hist-removed-keyword",
        common="import numpy as np\nimport matplotlib\nmatplotlib.use('Agg')\n"
        "import matplotlib.pyplot as plt",
        states=[State("axes", "fig, $ax = plt.subplots()\n$x = np.arange(20.0)", crash=True)],
        forms=[
            "plt.hist($x, normed=True)",
            "$ax.hist($x, bins=5, normed=1)",
            "$ax.hist($x, histtype='step', normed=True)",
            "n, bins, patches = plt.hist($x, 10, normed=True, alpha=0.5)",
            ("plt.hist($x, density=True)", False),
            ("$ax.hist($x, bins=5, lw=2, ec='k')", False),
            ("$ax.hist($x, histtype='step', density=True)", False),
            ("n, bins, patches = plt.hist($x, 10, alpha=0.5, label='x')", False),
        ],
        namings=[{"ax": "ax", "x": "values"}, {"ax": "axis", "x": "ages"}],
    ),
]
