"""Fix candidates for a cell that will crash, drawn from what is already known about the crash:

- close names from the probe: a column, key or attribute the object lacks, or a variable the kernel lacks,
  next to one it has ("Agee" -> "Age");
- a module used under its usual alias that this kernel never imported (`np` -> `import numpy as np`);
- an API the installed library renamed or removed, by its own message (renamed.py).

Edits are made on the cell's tokens (a name inside a string or comment is never touched). A candidate is
only a proposal: the server offers it after a trial ran the edited cell to its end (server/service.py).
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from ..checks.astutil import bound_names
from .renamed import renamed

Origin = Literal["close-name", "import", "renamed-api", "model"]

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


@dataclass(frozen=True)
class Candidate:
    """One proposed edit of the whole cell."""

    title: str  # the change in a few characters: "df['Agee'] → df['Age']"
    source: str  # the whole new cell
    origin: Origin
    line: int | None = None  # the first line changed


def candidates(
    cell: str,
    runtime: dict[str, Any],
    messages: Iterable[str],
    limit: int = 3,
    executed: Iterable[str] = (),
) -> list[Candidate]:
    """Up to `limit` distinct candidates, the most specific first: close names, imports, renamed APIs.
    `executed`: the cells the kernel ran; a name one of them binds is missing because that cell failed
    (a cascade), so no close name is put in its place."""
    out: list[Candidate] = []
    seen = {cell}
    meant: set[str] = set()
    for source in executed:
        meant |= bound_names(source)
    for candidate in _all(cell, runtime, list(messages), frozenset(meant)):
        if candidate.source not in seen:
            seen.add(candidate.source)
            out.append(candidate)
            if len(out) >= limit:
                break
    return out


def _all(
    cell: str, runtime: dict[str, Any], messages: list[str], meant: frozenset[str]
) -> Iterator[Candidate]:
    yield from _close_members(cell, runtime)
    yield from _close_variables(cell, runtime, meant)
    yield from _imports(cell, runtime)
    for message in messages:
        for _entry, edited in renamed(cell, message):
            yield Candidate(_diff_title(cell, edited), edited, "renamed-api", _first_changed(cell, edited))


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
                edited = _replace_keys(cell, key, close[0])
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
            edited = _replace_names(cell, node.attr, close[0], after_dot=True)
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
            edited = _replace_names(cell, name, hits[0], after_dot=False)
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


# -- token edits -----------------------------------------------------------------------------------


def _tokens(cell: str) -> list[tokenize.TokenInfo] | None:
    try:
        return list(tokenize.generate_tokens(io.StringIO(cell).readline))
    except (tokenize.TokenError, SyntaxError):
        return None  # IPython syntax (a shell escape) or unfinished code: no edit


def _significant(tokens: list[tokenize.TokenInfo]) -> list[tokenize.TokenInfo]:
    skip = {tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT}
    return [t for t in tokens if t.type not in skip]


def _replace_names(cell: str, old: str, new: str, after_dot: bool) -> tuple[str, int] | None:
    """Every NAME token `old` (right after a dot, or not) replaced by `new`; (cell, first line) or None."""
    tokens = _tokens(cell)
    if tokens is None:
        return None
    toks = _significant(tokens)
    picks = [
        t
        for i, t in enumerate(toks)
        if t.type == tokenize.NAME
        and t.string == old
        and (i > 0 and toks[i - 1].string == ".") == after_dot
        # a keyword argument's name (f(old=...)) is not a read of the variable
        and not (
            not after_dot
            and i + 1 < len(toks)
            and toks[i + 1].string == "="
            and i > 0
            and toks[i - 1].string in ("(", ",")
        )
    ]
    return _apply(cell, [(t, new) for t in picks])


def _replace_keys(cell: str, old: str, new: str) -> tuple[str, int] | None:
    """Every plain string literal `old` used as a subscript (`[...]`) replaced by `new`, quotes kept."""
    tokens = _tokens(cell)
    if tokens is None:
        return None
    toks = _significant(tokens)
    picks = []
    for i, t in enumerate(toks):
        if t.type != tokenize.STRING or i == 0 or toks[i - 1].string not in ("[", ","):
            continue
        quote = t.string[0]
        if quote not in "'\"" or t.string.startswith(quote * 3):
            continue  # prefixed (f, b, r) or triple-quoted: left alone
        try:
            value = ast.literal_eval(t.string)
        except (ValueError, SyntaxError):
            continue
        if value == old:
            escaped = new.replace("\\", "\\\\").replace(quote, "\\" + quote)
            picks.append((t, f"{quote}{escaped}{quote}"))
    return _apply(cell, picks)


def _apply(cell: str, picks: list[tuple[tokenize.TokenInfo, str]]) -> tuple[str, int] | None:
    if not picks:
        return None
    lines = cell.splitlines(keepends=True)
    for token, text in sorted(picks, key=lambda p: p[0].start, reverse=True):
        (row, col), (end_row, end_col) = token.start, token.end
        if row != end_row:
            return None
        line = lines[row - 1]
        lines[row - 1] = line[:col] + text + line[end_col:]
    return "".join(lines), min(t.start[0] for t, _ in picks)


def _first_changed(before: str, after: str) -> int | None:
    old, new = before.splitlines(), after.splitlines()
    for i, (a, b) in enumerate(zip(old, new, strict=False), start=1):
        if a != b:
            return i
    return min(len(old), len(new)) + 1 if len(old) != len(new) else None


def _diff_title(before: str, after: str) -> str:
    """The first changed line, before → after, trimmed to the part that differs."""
    line = _first_changed(before, after)
    if line is None:
        return "edit the cell"
    old_lines, new_lines = before.splitlines(), after.splitlines()
    a = old_lines[line - 1] if line <= len(old_lines) else ""
    b = new_lines[line - 1] if line <= len(new_lines) else ""
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    end = 0
    while end < min(len(a), len(b)) - start and a[len(a) - 1 - end] == b[len(b) - 1 - end]:
        end += 1
    # Widen to whole tokens so the title reads as code: back to a separator, forward to one.
    while start > 0 and (a[start - 1].isalnum() or a[start - 1] in "_.'\"["):
        start -= 1
    old, new = a[start : len(a) - end], b[start : len(b) - end]
    while end > 0 and (a[len(a) - end].isalnum() or a[len(a) - end] in "_]"):
        old, new = old + a[len(a) - end], new + a[len(a) - end]
        end -= 1
    return f"{old.strip()} → {new.strip()}"
