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


def unfinished(source: str) -> bool:
    """Whether the cell is code still being typed: it does not parse, IPython's own completeness check
    (the console's "more input?" test) says it is incomplete (an open bracket, block or string), and
    Python agrees that more lines could complete it. Code invalid as it stands (`x = 1 +`, `print(1))`,
    `def f(:`) is not unfinished: it is a syntax error."""
    if parse_cell(source)[1] is None:
        return False
    try:
        from IPython.core.inputtransformer2 import TransformerManager
    except ImportError:  # a server without IPython: Python's own test alone
        pass
    else:
        try:
            if TransformerManager().check_complete(source)[0] != "incomplete":  # type: ignore[no-untyped-call]
                return False
        except Exception:
            return False
    import codeop

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return codeop.compile_command(to_python(source), "<cell>", "exec") is None
    except (SyntaxError, ValueError, OverflowError, MemoryError, RecursionError):
        return False
