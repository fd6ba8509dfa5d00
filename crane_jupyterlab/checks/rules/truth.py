"""ValueError / RuntimeError: the truth value of an array, a Series or a DataFrame (`A or B`, `(x > 4) and
(x < 8)`, `if mask:`, `0 < x < 1` on arrays).

Precondition, from the libraries' `__bool__`: `numpy.ndarray.__bool__` raises ValueError ("The truth value
of an array with more than one element is ambiguous") when the array has more than one element;
`pandas.Series.__bool__` and `DataFrame.__bool__` (NDFrame) raise ValueError whatever their size;
`torch.Tensor.__bool__` raises RuntimeError for more than one element. Python calls `bool()` on: the first
operand of `and`/`or` (the others only if reached), the operand of `not`, the test of `if`/`while`/
`assert` and of a conditional expression, and the first comparison's result of a chained comparison
(`a < x < b` is `(a < x) and (x < b)`).

The value is the kernel's (a name, attribute or constant subscript the probe described, unchanged in the
cell up to there), or a comparison of such a numeric array/Series/tensor with a number, which is an array
(Series, tensor) of the same shape. Only sites that certainly run are claimed, and not inside a `try` that
catches the error.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ...models import Finding
from ..context import CellContext, line_of
from ..site import Site
from ..view import ObjInfo

RULE = "ambiguous-truth-value"

NUMERIC_PREFIXES = ("int", "uint", "float", "bool", "complex", "Int", "UInt", "Float", "boolean")
ORDER_OPS = (ast.Lt, ast.Gt, ast.LtE, ast.GtE, ast.Eq, ast.NotEq)


def _size(info: ObjInfo) -> int | None:
    if info.shape is None or any(not isinstance(d, int) for d in info.shape):
        return None
    n = 1
    for d in info.shape:
        assert isinstance(d, int)
        n *= d
    return n


def _kind(info: ObjInfo) -> str | None:
    """'array', 'Series', 'DataFrame' or 'Tensor' for a value whose bool() certainly raises."""
    if info.type in ("pandas.Series", "pandas.DataFrame"):
        return info.type.split(".")[1]
    size = _size(info)
    if size is None or size <= 1:
        return None
    if info.type == "numpy.ndarray":
        return "array"
    if info.type == "torch.Tensor":
        return "Tensor"
    return None


def _numeric(info: ObjInfo) -> bool:
    return isinstance(info.dtype, str) and info.dtype.startswith(NUMERIC_PREFIXES)


def _number(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Constant) and type(node.value) in (int, float)
    ) or (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, (ast.USub, ast.UAdd))
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) in (int, float)
    )  # fmt: skip


def _operand(ctx: CellContext, left: ast.expr, right: ast.expr, site: Site) -> str | None:
    """The kind of `left <op> right` when one side is a numeric array/Series/tensor and the other a number:
    an array of the same shape (a Series, a tensor)."""
    for value, other in ((left, right), (right, left)):
        if not _number(other):
            continue
        info = ctx.value_of(value, site)
        if info is not None and _numeric(info):
            return _kind(info)
    return None


def _truth_kind(ctx: CellContext, node: ast.expr, site: Site) -> tuple[str, str] | None:
    """(kind, what) when bool() of `node`'s value certainly raises."""
    if isinstance(node, ast.Compare):
        if len(node.ops) == 1 and isinstance(node.ops[0], ORDER_OPS):
            kind = _operand(ctx, node.left, node.comparators[0], site)
            if kind is not None:
                return kind, f"{ast.unparse(node)} is an element-wise comparison"
        return None
    if not isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)):
        return None
    info = ctx.value_of(node, site)
    if info is None:
        return None
    kind = _kind(info)
    if kind is None:
        return None
    shape = f" of shape {tuple(info.shape)}" if info.shape is not None and kind != "Series" else ""
    return kind, f"{ast.unparse(node)} is a {info.type}{shape}"


def _message(kind: str) -> str:
    if kind == "array":
        return (
            "ValueError: The truth value of an array with more than one element is ambiguous. "
            "Use a.any() or a.all()"
        )
    if kind == "Tensor":
        return "RuntimeError: Boolean value of Tensor with more than one value is ambiguous"
    return (
        f"ValueError: The truth value of a {kind} is ambiguous. "
        "Use a.empty, a.bool(), a.item(), a.any() or a.all()"
    )


def _tested(tree: ast.AST) -> dict[int, str]:
    """id of each expression Python calls bool() on whenever it is evaluated -> how (for the hint)."""
    out: dict[int, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.BoolOp):
            op = "and" if isinstance(node.op, ast.And) else "or"
            out[id(node.values[0])] = op
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            out[id(node.operand)] = "not"
        elif isinstance(node, (ast.If, ast.While, ast.IfExp, ast.Assert)):
            out[id(node.test)] = type(node).__name__.lower().replace("ifexp", "if")
    return out


ELEMENTWISE = (
    " `and`/`or` take the truth of the whole object: for element-wise logic use `&`/`|` with parentheses "
    "((x > 4) & (x < 8))."
)
HINTS = {
    "and": ELEMENTWISE,
    "or": ELEMENTWISE,
    "not": " For element-wise negation use `~`.",
    "chain": " A chained comparison `a < x < b` is `(a < x) and (x < b)`: write `(a < x) & (x < b)`.",
}


def check(ctx: CellContext) -> Iterator[Finding]:
    if ctx.view.source != "probe":
        return
    tested = _tested(ctx.tree)
    reported: set[int] = set()
    for site in ctx.sites:
        node = site.node
        if not site.certain or site.caught(("ValueError", "RuntimeError")):
            continue
        found: tuple[str, str] | None = None
        how = tested.get(id(node))
        if isinstance(node, ast.Compare) and len(node.ops) > 1 and isinstance(node.ops[0], ORDER_OPS):
            kind = _operand(ctx, node.left, node.comparators[0], site)  # a < x < b: bool(a < x)
            first = ast.Compare(left=node.left, ops=[node.ops[0]], comparators=[node.comparators[0]])
            how = "chain"
            found = (kind, f"{ast.unparse(first)} is an element-wise comparison") if kind else None
        elif how is not None:
            found = _truth_kind(ctx, node, site)
        line = line_of(node)
        if found is None or line is None or line in reported:
            continue
        reported.add(line)
        kind, what = found
        yield Finding(
            rule=RULE,
            message=f"{_message(kind)} (line {line}).{HINTS.get(how or '', '')}",
            evidence=[what, f"Python takes its truth value here ({how})"],
            line=line,
        )
