"""IndexError: a constant position beyond the end of a sequence, array, tensor or frame.

- `lst[5]`, `t[-4]` on a list/tuple/str of known length: IndexError (list index out of range);
- `arr[5]`, `arr[:, 7]`, `x[0, 9]` on a NumPy array or torch tensor: index out of bounds for that axis;
- `df.iloc[500]`, `df.iloc[:, 12]`, `s.iloc[-1000]`: IndexError (single positional indexer is
  out-of-bounds).

Evidence: the length/shape as the kernel holds the value (or as the cell derives it exactly) and the
position, a constant (or a value the runtime fixes, such as `len(x)`).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

from ...models import Finding
from ..context import CellContext, line_of
from ..evaluate import UNKNOWN
from ..flow import Site
from ..view import ObjInfo

RULE = "index-out-of-range"

SEQUENCES = ("list", "tuple", "str", "range")


def _position(ctx: CellContext, node: ast.expr, site: Site) -> int | None:
    value: Any = ctx.scalar(node, site)
    if value is UNKNOWN or type(value) is not int:
        return None
    return int(value)


def _outside(index: int, size: int) -> bool:
    return not -size <= index < size


def _axes(ctx: CellContext, site: Site, index: ast.expr) -> list[tuple[int, int]] | None:
    """(axis, position) for each constant integer of an index like `[3]`, `[:, 5]`, `[0, 9]`; None
    when a part is something else than a slice or an integer (fancy indexing, Ellipsis, None)."""
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    out: list[tuple[int, int]] = []
    for axis, part in enumerate(parts):
        if isinstance(part, ast.Slice):
            continue
        position = _position(ctx, part, site)
        if position is None:
            return None
        out.append((axis, position))
    return out


def _shape_text(shape: list[Any]) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def _item(ctx: CellContext, site: Site, node: ast.Subscript) -> Finding | None:
    if not isinstance(node.ctx, ast.Load):
        return None
    base = ctx.value_of(node.value, site)
    if base is None or base.missing:
        return None
    if base.type in SEQUENCES:
        position = _position(ctx, node.slice, site)
        size = base.length
        if position is None or size is None or not _outside(position, size):
            return None
        kind = {"str": "string", "range": "range object"}.get(base.type, base.type)
        return _finding(
            node, f"{kind} index out of range: {base.expr}[{position}] but len({base.expr}) is {size}", base
        )
    if base.is_ndarray or base.is_tensor:
        return _array_item(ctx, site, node, base)
    return None


def _array_item(ctx: CellContext, site: Site, node: ast.Subscript, base: ObjInfo) -> Finding | None:
    shape = base.shape
    if shape is None:
        return None
    axes = _axes(ctx, site, node.slice)
    parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    if axes is None or len(parts) > len(shape):
        return None
    for axis, position in axes:
        size = shape[axis]
        if isinstance(size, int) and _outside(position, size):
            where = "axis" if base.is_ndarray else "dimension"
            return _finding(
                node,
                f"index {position} is out of bounds for {where} {axis} with size {size} "
                f"({base.expr} has shape {_shape_text(shape)})",
                base,
            )
    return None


def _iloc(ctx: CellContext, site: Site, node: ast.Subscript) -> Finding | None:
    """`df.iloc[k]` / `df.iloc[:, k]` / `s.iloc[k]` with an integer position out of bounds."""
    value = node.value
    if not (isinstance(node.ctx, ast.Load) and isinstance(value, ast.Attribute) and value.attr == "iloc"):
        return None
    base = ctx.value_of(value.value, site)
    if base is None or base.shape is None or not (base.is_frame or base.is_series):
        return None
    axes = _axes(ctx, site, node.slice)
    parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    if axes is None or len(parts) > len(base.shape):
        return None
    for axis, position in axes:
        size = base.shape[axis]
        if isinstance(size, int) and _outside(position, size):
            return _finding(
                node,
                f"single positional indexer is out-of-bounds: {base.expr}.iloc position {position} on axis "
                f"{axis} of size {size}",
                base,
            )
    return None


def _finding(node: ast.Subscript, what: str, base: ObjInfo) -> Finding:
    evidence = [
        f"{base.expr}.shape = {_shape_text(base.shape)}"
        if base.shape
        else f"len({base.expr}) = {base.length}"
    ]
    if base.derived:
        evidence.append(base.derived)
    return Finding(
        rule=RULE,
        message=f"IndexError: {what} (line {line_of(node)}).",
        evidence=evidence,
        line=line_of(node),
    )


def check(ctx: CellContext) -> Iterator[Finding]:
    for site in ctx.certain(ast.Subscript):
        node = site.node
        assert isinstance(node, ast.Subscript)
        if site.caught(("IndexError",)):
            continue
        finding = _item(ctx, site, node) or _iloc(ctx, site, node)
        if finding is not None:
            yield finding
