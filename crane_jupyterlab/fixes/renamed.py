"""APIs the libraries renamed or removed, with the replacement their own messages or changelogs name.

Each entry applies only when the crash's message is the library's own word on that very API (`message`),
so an edit is proposed for the cause of this crash, never for a line that merely looks old. The entries
are tested against the installed libraries (tests/fixes/test_renamed.py runs each `demo` and its fixed
form), and a candidate is offered only after a trial ran the edited cell (server/service.py).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass

from .edits import Source, combine

Edit = Callable[[re.Match[str], str], str | None]


@dataclass(frozen=True)
class Rename:
    library: str  # the top-level module whose API changed
    message: re.Pattern[str]  # the crash's message when the old API is used
    edit: Edit  # (message match, cell) -> the edited cell, None when the cell has no such use
    changelog: str  # where the library says so
    demo: tuple[str, str]  # (a cell that crashes with `message` on the installed library, its fixed form)


def _sub(pattern: str, replacement: str, count: int = 0) -> Edit:
    """An edit replacing every `pattern` in the cell (None when there is none)."""
    compiled = re.compile(pattern)

    def edit(match: re.Match[str], cell: str) -> str | None:
        new, n = compiled.subn(replacement, cell, count=count)
        return new if n else None

    return edit


def _numpy_removed(match: re.Match[str], cell: str) -> str | None:
    # NumPy 2 names the replacement itself: "`np.NaN` was removed in the NumPy 2.0 release. Use `np.nan`
    # instead." The old name is replaced where the cell spells it np.<old> or numpy.<old>.
    old, new = match.group("old"), match.group("new")
    pattern = re.compile(rf"\b(np|numpy)\.{re.escape(old)}\b(?!\s*=)")
    if new.startswith("np."):
        out, n = pattern.subn(lambda m: f"{m.group(1)}.{new[3:]}", cell)
    else:
        out, n = pattern.subn(new, cell)
    return out if n else None


def _numpy_alias(match: re.Match[str], cell: str) -> str | None:
    # np.float, np.int, ... were aliases of the builtins (deprecated 1.20, removed 1.24).
    name = match.group("name")
    out, n = re.subn(rf"\b(np|numpy)\.{name}\b(?!_)", name, cell)
    return out if n else None


def _appended(match: re.Match[str], cell: str) -> str | None:
    # DataFrame.append returned a new frame (pandas 1.4 deprecated it "in favor of pandas.concat"): a call
    # whose result is used, unlike list.append's, becomes pd.concat([frame, other], <its keywords>); a
    # row given as a dict becomes a one-row frame.
    src = Source.parse(cell)
    if src is None:
        return None
    statements = {id(node.value) for node in ast.walk(src.tree) if isinstance(node, ast.Expr)}
    pandas = "pandas" if re.search(r"^\s*import pandas\s*$", cell, re.M) else "pd"
    edits = []
    for node in ast.walk(src.tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "append"
            and id(node) not in statements
            and len(node.args) == 1
            and all(k.arg in ("ignore_index", "sort", "verify_integrity") for k in node.keywords)
        ):
            other = src.text(node.args[0])
            if isinstance(node.args[0], ast.Dict):
                other = f"{pandas}.DataFrame([{other}])"
            keywords = "".join(f", {src.text(k)}" for k in node.keywords)
            new = f"{pandas}.concat([{src.text(node.func.value)}, {other}]{keywords})"
            edits.append((src.start(node), src.end(node), new))
    return combine(cell, edits)


_FILL = {"ffill": "ffill", "pad": "ffill", "bfill": "bfill", "backfill": "bfill"}


def _filled(match: re.Match[str], cell: str) -> str | None:
    # fillna(method='ffill') deprecated in pandas 2.1 ("Use obj.ffill() or obj.bfill() instead"), refused
    # in 3.0: a call with no fill value becomes .ffill() / .bfill() with its other keywords.
    src = Source.parse(cell)
    if src is None:
        return None
    edits = []
    for node in ast.walk(src.tree):
        if not (
            isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "fillna"
        ):
            continue
        method = next((k.value for k in node.keywords if k.arg == "method"), None)
        if node.args or not isinstance(method, ast.Constant) or method.value not in _FILL:
            continue
        kept = [k for k in node.keywords if k.arg != "method"]
        if any(k.arg not in ("axis", "inplace", "limit") for k in kept):
            continue
        arguments = ", ".join(src.text(k) for k in kept)
        edits.append(
            (
                src.start(node),
                src.end(node),
                f"{src.text(node.func.value)}.{_FILL[method.value]}({arguments})",
            )
        )
    return combine(cell, edits)


RENAMES: tuple[Rename, ...] = (
    Rename(
        "numpy",
        re.compile(
            r"`np\.(?P<old>\w+)` was removed in the NumPy 2\.0 release\. Use `(?P<new>[\w.]+)` instead"
        ),
        _numpy_removed,
        "NumPy 2.0 release notes, NEP 52 (the message names the replacement)",
        ("import numpy as np\nx = np.NaN", "import numpy as np\nx = np.nan"),
    ),
    Rename(
        "numpy",
        re.compile(r"module 'numpy' has no attribute '(?P<name>float|int|bool|object|str|complex)'"),
        _numpy_alias,
        "NumPy 1.20 deprecations, removed in 1.24: use the builtin",
        (
            "import numpy as np\nx = np.zeros(2, dtype=np.float)",
            "import numpy as np\nx = np.zeros(2, dtype=float)",
        ),
    ),
    Rename(
        "pandas",
        re.compile(r"'(?:DataFrame|Series)' object has no attribute 'iteritems'"),
        _sub(r"\.iteritems\(", ".items("),
        "pandas 2.0: iteritems removed, use items",
        (
            "import pandas as pd\nfor k, v in pd.DataFrame({'a': [1]}).iteritems():\n    pass",
            "import pandas as pd\nfor k, v in pd.DataFrame({'a': [1]}).items():\n    pass",
        ),
    ),
    Rename(
        "pandas",
        re.compile(r"'(?:DataFrame|Series)' object has no attribute 'append'"),
        _appended,
        "pandas 1.4: DataFrame.append and Series.append deprecated in favor of pandas.concat, removed in 2.0",
        (
            "import pandas as pd\ndf = pd.DataFrame({'a': [1]})\nrows = []\nrows.append(1)\n"
            "df = df.append({'a': 2}, ignore_index=True)",
            "import pandas as pd\ndf = pd.DataFrame({'a': [1]})\nrows = []\nrows.append(1)\n"
            "df = pd.concat([df, pd.DataFrame([{'a': 2}])], ignore_index=True)",
        ),
    ),
    Rename(
        "pandas",
        re.compile(r"fillna\(\) got an unexpected keyword argument 'method'"),
        _filled,
        "pandas 2.1: fillna(method=...) deprecated for ffill() and bfill(), refused in 3.0",
        (
            "import pandas as pd\ns = pd.Series([1.0, None]).fillna(method='ffill', limit=1)",
            "import pandas as pd\ns = pd.Series([1.0, None]).ffill(limit=1)",
        ),
    ),
    Rename(
        "pandas",
        re.compile(r"'DataFrame' object has no attribute 'applymap'"),
        _sub(r"\.applymap\(", ".map("),
        "pandas 2.1: DataFrame.applymap deprecated for DataFrame.map, removed in 3.0",
        (
            "import pandas as pd\nd = pd.DataFrame({'a': [1]}).applymap(str)",
            "import pandas as pd\nd = pd.DataFrame({'a': [1]}).map(str)",
        ),
    ),
    Rename(
        "pandas",
        re.compile(r"'(?:Series|Index)' object has no attribute 'is_monotonic'"),
        _sub(r"\.is_monotonic\b(?!_)", ".is_monotonic_increasing"),
        "pandas 2.0: is_monotonic removed, use is_monotonic_increasing",
        (
            "import pandas as pd\nok = pd.Series([1, 2]).is_monotonic",
            "import pandas as pd\nok = pd.Series([1, 2]).is_monotonic_increasing",
        ),
    ),
    Rename(
        "sklearn",
        re.compile(r"object has no attribute 'get_feature_names'"),
        _sub(r"\.get_feature_names\(", ".get_feature_names_out("),
        "scikit-learn 1.0: get_feature_names deprecated for get_feature_names_out, removed in 1.2",
        (
            "from sklearn.feature_extraction.text import CountVectorizer\n"
            "v = CountVectorizer().fit(['red green', 'blue'])\nnames = v.get_feature_names()",
            "from sklearn.feature_extraction.text import CountVectorizer\n"
            "v = CountVectorizer().fit(['red green', 'blue'])\nnames = v.get_feature_names_out()",
        ),
    ),
    Rename(
        "sklearn",
        re.compile(r"OneHotEncoder\.__init__\(\) got an unexpected keyword argument 'sparse'"),
        _sub(r"(OneHotEncoder\([^()]*?\b)sparse(\s*=)", r"\1sparse_output\2"),
        "scikit-learn 1.2: OneHotEncoder's sparse renamed sparse_output, removed in 1.4",
        (
            "from sklearn.preprocessing import OneHotEncoder\nenc = OneHotEncoder(sparse=False)",
            "from sklearn.preprocessing import OneHotEncoder\nenc = OneHotEncoder(sparse_output=False)",
        ),
    ),
    Rename(
        "sklearn",
        re.compile(r"cannot import name 'joblib' from 'sklearn\.externals'"),
        _sub(r"from\s+sklearn\.externals\s+import\s+joblib\b", "import joblib"),
        "scikit-learn 0.23: sklearn.externals.joblib removed, import joblib itself",
        ("from sklearn.externals import joblib", "import joblib"),
    ),
    Rename(
        "matplotlib",
        re.compile(r"'seaborn(?:-[\w-]+)?' (?:is )?not (?:a valid package style|found in the style library)"),
        _sub(r"""(['"])seaborn(?!-v0_8)((?:-[\w-]+)?)\1""", r"\1seaborn-v0_8\2\1"),
        "Matplotlib 3.6: the seaborn styles renamed seaborn-v0_8-*, the old names removed in 3.8",
        (
            "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
            "plt.style.use('seaborn-whitegrid')",
            "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
            "plt.style.use('seaborn-v0_8-whitegrid')",
        ),
    ),
    Rename(
        "keras",
        re.compile(r"Argument\(s\) not recognized: \{'lr'"),
        _sub(
            r"(\b(?:Adam|AdamW|SGD|RMSprop|Adagrad|Adadelta|Adamax|Nadam|Ftrl)\([^()]*?\b)lr(\s*=)",
            r"\1learning_rate\2",
        ),
        "Keras 2.3: lr renamed learning_rate; Keras 3 refuses lr",
        (
            "import keras\nopt = keras.optimizers.Adam(lr=0.01)",
            "import keras\nopt = keras.optimizers.Adam(learning_rate=0.01)",
        ),
    ),
)


def renamed(cell: str, message: str) -> list[tuple[Rename, str]]:
    """(entry, edited cell) for each entry whose message is the crash's and whose old API the cell uses."""
    out = []
    for entry in RENAMES:
        match = entry.message.search(message)
        if match is None:
            continue
        edited = entry.edit(match, cell)
        if edited is not None and edited != cell:
            out.append((entry, edited))
    return out
