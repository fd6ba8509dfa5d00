"""Axes that an array does not have (NumPy AxisError, torch "Dimension out of range").

- `a.argmax(axis=1)`, `np.sum(a, 1)`, `np.expand_dims(a, 3)`, `t.softmax(dim=2)`, `torch.argmax(t, 1)`,
  `F.softmax(x, dim=1)`, `t.size(2)`, `np.concatenate(seq, axis=2)`: a constant axis outside the
  array's dimensions. Precondition (NumPy): `normalize_axis_index(axis, ndim)` / `normalize_axis_tuple`
  require `-ndim <= axis < ndim` (`ndim + 1` for `expand_dims` and `stack`), else
  `numpy.exceptions.AxisError` ("axis 1 is out of bounds for array of dimension 1"); 0-d arrays are
  left alone (reductions accept axis 0 on them). Torch: `maybe_wrap_dim(dim, ndim)` requires
  `-ndim <= dim < ndim` (`ndim + 1` for `unsqueeze`/`stack`), else IndexError ("Dimension out of
  range"); 0-d tensors are left alone (torch wraps them as 1-d).
- `a.swapaxes(1, 2)`, `t.transpose(1, 2)`, `np.moveaxis(a, 0, 3)`: the same bounds for each axis;
  `a.transpose(2, 0, 1)` / `t.permute(2, 0, 1)`: the order must name every axis once (NumPy
  "axes don't match array", torch "number of dimensions ... does not match").

Stacking and ragged lists are rules/stacking's (it uses the helpers here).

pandas: `s.sum(axis=1)` / `np.argmax(s, axis=1)` on a Series, `df.mean(axis=2)`: `_get_axis_number`
raises ValueError ("No axis named 1 for object type Series"); claimed only for integer axes outside
[-ndim, ndim), where NumPy's conversion path would fail too.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

from ...models import Finding
from ..context import CellContext, has_star_args, kwarg, line_of
from ..evaluate import UNKNOWN
from ..flow import Site
from ..view import ObjInfo

AXIS_RULE = "axis-out-of-range"
RULE = AXIS_RULE

# name -> (positional index of the axis among the arguments after the array, tuples allowed, extra
# room: 1 when the result has one more dimension, as in expand_dims/unsqueeze)
NUMPY_AXIS: dict[str, tuple[int, bool, int]] = {
    **{n: (0, True, 0) for n in ("sum", "mean", "max", "min", "std", "var", "prod", "any", "all",
                                 "amax", "amin", "median", "average", "nanmean", "nansum", "nanmax",
                                 "nanmin", "nanstd", "nanvar", "nanmedian", "nanprod", "squeeze", "flip",
                                 "count_nonzero")},
    **{n: (0, False, 0) for n in ("argmax", "argmin", "cumsum", "cumprod", "sort", "argsort",
                                  "nanargmax", "nanargmin", "nancumsum")},
    "expand_dims": (0, True, 1),
    "take": (1, False, 0),
    "repeat": (1, False, 0),
    "roll": (1, True, 0),
    "delete": (1, False, 0),
}  # fmt: skip
# ndarray methods (the array is the receiver); functions take it first
NUMPY_METHODS = frozenset(
    {"sum", "mean", "max", "min", "std", "var", "prod", "any", "all", "squeeze", "argmax", "argmin",
     "cumsum", "cumprod", "sort", "argsort", "take", "repeat"}
)  # fmt: skip
TORCH_DIM: dict[str, tuple[int, bool, int]] = {
    **{n: (0, True, 0) for n in ("sum", "mean", "std", "var", "amax", "amin", "nansum", "nanmean",
                                 "logsumexp", "count_nonzero", "squeeze")},
    **{n: (0, False, 0) for n in ("max", "min", "argmax", "argmin", "prod", "cumsum", "cumprod",
                                  "softmax", "log_softmax", "argsort", "sort", "median", "size",
                                  "unbind", "select", "narrow")},
    "unsqueeze": (0, False, 1),
    "topk": (1, False, 0),
    "chunk": (1, False, 0),
    "split": (1, False, 0),
    "flip": (0, True, 0),
}  # fmt: skip
TORCH_FUNCTIONS_ONLY = frozenset({"softmax", "log_softmax"})  # torch.nn.functional as well as torch


def _dims(value: Any) -> list[int] | None:
    """An int axis -> [axis]; a tuple of ints -> its items; else None."""
    if type(value) is int:
        return [value]
    if isinstance(value, tuple) and value and all(type(v) is int for v in value):
        return list(value)
    return None


def _axis_value(ctx: CellContext, node: ast.expr, site: Site) -> list[int] | None:
    if isinstance(node, (ast.Tuple, ast.List)):
        values = tuple(ctx.scalar(e, site) for e in node.elts)
        return _dims(values) if all(v is not UNKNOWN for v in values) else None
    value = ctx.scalar(node, site)
    return None if value is UNKNOWN else _dims(value)


def library_function(ctx: CellContext, site: Site, func: ast.expr) -> tuple[str, str] | None:
    """('numpy' | 'torch', name) for `np.argmax`, `torch.sum`, `F.softmax`, `from numpy import sum`."""
    path = ctx.class_path(func, site)
    if path is None:
        return None
    parts = path.split(".")
    if parts[0] == "numpy" and (len(parts) == 2 or parts[1] in ("core", "_core", "lib", "ma")):
        return "numpy", parts[-1]
    if parts[0] == "torch" and (len(parts) == 2 or parts[1:3] == ["nn", "functional"] or parts[1] == "_C"):
        if len(parts) > 2 and parts[-1] not in TORCH_FUNCTIONS_ONLY:
            return None
        return "torch", parts[-1]
    return None


def array_of(ctx: CellContext, node: ast.expr, site: Site) -> ObjInfo | None:
    info = ctx.value_of(node, site)
    if info is None or info.shape is None or not (info.is_ndarray or info.is_tensor):
        return None
    return info


def shape_text(shape: list[Any]) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def _axis_target(ctx: CellContext, site: Site, call: ast.Call) -> tuple[ObjInfo, ast.expr, int, str] | None:
    """(array, axis node, extra room, name) of an axis-taking call on an array of known ndim."""
    func = call.func
    if has_star_args(call):
        return None
    table: dict[str, tuple[int, bool, int]]
    if isinstance(func, ast.Attribute):
        lib = library_function(ctx, site, func)
        if lib is not None:  # np.argmax(a, 1), torch.sum(t, dim=1)
            table = NUMPY_AXIS if lib[0] == "numpy" else TORCH_DIM
            if lib[1] not in table or not call.args:
                return None
            array = array_of(ctx, call.args[0], site)
            args = call.args[1:]
            name = lib[1]
        else:  # a.argmax(axis=1), t.softmax(1)
            array = array_of(ctx, func.value, site)
            if array is None:
                return None
            table = NUMPY_AXIS if array.is_ndarray else TORCH_DIM
            name = func.attr
            if name not in table or (array.is_ndarray and name not in NUMPY_METHODS):
                return None
            args = list(call.args)
    elif isinstance(func, ast.Name):
        lib = library_function(ctx, site, func)
        if lib is None or not call.args:
            return None
        table = NUMPY_AXIS if lib[0] == "numpy" else TORCH_DIM
        if lib[1] not in table:
            return None
        array, args, name = array_of(ctx, call.args[0], site), call.args[1:], lib[1]
    else:
        return None
    if array is None or (array.is_ndarray != (table is NUMPY_AXIS)):
        return None
    position, tuples, room = table[name]
    keywords = ("axis",) if array.is_ndarray else ("dim", "axis")
    node = next((kw.value for kw in call.keywords if kw.arg in keywords), None)
    if node is None and name in ("flip",) and array.is_tensor:
        node = kwarg(call, "dims")
    if node is None and len(args) > position:
        node = args[position]
    if node is None:
        return None
    if not tuples and isinstance(node, (ast.Tuple, ast.List)):
        return None
    if name == "size" and array.is_tensor and call.keywords:
        return None
    return array, node, room, name


def axis_error(numpy: bool, axis: int, ndim: int) -> str:
    if numpy:
        return f"numpy.exceptions.AxisError: axis {axis} is out of bounds for array of dimension {ndim}"
    return (
        f"IndexError: Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got "
        f"{axis})"
    )


def _axis(ctx: CellContext, site: Site, call: ast.Call) -> Finding | None:
    found = _axis_target(ctx, site, call)
    if found is None:
        return None
    array, node, room, name = found
    dims = _axis_value(ctx, node, site)
    assert array.shape is not None
    ndim = len(array.shape) + room
    if dims is None or len(array.shape) == 0:
        return None
    bad = next((d for d in dims if not -ndim <= d < ndim), None)
    if bad is None or site.caught(("IndexError", "ValueError")):
        return None
    error = axis_error(array.is_ndarray, bad, ndim)
    return Finding(
        rule=AXIS_RULE,
        message=(
            f"{error}: {array.expr} has shape {shape_text(array.shape)}, so {name} has no axis {bad} "
            f"(line {line_of(call)})."
        ),
        evidence=[
            f"{array.expr}.shape = {shape_text(array.shape)}",
            *([array.derived] if array.derived else []),
        ],
        line=line_of(call),
    )


PANDAS_METHODS = frozenset(
    {"sum", "mean", "max", "min", "std", "var", "median", "prod", "any", "all", "cumsum", "cumprod",
     "idxmax", "idxmin", "sem"}
)  # fmt: skip
NUMPY_ON_PANDAS = frozenset(
    {"sum", "mean", "max", "min", "std", "var", "argmax", "argmin", "prod", "cumsum", "any", "all", "amax",
     "amin"}
)  # fmt: skip


def _pandas_axis(ctx: CellContext, site: Site, call: ast.Call) -> Finding | None:
    """`s.sum(axis=1)`, `np.argmax(s, axis=1)` on a Series, `df.mean(axis=2)` on a DataFrame: pandas'
    `_get_axis_number` knows axes 0 (and 1 for a frame) only ("No axis named 1 for object type
    Series"); NumPy functions dispatch to those methods, or convert to an array of the same ndim.
    Claimed only outside [-ndim, ndim), where both paths raise."""
    func = call.func
    if has_star_args(call) or not isinstance(func, (ast.Attribute, ast.Name)):
        return None
    lib = library_function(ctx, site, func)
    node: ast.expr | None
    if lib is not None:
        if lib[0] != "numpy" or lib[1] not in NUMPY_ON_PANDAS or not call.args:
            return None
        obj, name = ctx.value_of(call.args[0], site), lib[1]
        node = kwarg(call, "axis") or (call.args[1] if len(call.args) > 1 else None)
    elif isinstance(func, ast.Attribute):
        obj, name = ctx.value_of(func.value, site), func.attr
        if obj is None or not (name in PANDAS_METHODS or (obj.is_series and name in ("argmax", "argmin"))):
            return None
        node = kwarg(call, "axis")
    else:
        return None
    if obj is None or node is None or not (obj.is_series or obj.is_frame):
        return None
    ndim = 1 if obj.is_series else 2
    value = ctx.scalar(node, site)
    if type(value) is not int or -ndim <= value < ndim or site.caught(("ValueError", "IndexError")):
        return None
    kind = "Series" if obj.is_series else "DataFrame"
    return Finding(
        rule=AXIS_RULE,
        message=(
            f"ValueError: No axis named {value} for object type {kind}: {obj.expr} is a {kind} "
            f"({ndim}-D), so {name} has no axis {value} (line {line_of(call)})."
        ),
        evidence=[f"type({obj.expr}) = {obj.type}", *([obj.derived] if obj.derived else [])],
        line=line_of(call),
    )


PAIRS_NP = frozenset({"swapaxes", "moveaxis"})  # two axes after the array
PAIRS_TORCH = frozenset({"transpose", "swapaxes", "swapdims", "moveaxis", "movedim"})
ORDERS = {"numpy": "transpose", "torch": "permute"}  # every axis, in a new order


def _reorder(ctx: CellContext, site: Site, call: ast.Call) -> Finding | None:
    """`a.swapaxes(1, 2)`, `t.transpose(1, 2)`, `np.moveaxis(a, 0, 3)`: each axis must exist;
    `a.transpose(2, 0, 1)`, `t.permute(2, 0, 1)`: the order must name every axis once (NumPy: "axes
    don't match array" / AxisError; torch: "number of dimensions ... does not match" / IndexError)."""
    func = call.func
    if call.keywords or has_star_args(call) or not isinstance(func, (ast.Attribute, ast.Name)):
        return None
    lib = library_function(ctx, site, func)
    if lib is not None and call.args:
        array, args, name = array_of(ctx, call.args[0], site), list(call.args[1:]), lib[1]
    elif isinstance(func, ast.Attribute):
        array, args, name = array_of(ctx, func.value, site), list(call.args), func.attr
    else:
        return None
    if array is None or array.shape is None or not array.shape:
        return None
    numpy = array.is_ndarray
    if lib is not None and lib[0] != ("numpy" if numpy else "torch"):
        return None
    ndim = len(array.shape)
    pairs = PAIRS_NP if numpy else PAIRS_TORCH
    if lib is None and numpy and name == "moveaxis":
        return None  # not an ndarray method
    if name in pairs and len(args) == 2:
        values = [ctx.scalar(a, site) for a in args]
        if not all(type(v) is int for v in values):
            return None
        bad = next((v for v in values if not -ndim <= v < ndim), None)
        problem = None if bad is None else axis_error(numpy, bad, ndim)
    elif name == ORDERS["numpy" if numpy else "torch"] and args:
        nodes = list(args[0].elts) if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)) else args
        order = [ctx.scalar(a, site) for a in nodes]
        if not order or not all(type(v) is int for v in order):
            return None
        bad = next((v for v in order if not -ndim <= v < ndim), None)
        if len(order) != ndim:
            problem = (
                "ValueError: axes don't match array"
                if numpy
                else "RuntimeError: number of dimensions in the tensor input does not match the length of "
                "the desired ordering of dimensions"
            ) + f" ({len(order)} axes given)"
        elif bad is not None:
            problem = axis_error(numpy, bad, ndim)
        elif len({v % ndim for v in order}) != ndim:
            problem = (
                "ValueError: repeated axis in transpose" if numpy else "RuntimeError: repeated dim in permute"
            )
        else:
            problem = None
    else:
        return None
    if problem is None or site.caught(("IndexError", "ValueError", "RuntimeError")):
        return None
    return Finding(
        rule=AXIS_RULE,
        message=f"{problem}: {array.expr} has shape {shape_text(array.shape)} ({name}, line {line_of(call)})"
        ".",
        evidence=[
            f"{array.expr}.shape = {shape_text(array.shape)}",
            *([array.derived] if array.derived else []),
        ],
        line=line_of(call),
    )


def check(ctx: CellContext) -> Iterator[Finding]:
    for site in ctx.certain(ast.Call):
        call = site.node
        assert isinstance(call, ast.Call)
        finding = _axis(ctx, site, call) or _reorder(ctx, site, call) or _pandas_axis(ctx, site, call)
        if finding is not None:
            yield finding
