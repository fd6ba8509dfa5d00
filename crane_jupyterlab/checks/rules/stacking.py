"""Arrays that cannot be stacked, lists that are not rectangular (the shape half of rules/axes).

- `np.concatenate/vstack/hstack/column_stack/stack`, `torch.cat/stack` of arrays (a literal list of
  names, or a kernel list whose items the probe shows): NumPy's `PyArray_ConcatenateArrays` needs every
  array of the same ndim and the same size on every axis but the concatenation axis (`vstack` first
  makes each array 2-D, `hstack` joins on axis 0 when the first is 1-D, `column_stack` makes 1-D
  arrays columns); `stack` needs equal shapes (ValueError). Torch's `cat` needs the same ndim and sizes
  off `dim` (RuntimeError; empty 1-D tensors are skipped, so any empty tensor makes the rule silent);
  `stack` needs equal shapes. The probe shows the first items of a long list: any two seen items that
  disagree prove the crash (presence proves), whatever the unseen ones are. An axis out of range here
  is rule `axis-out-of-range`'s.
- `np.array(x)` / `np.asarray(x)` / `torch.tensor(x)` of a list of lists whose lengths differ (or of
  arrays whose shapes differ): NumPy >= 1.24 raises ValueError ("inhomogeneous shape") unless
  `dtype=object`; torch raises ValueError ("expected sequence of length ..."). Claimed only from seen
  items, with a numeric (or no) dtype, and for NumPy only when the kernel's version is known.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from typing import Any

from ...models import Finding
from ..context import CellContext, has_star_args, kwarg, line_of
from ..flow import Site
from .axes import AXIS_RULE, array_of, axis_error, library_function, shape_text

RULE = "shape-mismatch"

STACKERS_NP = frozenset({"concatenate", "stack", "vstack", "hstack", "column_stack"})
STACKERS_TORCH = frozenset({"cat", "concat", "concatenate", "stack"})
ITEM = re.compile(r"^<(ndarray|Tensor) \(([0-9, ]*)\) ?[A-Za-z0-9_]*>$")
RAGGED_CALLS = {("numpy", "array"), ("numpy", "asarray")} | {
    ("torch", n) for n in ("tensor", "as_tensor", "FloatTensor", "LongTensor", "IntTensor", "DoubleTensor")
}
SHORT_LEN = re.compile(r"^<(?:list|tuple) len ([0-9]+)>$")
NUMERIC_DTYPES = re.compile(
    r"^(float|int|uint|bool|complex)(8|16|32|64|128)?_?$|^(f|i|u)[248]$|^(double|long|short|half|float|int)$"
)


# ----- stacking ------------------------------------------------------------------------------------------


def _seen_arrays(
    ctx: CellContext, node: ast.expr, site: Site
) -> tuple[str, list[tuple[str, list[int]]]] | None:
    """('ndarray' | 'Tensor', [(label, shape)]) for a literal list of arrays of known shapes, or the seen
    items of a kernel list/tuple whose elements are all arrays of one kind."""
    if isinstance(node, (ast.List, ast.Tuple)):
        if not node.elts or any(isinstance(e, ast.Starred) for e in node.elts):
            return None
        out: list[tuple[str, list[int]]] = []
        kinds = set()
        for elt in node.elts:
            info = array_of(ctx, elt, site)
            if info is None or info.shape is None or not all(isinstance(d, int) for d in info.shape):
                return None
            kinds.add("ndarray" if info.is_ndarray else "Tensor")
            out.append((info.expr, [int(d) for d in info.shape if d is not None]))
        return (kinds.pop(), out) if len(kinds) == 1 else None
    info = ctx.value_of(node, site)
    # The probe's items describe the kernel's own list: a list the cell derives (a slice) is another one.
    if info is None or info.type not in ("list", "tuple") or info.derived:
        return None
    kinds_seen = info.raw.get("element_types")
    items = info.raw.get("items")
    if not (isinstance(kinds_seen, list) and len(kinds_seen) == 1 and kinds_seen[0] in ("ndarray", "Tensor")):
        return None
    if not isinstance(items, list) or not items:
        return None
    out = []
    for i, item in enumerate(items):
        match = ITEM.match(item) if isinstance(item, str) else None
        if match is None or match.group(1) != kinds_seen[0]:
            return None
        shape = [int(d) for d in match.group(2).replace(" ", "").split(",") if d]
        out.append((f"{info.expr}[{i}]", shape))
    return kinds_seen[0], out


def _stack_problem(kind: str, name: str, shapes: list[tuple[str, list[int]]], axis: int | None) -> str | None:
    """Why the library refuses to join these shapes (None when it may not)."""
    if kind == "Tensor" and any(0 in s for _, s in shapes):
        return None  # torch.cat skips empty 1-d tensors
    if name == "stack":
        first_label, first = shapes[0]
        for label, shape in shapes[1:]:
            if shape != first:
                return (
                    f"{name} needs arrays of one shape: {first_label} is {shape_text(first)}, {label} is "
                    f"{shape_text(shape)}"
                )
        return None
    work = [(label, list(shape)) for label, shape in shapes]
    if name == "vstack":  # atleast_2d
        work = [(label, [1, 1] if not s else [1, *s] if len(s) == 1 else s) for label, s in work]
        axis = 0
    elif name == "hstack":  # atleast_1d, then axis 0 when the first array is 1-D
        work = [(label, s or [1]) for label, s in work]
        axis = 0 if len(work[0][1]) == 1 else 1
    elif name == "column_stack":  # 0-d and 1-D arrays become columns
        work = [(label, [1, 1] if not s else [s[0], 1] if len(s) == 1 else s) for label, s in work]
        axis = 1
    if axis is None:
        return None
    first_label, first = work[0]
    if not first:
        return None
    for label, shape in work[1:]:
        if len(shape) != len(first):
            return (
                f"{name} needs arrays of the same number of dimensions: {first_label} has {len(first)}, "
                f"{label} has {len(shape)}"
            )
    if not -len(first) <= axis < len(first):
        return None  # the axis rule speaks
    axis %= len(first)
    for label, shape in work[1:]:
        for dim, (a, b) in enumerate(zip(first, shape, strict=True)):
            if dim != axis and a != b:
                return (
                    f"{name} joins on axis {axis}, but along axis {dim} {first_label} has size {a} and "
                    f"{label} has size {b}"
                )
    return None


def _stacking(ctx: CellContext, site: Site, call: ast.Call) -> Finding | None:
    if not call.args or has_star_args(call) or not isinstance(call.func, (ast.Attribute, ast.Name)):
        return None
    lib = library_function(ctx, site, call.func)
    if lib is None or lib[1] not in (STACKERS_NP if lib[0] == "numpy" else STACKERS_TORCH):
        return None
    seen = _seen_arrays(ctx, call.args[0], site)
    if seen is None or seen[0] != ("ndarray" if lib[0] == "numpy" else "Tensor"):
        return None
    name = "stack" if lib[1] == "stack" else lib[1]
    if lib[0] == "torch" and name != "stack":
        name = "cat"
    axis: int | None = 0
    if name in ("concatenate", "stack", "cat"):
        keywords = ("axis",) if lib[0] == "numpy" else ("dim", "axis")
        node = next((kw.value for kw in call.keywords if kw.arg in keywords), None)
        if node is None and len(call.args) > 1:
            node = call.args[1]
        if node is not None:
            value = ctx.scalar(node, site)
            if type(value) is not int:
                return None
            axis = value
    first_label, first = seen[1][0]
    ndim = len(first) + (name == "stack")
    if axis is not None and first and not -ndim <= axis < ndim:
        if site.caught(("IndexError", "ValueError")):
            return None
        error = axis_error(lib[0] == "numpy", axis, ndim)
        return Finding(
            rule=AXIS_RULE,
            message=f"{error}: {first_label} has shape {shape_text(first)} ({lib[1]}, line {line_of(call)}).",
            evidence=[f"{first_label}.shape = {shape_text(first)}"],
            line=line_of(call),
        )
    problem = _stack_problem(seen[0], name, seen[1], axis)
    if problem is None or site.caught(("ValueError", "RuntimeError", "TypeError", "IndexError")):
        return None
    error = "ValueError" if lib[0] == "numpy" else "RuntimeError"
    return Finding(
        rule=RULE,
        message=f"{error}: {problem} (line {line_of(call)}).",
        evidence=[f"{label}.shape = {shape_text(shape)}" for label, shape in seen[1]],
        line=line_of(call),
    )


# ----- ragged lists --------------------------------------------------------------------------------------


def _numeric_dtype(ctx: CellContext, site: Site, node: ast.expr | None) -> bool:
    if node is None:
        return True
    if isinstance(node, ast.Name) and node.id in ("float", "int", "bool", "complex"):
        info = ctx.view.get(node.id)
        return site.pristine(node.id) and (info is None or info.module == "builtins")
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return bool(NUMERIC_DTYPES.match(node.value))
    if isinstance(node, ast.Attribute):
        path = ctx.class_path(node, site)
        if path is not None and path.split(".")[0] in ("numpy", "torch"):
            return bool(NUMERIC_DTYPES.match(path.rsplit(".", 1)[-1]))
    return False


def _row_length(item: Any) -> int | None:
    """Length of a row as the probe shows it: a JSON list, `<list len 30>` or `<[1, [2, 3]]>`."""
    if isinstance(item, list):
        return len(item)
    if not isinstance(item, str):
        return None
    match = SHORT_LEN.match(item)
    if match is not None:
        return int(match.group(1))
    if item.startswith("<") and item.endswith(">") and "..." not in item:
        try:
            value = ast.literal_eval(item[1:-1])
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return None
        if isinstance(value, (list, tuple)):
            return len(value)
    return None


def _row_lengths(ctx: CellContext, node: ast.expr, site: Site) -> list[tuple[str, int | list[int]]] | None:
    """(label, length of a list row, or shape of an array row) for the seen rows of a kernel list."""
    info = ctx.value_of(node, site)
    # The probe's items describe the kernel's own list: a list the cell derives (a slice) is another one.
    if info is None or info.type not in ("list", "tuple") or info.derived:
        return None
    kinds = info.raw.get("element_types")
    items = info.raw.get("items")
    if not isinstance(kinds, list) or not isinstance(items, list) or len(items) < 2:
        return None
    out: list[tuple[str, int | list[int]]] = []
    if set(kinds) <= {"list", "tuple"} and kinds:
        for i, item in enumerate(items):
            length = _row_length(item)
            if length is None:
                return None
            out.append((f"len({info.expr}[{i}])", length))
        return out
    seen = _seen_arrays(ctx, node, site)
    if seen is None or seen[0] != "ndarray":
        return None
    return [(f"{label}.shape", shape) for label, shape in seen[1]]


def _ragged(ctx: CellContext, site: Site, call: ast.Call) -> Finding | None:
    if len(call.args) != 1 or has_star_args(call) or not isinstance(call.func, (ast.Attribute, ast.Name)):
        return None
    lib = library_function(ctx, site, call.func)
    if lib not in RAGGED_CALLS:
        return None
    if any(kw.arg not in ("dtype", "device", "requires_grad") for kw in call.keywords):
        return None
    if not _numeric_dtype(ctx, site, kwarg(call, "dtype")):
        return None
    if lib[0] == "numpy" and not ctx.view.at_least("numpy", 1, 24):
        return None
    rows = _row_lengths(ctx, call.args[0], site)
    if rows is None or (lib[0] == "torch" and not all(isinstance(r, int) for _, r in rows)):
        return None
    first_label, first = rows[0]
    other = next(((label, r) for label, r in rows[1:] if r != first), None)
    if other is None or site.caught(("ValueError",)):
        return None

    def show(value: int | list[int]) -> str:
        return str(value) if isinstance(value, int) else shape_text(value)

    what = "setting an array element with a sequence: the requested array has an inhomogeneous shape"
    if lib[0] == "torch":
        what = "expected sequences of one length"
    return Finding(
        rule=RULE,
        message=(
            f"ValueError: {what}: {first_label} = {show(first)} but {other[0]} = {show(other[1])}; the rows "
            f"must be padded to one length first (line {line_of(call)})."
        ),
        evidence=[f"{label} = {show(r)}" for label, r in rows],
        line=line_of(call),
    )


def check(ctx: CellContext) -> Iterator[Finding]:
    for site in ctx.certain(ast.Call):
        call = site.node
        assert isinstance(call, ast.Call)
        finding = _stacking(ctx, site, call) or _ragged(ctx, site, call)
        if finding is not None:
            yield finding
