"""Array shapes that cannot go together.

- `A @ B`, `A.dot(B)`, `np.dot(A, B)`: inner dimensions differ (ValueError in NumPy, RuntimeError in torch);
- `A + B` (and -, *, /, //, %, **): shapes that do not broadcast;
- `X[mask]`, `X[y == 1]`: a boolean mask whose length differs from X's first axis (IndexError);
- `plt.plot(x, y)`, `ax.plot(x, y)`, `scatter(x, y)`: x and y of different lengths (ValueError).

Evidence: the shapes of the operands as the kernel holds them (both must be NumPy arrays, or both torch
tensors; pandas aligns on labels instead and is left alone).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ...models import Finding
from ..context import CellContext, const_str, has_star_args, line_of
from ..flow import Site
from ..view import ObjInfo, type_class

RULE = "shape-mismatch"

ELEMENTWISE = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)
COMPARISONS = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def _array(ctx: CellContext, node: ast.expr, site: Site) -> ObjInfo | None:
    info = ctx.value_of(node, site)
    if info is None or info.shape is None or not all(isinstance(d, int) for d in info.shape):
        return None
    if info.is_ndarray or info.is_("torch", "Tensor"):
        return info
    return None


def _same_library(a: ObjInfo, b: ObjInfo) -> bool:
    return a.is_ndarray == b.is_ndarray


def _error(a: ObjInfo) -> str:
    return "ValueError" if a.is_ndarray else "RuntimeError"


def _shape(info: ObjInfo) -> str:
    dims = info.shape or []
    return "(" + ", ".join(map(str, dims)) + ("," if len(dims) == 1 else "") + ")"


def _matmul_mismatch(a: list[int], b: list[int]) -> tuple[int, int] | None:
    """(k_a, k_b) when the contracted dimensions differ."""
    if not a or not b:
        return None  # 0-d operands fail differently; leave them
    k_a = a[-1]
    k_b = b[0] if len(b) == 1 else b[-2]
    return (k_a, k_b) if k_a != k_b else None


def _broadcast_fails(a: list[int], b: list[int]) -> bool:
    return any(x != y and x != 1 and y != 1 for x, y in zip(reversed(a), reversed(b), strict=False))


def _matmul(ctx: CellContext, site: Site, node: ast.expr) -> Finding | None:
    pair: tuple[ast.expr, ast.expr] | None = None
    what = "@"
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        pair = (node.left, node.right)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "dot":
        if len(node.args) == 1 and not node.keywords:
            pair, what = (node.func.value, node.args[0]), "dot"
        elif len(node.args) == 2 and not node.keywords:
            path = ctx.class_path(node.func, site)
            if path is not None and path.split(".")[0] == "numpy":
                pair, what = (node.args[0], node.args[1]), "np.dot"
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "matmul":
        path = ctx.class_path(node.func, site)
        if (
            path is not None
            and path.split(".")[0] in ("numpy", "torch")
            and len(node.args) == 2
            and not node.keywords
        ):
            pair, what = (node.args[0], node.args[1]), "@"
    if pair is None:
        return None
    a, b = _array(ctx, pair[0], site), _array(ctx, pair[1], site)
    if a is None or b is None or not _same_library(a, b) or a.shape is None or b.shape is None:
        return None
    if what != "@" and (len(a.shape) > 2 or len(b.shape) > 2):
        return None  # dot of N-d arrays contracts other axes
    mismatch = _matmul_mismatch(a.shape, b.shape)  # type: ignore[arg-type]
    if mismatch is None or site.caught((_error(a),)):
        return None
    return Finding(
        rule=RULE,
        message=(
            f"{_error(a)}: {a.expr} {_shape(a)} {what} {b.expr} {_shape(b)}: the inner dimensions "
            f"{mismatch[0]} and {mismatch[1]} differ (line {line_of(node)})."
        ),
        evidence=[f"{a.expr}.shape = {_shape(a)}", f"{b.expr}.shape = {_shape(b)}"],
        line=line_of(node),
    )


def _elementwise(ctx: CellContext, site: Site, node: ast.BinOp) -> Finding | None:
    if not isinstance(node.op, ELEMENTWISE):
        return None
    a, b = _array(ctx, node.left, site), _array(ctx, node.right, site)
    if a is None or b is None or not _same_library(a, b) or a.shape is None or b.shape is None:
        return None
    if not _broadcast_fails(a.shape, b.shape) or site.caught((_error(a),)):  # type: ignore[arg-type]
        return None
    return Finding(
        rule=RULE,
        message=(
            f"{_error(a)}: operands could not be broadcast together: {a.expr} {_shape(a)} and {b.expr} "
            f"{_shape(b)} (line {line_of(node)})."
        ),
        evidence=[f"{a.expr}.shape = {_shape(a)}", f"{b.expr}.shape = {_shape(b)}"],
        line=line_of(node),
    )


def _mask_length(ctx: CellContext, site: Site, index: ast.expr) -> tuple[ObjInfo, int] | None:
    """The array a boolean mask comes from, and the mask's length."""
    if isinstance(index, ast.Compare) and len(index.ops) == 1 and isinstance(index.ops[0], COMPARISONS):
        other = index.comparators[0]
        if (
            isinstance(other, ast.Constant)
            and isinstance(other.value, (int, float))
            and not isinstance(other.value, bool)
        ):
            source = _array(ctx, index.left, site)
            if source is not None and source.shape is not None and len(source.shape) == 1:
                return source, int(source.shape[0])  # type: ignore[arg-type]
        return None
    mask = _array(ctx, index, site)
    if mask is not None and mask.dtype == "bool" and mask.shape is not None and len(mask.shape) == 1:
        return mask, int(mask.shape[0])  # type: ignore[arg-type]
    return None


def _boolean_index(ctx: CellContext, site: Site, node: ast.Subscript) -> Finding | None:
    if not isinstance(node.ctx, ast.Load):
        return None
    base = _array(ctx, node.value, site)
    if base is None or base.shape is None or not base.shape:
        return None
    index = node.slice.elts[0] if isinstance(node.slice, ast.Tuple) and node.slice.elts else node.slice
    found = _mask_length(ctx, site, index)
    if found is None or not _same_library(base, found[0]) or found[1] == base.shape[0]:
        return None
    if site.caught(("IndexError",)):
        return None
    return Finding(
        rule=RULE,
        message=(
            f"IndexError: boolean index did not match: the mask from {found[0].expr} has {found[1]} entries "
            f"but {base.expr} has {base.shape[0]} rows (line {line_of(node)})."
        ),
        evidence=[f"{base.expr}.shape = {_shape(base)}", f"{found[0].expr}.shape = {_shape(found[0])}"],
        line=line_of(node),
    )


def _is_axes_call(ctx: CellContext, site: Site, func: ast.Attribute) -> bool:
    """`plt.plot` on pyplot, or `ax.plot` on an Axes (a kernel Axes, or one `plt.subplots()` made here)."""
    path = ctx.class_path(func, site)
    if path is not None and path.split(".")[0] == "matplotlib":
        return True
    owner = ctx.value_of(func.value, site)
    if owner is not None:
        return owner.type.split(".")[0] == "matplotlib" and type_class(owner.type) in ("Axes", "AxesSubplot")
    if isinstance(func.value, ast.Name):
        unpacked = site.unpacked_from(func.value.id)
        if unpacked is not None:
            call, position = unpacked
            made = ctx.class_path(call.func, site) if isinstance(call.func, ast.Attribute) else None
            return (
                made is not None
                and made.split(".")[0] == "matplotlib"
                and made.endswith(".subplots")
                and position == 1
            )
    return False


def _length_1d(info: ObjInfo | None) -> int | None:
    """The length of a 1-D sequence of numbers matplotlib takes as x or y: a 1-D array or Series, a
    range, or a list/tuple whose elements (all shown) are numbers."""
    if info is None:
        return None
    if info.is_ndarray or info.is_series:
        shape = info.shape
        return shape[0] if shape is not None and len(shape) == 1 and isinstance(shape[0], int) else None
    if info.type == "range":
        return info.length
    if info.type in ("list", "tuple") and info.items is not None and info.length == len(info.items):
        numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in info.items)
        return info.length if numbers else None
    return None


def _length_fact(info: ObjInfo, n: int) -> str:
    return f"{info.expr}.shape = {_shape(info)}" if info.shape is not None else f"len({info.expr}) = {n}"


def _plot_lengths(ctx: CellContext, site: Site, call: ast.Call) -> Finding | None:
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr in ("plot", "scatter")) or has_star_args(call):
        return None
    data = list(call.args)
    if func.attr == "plot" and len(data) == 3 and const_str(data[2]) is not None:
        data = data[:2]
    if len(data) != 2 or (func.attr == "plot" and any(kw.arg == "data" for kw in call.keywords)):
        return None
    x, y = (ctx.value_of(arg, site) for arg in data)
    n_x, n_y = _length_1d(x), _length_1d(y)
    if x is None or y is None or n_x is None or n_y is None or n_x == n_y:
        return None
    if not _is_axes_call(ctx, site, func) or site.caught(("ValueError",)):
        return None
    verb = (
        "x and y must have same first dimension" if func.attr == "plot" else "x and y must be the same size"
    )
    return Finding(
        rule=RULE,
        message=(
            f"ValueError: {verb}: {x.expr} has {n_x} values, {y.expr} has {n_y} "
            f"({func.attr}, line {line_of(call)})."
        ),
        evidence=[_length_fact(x, n_x), _length_fact(y, n_y)],
        line=line_of(call),
    )


def _reshape(ctx: CellContext, site: Site, call: ast.Call) -> Finding | None:
    """`x.reshape(a, b)`, `np.reshape(x, (a, b))`, `t.view(a, -1)`: a shape whose size differs from the
    array's (or that -1 cannot complete)."""
    func = call.func
    if not isinstance(func, ast.Attribute) or has_star_args(call):
        return None
    if func.attr in ("reshape", "view") and (call.args or not call.keywords):
        target = ctx.value_of(func.value, site)
        dims_nodes = list(call.args)
        if target is not None and target.is_ndarray and func.attr == "view":
            return None  # ndarray.view(dtype) reinterprets, it does not reshape
        if call.keywords and not (
            target is not None and target.is_ndarray and [k.arg for k in call.keywords] == ["order"]
        ):
            return None
    else:
        return None
    if target is None and func.attr == "reshape" and len(call.args) == 2:
        path = ctx.class_path(func, site)
        if path is None or path.split(".")[0] != "numpy":
            return None
        target, dims_nodes = ctx.value_of(call.args[0], site), [call.args[1]]
    if target is None or not (target.is_ndarray or target.is_tensor) or target.shape is None:
        return None
    if not all(isinstance(d, int) for d in target.shape):
        return None
    if len(dims_nodes) == 1 and isinstance(dims_nodes[0], (ast.Tuple, ast.List)):
        dims_nodes = list(dims_nodes[0].elts)
    dims = [ctx.scalar(d, site) for d in dims_nodes]
    if not dims or not all(type(d) is int for d in dims):
        return None
    size = 1
    for d in target.shape:
        size *= d  # type: ignore[operator]
    known = 1
    for d in dims:
        if d != -1:
            known *= d
    if any(d < -1 for d in dims) or dims.count(-1) > 1:
        return None
    fits = (known != 0 and size % known == 0) if -1 in dims else known == size
    if fits or site.caught((_error(target),)):
        return None
    wanted = "(" + ", ".join(map(str, dims)) + ("," if len(dims) == 1 else "") + ")"
    if target.is_ndarray:
        message = f"ValueError: cannot reshape array of size {size} into shape {wanted}"
    else:
        message = f"RuntimeError: shape '[{', '.join(map(str, dims))}]' is invalid for input of size {size}"
    return Finding(
        rule=RULE,
        message=f"{message}: {target.expr} has shape {_shape(target)} (line {line_of(call)}).",
        evidence=[f"{target.expr}.shape = {_shape(target)}", *([target.derived] if target.derived else [])],
        line=line_of(call),
    )


def _imshow(ctx: CellContext, site: Site, call: ast.Call) -> Finding | None:
    """`plt.imshow(x)` / `ax.imshow(x)`: matplotlib takes (M, N), (M, N, 1), (M, N, 3) or (M, N, 4)
    ("Invalid shape (3, 32, 32) for image data": a channels-first tensor)."""
    func = call.func
    if (
        not (isinstance(func, ast.Attribute) and func.attr == "imshow")
        or not call.args
        or has_star_args(call)
    ):
        return None
    image = _array(ctx, call.args[0], site)
    if image is None or image.shape is None or not _is_axes_call(ctx, site, func):
        return None
    shape = list(image.shape)
    if len(shape) == 3 and shape[-1] == 1:
        shape = shape[:-1]
    if len(shape) == 2 or (len(shape) == 3 and shape[-1] in (3, 4)) or site.caught(("TypeError",)):
        return None
    return Finding(
        rule=RULE,
        message=(
            f"TypeError: Invalid shape {tuple(image.shape)} for image data: imshow takes (M, N), (M, N, "
            "3) or "
            f"(M, N, 4); {image.expr} is {_shape(image)} (line {line_of(call)})."
        ),
        evidence=[f"{image.expr}.shape = {_shape(image)}", *([image.derived] if image.derived else [])],
        line=line_of(call),
    )


def check(ctx: CellContext) -> Iterator[Finding]:
    for site in ctx.sites:
        if not site.certain:
            continue
        node = site.node
        finding: Finding | None = None
        if isinstance(node, ast.BinOp):
            finding = _matmul(ctx, site, node) or _elementwise(ctx, site, node)
        elif isinstance(node, ast.Call):
            finding = (
                _matmul(ctx, site, node)
                or _plot_lengths(ctx, site, node)
                or _reshape(ctx, site, node)
                or _imshow(ctx, site, node)
            )
        elif isinstance(node, ast.Subscript):
            finding = _boolean_index(ctx, site, node)
        if finding is not None:
            yield finding
