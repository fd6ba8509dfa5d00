"""Fix candidates for a cell that will crash, drawn from what is already known about the crash:

- close names from the probe: a column, key or attribute the object lacks, or a variable the kernel lacks,
  next to one it has ("Agee" -> "Age");
- a module used under its usual alias that this kernel never imported (`np` -> `import numpy as np`);
- an API the installed library renamed or removed, by its own message (renamed.py, a table for what the
  message does not name);
- what the crash's message and the installed library say, by rule (derived.py): a replacement the message
  names, a refused keyword renamed to a close one of the signature or dropped, positional arguments given
  by keyword, a close name of a module or class, an import from the module that defines the name.

Edits are made on the cell's tokens (a name inside a string or comment is never touched). A candidate is
only a proposal: the server offers it after a trial ran the edited cell to its end (server/service.py).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from typing import Any

from ..checks.astutil import bound_names
from .derived import Derivation
from .edits import diff_title, first_changed, replace_keys, replace_names
from .library import Library
from .proposal import Candidate, Crash
from .renamed import renamed
from .values import values

# Modules notebooks use under a conventional alias: the name a cell reads -> the import that binds it.
ALIASES: dict[str, str] = {
    "np": "import numpy as np",
    "pd": "import pandas as pd",
    "plt": "import matplotlib.pyplot as plt",
    "sns": "import seaborn as sns",
    "tf": "import tensorflow as tf",
    "nn": "import torch.nn as nn",
    "F": "import torch.nn.functional as F",
    "sm": "import statsmodels.api as sm",
    "smf": "import statsmodels.formula.api as smf",
    "px": "import plotly.express as px",
    "go": "import plotly.graph_objects as go",
    "mpl": "import matplotlib as mpl",
    "stats": "from scipy import stats",
    "xgb": "import xgboost as xgb",
    "lgb": "import lightgbm as lgb",
    "cv2": "import cv2",
}
# Modules read under their own name: `import <name>` when a cell reads one it never imported.
PLAIN_MODULES = frozenset(
    {
        "os",
        "sys",
        "re",
        "json",
        "math",
        "time",
        "random",
        "pickle",
        "glob",
        "datetime",
        "itertools",
        "collections",
        "functools",
        "pathlib",
        "warnings",
        "torch",
        "numpy",
        "pandas",
        "sklearn",
        "scipy",
        "matplotlib",
        "seaborn",
        "keras",
        "tensorflow",
        "joblib",
        "csv",
        "string",
        "copy",
        "shutil",
    }
)


def _module_of(statement: str) -> str:
    """`import numpy as np` -> numpy, `from scipy import stats` -> scipy.stats."""
    words = statement.split()
    return f"{words[1]}.{words[3]}" if words[0] == "from" else words[1]


# The module each usual alias stands for, to read a message's `np.` as the cell's `numpy.` and back.
CONVENTIONAL = {alias: _module_of(statement) for alias, statement in ALIASES.items()}


def candidates(
    cell: str,
    runtime: dict[str, Any],
    messages: Iterable[str | Crash],
    limit: int = 3,
    executed: Iterable[str] = (),
) -> list[Candidate]:
    """Up to `limit` distinct candidates, the library's own word first, then close names, imports, the
    renamed-API table, the callee's signature, the library's close names, and last a dropped keyword
    (it may change what the cell computes). `messages`: the crash as observed or found certain (a bare
    message has no line). `executed`: the cells the kernel ran; a name one of them binds is missing
    because that cell failed (a cascade), so no close name is put in its place.

    Reading the library may import it in this process (library.py): call it off the event loop."""
    out: list[Candidate] = []
    seen = {cell}
    crashes = [m if isinstance(m, Crash) else Crash(m) for m in messages]
    executed = list(executed)
    meant: set[str] = set()
    for source in executed:
        meant |= bound_names(source)
    for candidate in _all(cell, runtime, crashes, frozenset(meant), executed):
        if candidate.source not in seen:
            seen.add(candidate.source)
            out.append(candidate)
            if len(out) >= limit:
                break
    return out


def _all(
    cell: str, runtime: dict[str, Any], crashes: list[Crash], meant: frozenset[str], executed: list[str]
) -> Iterator[Candidate]:
    derived = Derivation(cell, crashes, Library(runtime, [*executed, cell]), CONVENTIONAL)
    yield from derived.named()
    yield from values(cell, crashes)
    yield from _close_members(cell, runtime)
    yield from _close_variables(cell, runtime, meant)
    yield from _imports(cell, runtime)
    for crash in crashes:
        for _entry, edited in renamed(cell, crash.message):
            yield Candidate(diff_title(cell, edited), edited, "renamed-api", first_changed(cell, edited))
    yield from derived.keywords()
    yield from derived.positionals()
    yield from derived.names()
    yield from derived.drops()


# -- close names -----------------------------------------------------------------------------------


def _entries(runtime: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every object the probe described, and their children, breadth first."""
    stack = list(runtime.get("objects") or [])
    while stack:
        entry = stack.pop(0)
        if isinstance(entry, dict):
            yield entry
            stack.extend(entry.get("children") or [])


def _fact(entry: dict[str, Any], key: str) -> Any:
    """The value of the entry's fact `key` (None when it has none)."""
    for fact in entry.get("facts") or []:
        if isinstance(fact, dict) and fact.get("key") == key:
            return fact.get("value")
    return None


def _close_of(entry: dict[str, Any]) -> list[str]:
    close = _fact(entry, "close")
    return [v for v in close if isinstance(v, str)] if isinstance(close, list) else []


def notes(runtime: dict[str, Any]) -> list[str]:
    """The messages the probe recorded reading what the cell reads and the kernel lacks (a library's own
    word on a missing attribute, e.g. NumPy naming the replacement of a removed alias)."""
    found = (_fact(entry, "note") for entry in _entries(runtime) if entry.get("missing"))
    return [note for note in found if isinstance(note, str)]


def _close_members(cell: str, runtime: dict[str, Any]) -> Iterator[Candidate]:
    """A missing key, column or attribute with a close one: `df['Agee']` -> `df['Age']`, `m.fitt` ->
    `m.fit`."""
    for entry in _entries(runtime):
        close = _close_of(entry)
        expr = entry.get("expr")
        if not entry.get("missing") or not close or not isinstance(expr, str):
            continue
        try:
            node = ast.parse(expr, mode="eval").body
        except SyntaxError:
            continue
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            key = node.slice.value
            if isinstance(key, str):
                edited = replace_keys(cell, key, close[0])
                if edited:
                    owner = ast.unparse(node.value)
                    yield Candidate(
                        f"{owner}[{key!r}] → {owner}[{close[0]!r}]", edited[0], "close-name", edited[1]
                    )
        elif (
            isinstance(node, ast.Attribute)
            and close[0].isidentifier()
            # A fitted attribute (`best_params_`) is missing because the estimator was not fitted: a
            # method of a close name (`set_params`) would run, and mean something else.
            and node.attr.endswith("_") == close[0].endswith("_")
        ):
            edited = replace_names(cell, node.attr, close[0], after_dot=True)
            if edited:
                owner = ast.unparse(node.value)
                yield Candidate(
                    f"{owner}.{node.attr} → {owner}.{close[0]}", edited[0], "close-name", edited[1]
                )


def _close_variables(cell: str, runtime: dict[str, Any], meant: frozenset[str]) -> Iterator[Candidate]:
    """An undefined name next to one the kernel has: `modle` -> `model`; not a name an executed cell
    binds (that cell failed before binding it: the fix is there)."""
    close = runtime.get("undefined_close")
    if not isinstance(close, dict):
        return
    for name, hits in close.items():
        if name in meant:
            continue
        if isinstance(name, str) and isinstance(hits, list) and hits and isinstance(hits[0], str):
            edited = replace_names(cell, name, hits[0], after_dot=False)
            if edited:
                yield Candidate(f"{name} → {hits[0]}", edited[0], "close-name", edited[1])


def _imports(cell: str, runtime: dict[str, Any]) -> Iterator[Candidate]:
    """A module read under its usual alias (or its own name, a well-known one or one the probe found
    importable) that the kernel never imported."""
    if cell.lstrip().startswith("%%"):
        return  # a cell magic must stay the first line
    importable = set(runtime.get("undefined_importable") or [])
    for name in runtime.get("undefined") or []:
        plain = name in PLAIN_MODULES or name in importable
        statement = ALIASES.get(name) or (f"import {name}" if plain else None)
        if statement:
            yield Candidate(f"add `{statement}`", f"{statement}\n{cell}", "import", 1)
