"""Variants of imports the kernel's environment cannot satisfy (rule missing-import), and of tuple keys on
DataFrame columns (one label, matched level by level on a MultiIndex: rule missing-key).

The variants of one generator run in one worker process, so a state that puts a module on sys.path or
in sys.modules would leak into the next variant: every state first takes away what the others add."""

from __future__ import annotations

from variants import Spec, State

# Undo what the other states add (a folder on sys.path, a module in sys.modules), as a fresh kernel has it.
RESET = (
    "import sys, importlib\n"
    "sys.path[:] = [p for p in sys.path if 'crane-variant-' not in p]\n"
    "for _name in [m for m in sys.modules if m.split('.')[0] == '$mod']:\n"
    "    del sys.modules[_name]\n"
    "importlib.invalidate_caches()"
)

MODULE_NAMINGS = [{"mod": "crane_helpers"}, {"mod": "crane_utils_lib"}, {"mod": "crane_preprocess"}]

SPECS = [
    Spec(
        rule="missing-import",
        generator="python-missing-module",
        states=[
            State("not-installed", RESET, crash=True),
            State(
                "earlier-cell-extended-sys-path",
                RESET + "\nimport os, tempfile\n"
                "_folder = tempfile.mkdtemp(prefix='crane-variant-')\n"
                "with open(os.path.join(_folder, '$mod.py'), 'w') as _f:\n"
                "    _f.write('VALUE = 1\\n')\n"
                "sys.path.insert(0, _folder)",
                crash=False,
            ),
            State(
                "package-on-sys-path",
                RESET + "\nimport os, tempfile\n"
                "_folder = tempfile.mkdtemp(prefix='crane-variant-')\n"
                "os.mkdir(os.path.join(_folder, '$mod'))\n"
                "with open(os.path.join(_folder, '$mod', '__init__.py'), 'w') as _f:\n"
                "    _f.write('VALUE = 1\\n')\n"
                "sys.path.append(_folder)",
                crash=False,
            ),
            State(
                "in-sys-modules",
                RESET
                + "\nimport types\n_m = types.ModuleType('$mod')\n_m.VALUE = 1\nsys.modules['$mod'] = _m",
                crash=False,
            ),
        ],
        forms=[
            "import $mod",
            "import $mod as lib\nprint(lib.VALUE)",
            "from $mod import VALUE",
            "import math, $mod",
            "import numpy as np\nfrom $mod import VALUE as value\nprint(value)",
            "import warnings\nwarnings.filterwarnings('ignore')\nimport $mod",
            # the environment is read at startup only
            "import os\nos.environ['TF_CPP_MIN_LOG_LEVEL'] = '2'\nimport $mod",
            "import numpy as np\nnp.random.seed(0)\nfrom $mod import VALUE",
            "import math\nprint(math.pi)\nimport $mod as lib",
        ],
        namings=MODULE_NAMINGS,
    ),
    Spec(
        rule="missing-import",
        generator="python-import-changed-in-cell",
        states=[State("not-installed", RESET, crash=True, certain=None)],
        # the cell itself may change where modules are found: nothing certain (the first five run fine)
        forms=[
            (
                "import sys, os, tempfile\n_d = tempfile.mkdtemp(prefix='crane-variant-')\n"
                "open(os.path.join(_d, '$mod.py'), 'w').write('VALUE = 1')\n"
                "sys.path.insert(0, _d)\nimport $mod",
                False,
            ),
            (
                "import os, tempfile\nos.chdir(tempfile.mkdtemp(prefix='crane-variant-'))\n"
                "open('$mod.py', 'w').write('VALUE = 1')\nimport sys\nsys.path.insert(0, os.getcwd())\n"
                "from $mod import VALUE",
                False,
            ),
            ("import sys, types\nsys.modules['$mod'] = types.ModuleType('$mod')\nimport $mod", False),
            ("try:\n    import $mod\nexcept ImportError:\n    $mod = None", False),
            ("try:\n    from $mod import VALUE\nexcept ModuleNotFoundError:\n    VALUE = 0", False),
            # still missing after the change: the checks stay silent (only precision counts here)
            "import sys\nsys.path.append('/nonexistent-crane-variant')\nimport $mod",
            "import os\nos.chdir(os.getcwd())\nimport $mod",
            "import subprocess\nsubprocess.run(['true'])\nfrom $mod import VALUE",
        ],
        namings=MODULE_NAMINGS,
        flows=("top", "for-range", "with", "if-runtime", "try-other", "function"),
    ),
    Spec(
        rule="missing-import",
        generator="library-removed-import",
        common="import numpy\nimport sklearn\nimport sklearn.model_selection\nimport sklearn.datasets\n"
        "import sklearn.metrics",
        states=[State("installed-versions", "import sklearn.preprocessing", crash=True)],
        forms=[
            "from sklearn.cross_validation import train_test_split",
            "from sklearn.grid_search import GridSearchCV",
            "import sklearn.cross_validation",
            "from sklearn.datasets.samples_generator import make_blobs",
            "from sklearn.metrics import plot_confusion_matrix",
            "from sklearn.cross_validation import KFold, cross_val_score",
            "import numpy as np\nfrom numpy import float",
            ("from sklearn.model_selection import train_test_split", False),
            ("from sklearn.datasets import make_blobs", False),
            ("import sklearn.linear_model", False),
            ("from sklearn.metrics import ConfusionMatrixDisplay", False),
            ("from sklearn import svm, preprocessing", False),
            ("from numpy import float64, linalg", False),
        ],
    ),
    Spec(
        rule="missing-key",
        generator="pandas-tuple-column-key",
        common="import numpy as np\nimport pandas as pd",
        states=[
            State(
                "two-levels",
                "_cols = pd.MultiIndex.from_product([['Bob', 'Guido', 'Sue'], ['HR', 'Temp']],"
                " names=['subject', 'type'])\n"
                "$df = pd.DataFrame(np.arange(24.0).reshape(4, 6), columns=_cols)",
                crash=False,
            ),
            State(
                "three-levels",
                "_cols = pd.MultiIndex.from_product([['Bob', 'Guido', 'Sue'], ['HR', 'Temp'], ['a', 'b']])\n"
                "$df = pd.DataFrame(np.arange(48.0).reshape(4, 12), columns=_cols)",
                crash=False,
            ),
            State(
                "other-first-level",
                "_cols = pd.MultiIndex.from_product([['Ann', 'Tom'], ['HR', 'Temp']])\n"
                "$df = pd.DataFrame(np.arange(16.0).reshape(4, 4), columns=_cols)",
                crash=True,
            ),
            State(
                "other-second-level",
                "_cols = pd.MultiIndex.from_product([['Bob', 'Guido', 'Sue'], ['Pulse', 'Resp']])\n"
                "$df = pd.DataFrame(np.arange(24.0).reshape(4, 6), columns=_cols)",
                crash=True,
            ),
            State(
                "flat-columns",
                "$df = pd.DataFrame({'Bob': [1.0], 'Guido': [2.0], 'Sue': [3.0],"
                " 'HR': [4.0], 'Temp': [5.0]})",
                crash=True,
            ),
        ],
        forms=[
            "$df['Guido', 'HR']",
            "$df[('Sue', 'Temp')].mean()",
            "$df['Guido', 'HR'].max()",
            "v = $df['Bob', 'Temp']\nprint(v.sum())",
        ],
        namings=[{"df": "health_data"}, {"df": "vitals"}, {"df": "df"}],
    ),
]
