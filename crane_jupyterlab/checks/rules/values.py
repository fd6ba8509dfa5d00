"""Calls whose arguments the values at hand cannot satisfy.

- `lst.remove(x)` / `lst.index(x)`: x is not among the list's elements (ValueError);
- `train_test_split(..., stratify=y)`: some class of y has a single member (ValueError);
- `arr /= 255.0`, `arr *= 0.5`: in-place float arithmetic on an integer NumPy array (UFuncTypeError);
- `s.str` / `s.dt` on a Series of numbers (AttributeError: Can only use .str accessor with string values);
- `np.concatenate(a, b)` / `np.stack(a, b)`: an array where the axis belongs (TypeError).

Evidence: the complete elements of a small list, value counts (their least frequent values included),
dtypes and shapes as the kernel holds them.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ...models import Finding
from ..context import CellContext, has_star_args, kwarg, line_of
from ..flow import Site

RULE = "bad-value"

NUMERIC_DTYPE_PREFIXES = ("int", "uint", "float", "bool", "Int", "UInt", "Float", "complex")


def _list_lookup(ctx: CellContext, site: Site, call: ast.Call) -> Finding | None:
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr in ("remove", "index")) or len(call.args) != 1:
        return None
    if call.keywords or not isinstance(call.args[0], ast.Constant):
        return None
    lst = ctx.value_of(func.value, site)
    value = call.args[0].value
    if lst is None or lst.type != "list" or lst.items is None or value in lst.items:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int, float)) or site.caught(("ValueError",)):
        return None
    return Finding(
        rule=RULE,
        message=f"ValueError: list.{func.attr}(x): {value!r} is not in {lst.expr} (line {line_of(call)}).",
        evidence=[f"{lst.expr} = {lst.items}"],
        line=line_of(call),
    )


def _stratify(ctx: CellContext, site: Site, call: ast.Call) -> Finding | None:
    path = ctx.class_path(call.func, site) if isinstance(call.func, (ast.Name, ast.Attribute)) else None
    if path is None or not path.startswith("sklearn.") or not path.endswith(".train_test_split"):
        return None
    stratify = kwarg(call, "stratify")
    y = ctx.value_of(stratify, site) if stratify is not None else None
    if y is None or not y.counts or site.caught(("ValueError",)):
        return None
    single = [value for value, count in y.counts if count == 1]
    if not single:
        return None
    return Finding(
        rule=RULE,
        message=(
            f"ValueError: the least populated class in {y.expr} ({single[0]!r}) has only 1 member, too few "
            f"for a stratified split (line {line_of(call)})."
        ),
        evidence=[f"{y.expr}.value_counts() includes {single[0]!r}: 1"],
        line=line_of(call),
    )


def _inplace_float(ctx: CellContext, site: Site, node: ast.AugAssign) -> Finding | None:
    if not isinstance(node.target, ast.Name) or site.caught(("TypeError",)):
        return None
    arr = ctx.value_of(node.target, site)
    if arr is None or not arr.is_ndarray or not arr.dtype or not arr.dtype.startswith(("int", "uint")):
        return None
    value = node.value
    float_operand = isinstance(value, ast.Constant) and isinstance(value.value, float)
    if not (
        isinstance(node.op, ast.Div) or (float_operand and isinstance(node.op, (ast.Mult, ast.Add, ast.Sub)))
    ):
        return None
    return Finding(
        rule=RULE,
        message=(
            f"UFuncTypeError: {arr.expr} is a {arr.dtype} array; the in-place "
            f"{type(node.op).__name__.lower()} produces floats that cannot be stored back into it "
            f"(line {line_of(node)})."
        ),
        evidence=[f"{arr.expr}.dtype = {arr.dtype}"],
        line=line_of(node),
    )


def _accessor(ctx: CellContext, site: Site, node: ast.Attribute) -> Finding | None:
    if node.attr not in ("str", "dt") or not isinstance(node.ctx, ast.Load):
        return None
    series = ctx.value_of(node.value, site)
    if series is None or not series.is_("pandas", "Series") or not series.dtype:
        return None
    if not series.dtype.startswith(NUMERIC_DTYPE_PREFIXES) or site.caught(("AttributeError",)):
        return None
    wanted = "string" if node.attr == "str" else "datetimelike"
    return Finding(
        rule=RULE,
        message=(
            f"AttributeError: Can only use .{node.attr} accessor with {wanted} values: {series.expr} is "
            f"{series.dtype} (line {line_of(node)})."
        ),
        evidence=[f"{series.expr}.dtype = {series.dtype}"],
        line=line_of(node),
    )


def _concatenate_axis(ctx: CellContext, site: Site, call: ast.Call) -> Finding | None:
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr in ("concatenate", "stack")) or has_star_args(call):
        return None
    path = ctx.class_path(func, site)
    if path is None or path.split(".")[0] != "numpy" or len(call.args) < 2:
        return None
    axis = ctx.value_of(call.args[1], site)
    if axis is None or not axis.is_ndarray or axis.shape is None or len(axis.shape) == 0:
        return None
    size = 1
    for dim in axis.shape:
        size *= dim or 0
    if size == 1 or site.caught(("TypeError",)):
        return None
    return Finding(
        rule=RULE,
        message=(
            f"TypeError: np.{func.attr} takes the arrays as one sequence; its second argument is the axis, "
            f"and {axis.expr} (an array) cannot be one (line {line_of(call)})."
        ),
        evidence=[f"{axis.expr}.shape = {tuple(axis.shape)}"],
        line=line_of(call),
    )


def check(ctx: CellContext) -> Iterator[Finding]:
    augmented = {id(n.value): n for n in ast.walk(ctx.tree) if isinstance(n, ast.AugAssign)}
    for site in ctx.sites:
        if not site.certain:
            continue
        node = site.node
        finding: Finding | None = None
        if isinstance(node, ast.Call):
            finding = (
                _list_lookup(ctx, site, node)
                or _stratify(ctx, site, node)
                or _concatenate_axis(ctx, site, node)
            )
        elif isinstance(node, ast.Attribute):
            finding = _accessor(ctx, site, node)
        if finding is None and id(node) in augmented:
            finding = _inplace_float(ctx, site, augmented[id(node)])
        if finding is not None:
            yield finding
