"""The one cell transform (kernel/cell.py): IPython's own transformer where IPython is loaded, and a stdlib
fallback that agrees with it on plain Python (IPython's cleanup transforms: leading blank lines, common
indentation, pasted `>>>` and `In [n]:` prompts). Line numbers stay the cell's."""

from __future__ import annotations

import ast

import pytest

from crane_jupyterlab.checks.cell import parse_cell
from crane_jupyterlab.kernel import cell

inputtransformer2 = pytest.importorskip("IPython.core.inputtransformer2")

PLAIN = [
    "x = 1\ny = x + 1",
    "    x = 1\n    y = x + 1\n",  # pasted with a common indentation
    "\tfor i in range(3):\n\t    print(i)",
    "\n\n   a = 1\n   b = 2",  # leading blank lines, then indented code
    "  \n\t\n  z = 3",
    "    if x:\n        y = 1\n    else:\n        y = 2",
    "    x = 1\n  y = 2",  # less indented after: IPython keeps it, and it does not parse
    ">>> a = 1\n>>> b = a + 1\n>>> b",
    ">>> def f(x):\n...     return x\n>>> f(2)",
    ">>>\n>>> x = 1",
    "x = 1\n>>> y = 2",  # only the first two lines decide
    "x = 1\n... y = 2",  # `...` is Python's Ellipsis unless a `>>>` line is there
    "    >>> a = 1\n    ... \n    >>> a",  # doctest prompts, indented
    'x = """\n>>> kept\n"""\n>>> y = 1',  # a prompt inside a string the code opens is text
    '>>> s = """\n... >>> inner\n... """',
    "In [1]: a = 1\n   ...: b = 2\n   ...: a + b",
    "In [12]: for i in range(2):\n    ...:     print(i)",
    "[ins] In [3]: x = 2",
    "print('>>> not a prompt')\ny = '''\n    In [1]: text\n'''",
    "s = '''\n    indented text\n'''",
    "x = [\n    1,\n    2,\n]",
    "# only a comment",
    "",
    "\n\n",
    "a = 1 \\\n    + 2",
    "x = 1\r\ny = 2\r\n",
    "async def f():\n    await g()",
    "x = 1;",
]


@pytest.mark.parametrize("source", PLAIN)
def test_the_fallback_agrees_with_ipython_on_plain_python(source: str) -> None:
    ipython = inputtransformer2.TransformerManager().transform_cell(source)
    assert cell.fallback(source) == ipython


@pytest.mark.parametrize("source", PLAIN)
def test_line_numbers_are_the_cells(source: str) -> None:
    for text in (cell.runnable(source), cell._keep_line_numbers(source, cell.fallback(source))):
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        lines = source.splitlines()
        for node in ast.walk(tree):
            if isinstance(node, ast.stmt) and not isinstance(node, ast.Expr):
                # The statement's first word is on that line of the cell.
                first = ast.get_source_segment(text, node) or ""
                assert first.split()[0] in lines[node.lineno - 1], (source, node.lineno)


def test_a_pasted_or_indented_cell_is_no_syntax_error() -> None:
    for source in ("    x = 1\n    y = x", ">>> x = 1\n>>> x", "In [1]: x = 1\n   ...: x", "\n  x = 1"):
        assert parse_cell(source)[1] is None
    error = parse_cell("    x = 1\n  y = 2")[1]  # as IPython: the dedent does not make it valid
    assert error is not None and error.msg == "unexpected indent"


def test_magics_become_python_with_or_without_ipython() -> None:
    source = "    %time x = 1\n    y = x"
    assert cell.runnable(source) == inputtransformer2.TransformerManager().transform_cell(source)
    assert "run_line_magic('time', 'x = 1')" in cell.runnable(source)
    assert cell.fallback(source) == "pass\ny = x\n"
    assert cell.python_source("%%bash\nls") == ""
    assert cell.python_source("%%time\n  a = 1\n  b = a").splitlines() == ["", "a = 1", "b = a"]


def test_the_shells_own_transform_is_used() -> None:
    class Shell:
        def transform_cell(self, source: str) -> str:
            return "x = 'the shell'\n"

    class Broken:
        def transform_cell(self, source: str) -> str:
            raise ValueError("broken")

    assert cell.runnable("  x = 1", Shell()) == "x = 'the shell'\n"
    assert cell.runnable("  x = 1", Broken()) == "x = 1\n"  # the fallback, never an error


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('total = df["age"].sum(', True),  # an open bracket
        ("if x:", True),  # an open block
        ('s = """abc', True),  # an open triple-quoted string
        ('df.plot(\n  x="a",', True),
        ('s = "abc', False),  # a one-line string cannot continue: invalid as it stands
        ("x = 1 +", False),
        ("print(1))", False),
        ("def f(:", False),  # IPython's check says incomplete (a bracket is open); Python knows better
        ("x = 1", False),  # complete
        ("%time x = (1,", False),  # a line magic takes its line as it is
    ],
)
def test_unfinished_code_is_told_from_invalid_code(source: str, expected: bool) -> None:
    from crane_jupyterlab.checks.cell import unfinished

    assert unfinished(source) is expected
