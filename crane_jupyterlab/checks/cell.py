"""Parsing a notebook cell the way IPython will compile it.

Cells may hold IPython syntax (`%matplotlib inline`, `!pip ...`, `x?`): it is turned into plain Python
first, by the same transform the probe uses in the kernel (`kernel/cell.py`), so a magic is never
mistaken for a syntax error.
"""

from __future__ import annotations

import ast
import contextlib
import warnings
from dataclasses import dataclass
from functools import lru_cache

from ..kernel.cell import python_source


@dataclass(frozen=True)
class CellSyntaxError:
    line: int | None
    col: int | None
    msg: str


def to_python(source: str) -> str:
    """The cell as the plain Python IPython compiles (the probe's own transform, `kernel/cell.py`)."""
    # The kernel's own transform (kernel/cell.py) uses IPython's transformer when IPython is loaded.
    with contextlib.suppress(ImportError):
        import IPython.core.inputtransformer2  # noqa: F401
    return python_source(source)


@lru_cache(maxsize=256)
def parse_cell(source: str) -> tuple[ast.Module | None, CellSyntaxError | None]:
    """The cell's module AST, or the syntax error IPython's compiler would raise.

    `compile` runs after `ast.parse` because some errors (`return` outside a function, `break` outside
    a loop) come from the compiler only. Top-level `await` is allowed, as in IPython.
    """
    code = to_python(source)
    try:
        # The user's invalid escapes ("\d" in a plain string) would warn into the server's log on every
        # check; the kernel shows them to the user when the cell runs.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(code)
            compile(tree, "<cell>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
    except SyntaxError as exc:
        return None, CellSyntaxError(exc.lineno, exc.offset, exc.msg)
    except (ValueError, RecursionError, MemoryError) as exc:  # null bytes, absurd nesting
        return None, CellSyntaxError(None, None, str(exc))
    return tree, None
