"""Variants of matplotlib style names `style.use`/`style.context` cannot load (OSError): the seaborn styles
renamed 'seaborn-v0_8-*' in matplotlib 3.6 and removed under their old names in 3.8, names in lists,
package-style aliases, same-cell imports; and the forms that load: library names, 'default', dicts,
Paths, style files the cell writes (with and without an extension), a name a file of the working
directory carries, a `context` never entered, a name in a `try` that catches OSError."""

from __future__ import annotations

from variants import Spec, State

# each variant starts in a fresh working directory (removed when the worker exits) holding a style file
# named like a style ($f)
COMMON = (
    "import atexit, os, shutil, tempfile\nos.chdir(tempfile.mkdtemp(prefix='crane-styles-'))\n"
    "atexit.register(shutil.rmtree, os.getcwd(), True)\n"
    "with open('$f', 'w') as fh:\n    fh.write('axes.grid: True\\n')\n"
    "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib as mpl\nimport matplotlib.pyplot as plt"
)
NAMINGS = [{"f": "house_style"}, {"f": "mystyle"}]

SPECS = [
    Spec(
        rule="missing-attribute",
        generator="matplotlib-style-names",
        common=COMMON,
        states=[State("pyplot", "plt.close('all')", crash=True)],
        forms=[
            "plt.style.use('seaborn-whitegrid')",
            "plt.style.use('seaborn-white')\nplt.plot([1, 2])",
            "mpl.style.use('seaborn')",
            "plt.style.use(['ggplot', 'seaborn-darkgrid'])",
            "with plt.style.context('seaborn-paper'):\n    plt.plot([1, 2])",
            "from matplotlib import style\nstyle.use('seaborn-ticks')",
            "plt.style.use(style='seaborn-colorblind')",
            "import matplotlib.pyplot as pl\npl.style.use('seaborn-poster')",
            "plt.style.use('fivethirtyeight2')",
            ("plt.style.use('seaborn-v0_8-whitegrid')", False),
            ("plt.style.use('default')", False),
            ("plt.style.use('mpl20')", False),
            ("plt.style.use({'lines.linewidth': 2})", False),
            ("plt.style.use(['ggplot', 'default', 'seaborn-v0_8'])", False),
            ("plt.style.use('$f')", False),
            (
                "with open('$f.mplstyle', 'w') as fh:\n    fh.write('lines.linewidth: 2\\n')\n"
                "plt.style.use('$f.mplstyle')",
                False,
            ),
            (
                "with open('seaborn-notebook', 'w') as fh:\n    fh.write('lines.linewidth: 2\\n')\n"
                "plt.style.use('seaborn-notebook')",
                False,
            ),
            (
                "from pathlib import Path\nPath('$f.mplstyle').write_text('axes.grid: True\\n')\n"
                "plt.style.use(Path('$f.mplstyle'))",
                False,
            ),
            ("plt.style.context('seaborn-whitegrid')", False),
            (
                "try:\n    plt.style.use('seaborn-whitegrid')\nexcept OSError:\n"
                "    plt.style.use('seaborn-v0_8-whitegrid')",
                False,
            ),
        ],
        namings=NAMINGS,
        per_side=80,
    ),
]
