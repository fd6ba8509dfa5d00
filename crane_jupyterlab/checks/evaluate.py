"""What the cell's expressions evaluate to, as far as the runtime view makes it certain.

Rules ask `value_of(node, site)`: the kernel's description of an expression, or one derived from it
by library semantics that are exact (a column selection keeps those columns, `.to_numpy()` keeps the
shape, `train_test_split` cuts rows by a known rule, `torch.tensor(x)` keeps shape and dtype). Names the
cell binds are followed back to the expression they were bound to, at the site it ran, when nothing
may have changed them since. The walker asks `truth(test, site)` (an `if`/`while` condition the
runtime decides: `if len(df) > 0:`, `if DEBUG:`) and `nonempty(iterable, site)` (a loop that certainly
runs its first iteration). Anything not certain gives None: the rules stay silent.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from .flow import Site, root_name
from .view import ObjInfo, RuntimeView, type_class, type_root

# A value the evaluator cannot tell.
UNKNOWN: Any = object()

# DataFrame methods whose result has exactly the receiver's columns; True when the rows are kept too.
FRAME_KEEPS_COLUMNS = {
    "copy": True, "fillna": True, "ffill": True, "bfill": True, "interpolate": True, "round": True,
    "abs": True, "clip": True, "replace": True, "sort_values": True, "sort_index": True, "astype": True,
    "infer_objects": True, "convert_dtypes": True, "dropna": False, "drop_duplicates": False,
    "head": False, "tail": False, "sample": False, "query": False, "nlargest": False, "nsmallest": False,
}  # fmt: skip
# Methods of 1-D data (Series) that keep its values' positions (same length).
SERIES_SAME_LENGTH = frozenset({"copy", "fillna", "ffill", "bfill", "round", "abs", "clip", "replace", "map"})
# scikit-learn transformers whose output has the input's shape.
SHAPE_KEEPING_TRANSFORMERS = frozenset(
    {"StandardScaler", "MinMaxScaler", "MaxAbsScaler", "RobustScaler", "Normalizer", "Binarizer",
     "PowerTransformer", "QuantileTransformer"}
)  # fmt: skip
NUMPY_TO_TORCH_DTYPE = {
    "float64": "float64", "float32": "float32", "float16": "float16", "int64": "int64", "int32": "int32",
    "int16": "int16", "int8": "int8", "uint8": "uint8", "bool": "bool",
}  # fmt: skip
TORCH_CASTS = {"float": "float32", "double": "float64", "half": "float16", "long": "int64", "int": "int32",
               "bool": "bool"}  # fmt: skip
# Loss modules the cell may build with their defaults (the cross-entropy rule reads them).
TORCH_PLAIN_LOSSES = frozenset({"CrossEntropyLoss", "NLLLoss"})
TORCH_TENSOR_TYPES = {"FloatTensor": "float32", "DoubleTensor": "float64", "LongTensor": "int64",
                      "IntTensor": "int32"}  # fmt: skip

_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge,
}  # fmt: skip
_ARITH: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}  # fmt: skip


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


class Evaluator:
    """Values of a cell's expressions from the runtime view; `sites` grows while the walker runs."""

    def __init__(self, view: RuntimeView, sites: list[Site]) -> None:
        self.view = view
        self.sites = sites
        self._by_node: dict[int, Site] = {}
        self._indexed = 0

    def site_of(self, node: ast.AST) -> Site | None:
        """The site where `node` was evaluated (the walker records every expression)."""
        while self._indexed < len(self.sites):
            site = self.sites[self._indexed]
            self._by_node.setdefault(id(site.node), site)
            self._indexed += 1
        return self._by_node.get(id(node))

    # ----- values -----------------------------------------------------------------------------------
    def value_of(self, node: ast.expr | None, site: Site, depth: int = 0) -> ObjInfo | None:
        """The kernel's description of `node` at `site`, or one derived from it exactly; None if unsure."""
        if node is None or depth > 12:
            return None
        if isinstance(node, ast.Name):
            return self._name(node.id, site, depth)
        if isinstance(node, ast.Constant) and type(node.value) in (
            int,
            float,
            str,
            bool,
            bytes,
            complex,
            type(None),
        ):
            value = node.value
            info = ObjInfo(expr=ast.unparse(node), type=type(value).__name__, value=value, has_value=True)
            info.length = len(value) if isinstance(value, (str, bytes)) else None
            return info
        if isinstance(node, (ast.Attribute, ast.Subscript)) and not _has_call(node):
            name = root_name(node)
            if name is not None and site.pristine(name) and name not in self.view.undefined:
                known = self.view.get(ast.unparse(node))
                if known is not None:
                    return known
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            column = self._attribute_column(node, site, depth)
            if column is not None:
                return column
        if isinstance(node, ast.Attribute):
            return self._attribute(node, site, depth)
        if isinstance(node, ast.Subscript):
            return self._subscript(node, site, depth)
        if isinstance(node, ast.Call):
            return self._call(node, site, depth)
        return None

    def _name(self, name: str, site: Site, depth: int) -> ObjInfo | None:
        if name in self.view.undefined and name not in site.bound:
            return None
        if site.pristine(name):
            return self.view.get(name)
        assigned = site.assigned_value(name)
        if assigned is None:
            return self.split_part(name, site, depth)
        where = self.site_of(assigned)
        if where is None:
            return None
        info = self.value_of(assigned, where, depth + 1)
        if info is None:
            return None
        return _derived(info, name, info.derived or f"{name} = {ast.unparse(assigned)} in this cell")

    def _attribute_column(self, node: ast.Attribute, site: Site, depth: int) -> ObjInfo | None:
        """`df.Age` where the probe saw that Age is a column of df and no DataFrame attribute."""
        base = self.value_of(node.value, site, depth + 1)
        if base is None or not base.is_frame or node.attr not in (base.column_attrs or []):
            return None
        as_item = ast.Subscript(value=node.value, slice=ast.Constant(node.attr), ctx=ast.Load())
        column = self._subscript(ast.copy_location(as_item, node), site, depth + 1)
        if column is None and not base.derived:
            column = self.view.get(f"{base.expr}[{node.attr!r}]")
        return replace(column, expr=ast.unparse(node)) if column is not None else None

    def _attribute(self, node: ast.Attribute, site: Site, depth: int) -> ObjInfo | None:
        base = self.value_of(node.value, site, depth + 1)
        if base is None:
            return None
        expr = ast.unparse(node)
        if node.attr == "values" and (base.is_frame or base.is_series):
            return _as_array(base, expr)
        two_d = base.shape is not None and len(base.shape) == 2
        if node.attr == "T" and base.shape is not None and two_d and (base.is_ndarray or base.is_frame):
            out = (
                _as_array(base, expr)
                if base.is_ndarray
                else _derived(base, expr, f"{expr}", same_values=False)
            )
            out.shape = list(reversed(base.shape))
            out.columns = None
            return out
        return None

    def _subscript(self, node: ast.Subscript, site: Site, depth: int) -> ObjInfo | None:
        if isinstance(node.slice, ast.Slice):
            return self._slice(node, site, depth)
        base = self.value_of(node.value, site, depth + 1)
        if base is None or not isinstance(node.ctx, ast.Load):
            return None
        expr = ast.unparse(node)
        keys = _const_strs(node.slice)
        if base.is_frame and keys is not None:
            if isinstance(node.slice, ast.Constant) and not base.derived:
                child = self.view.get(f"{base.expr}[{keys[0]!r}]")
                if child is not None and not child.missing:
                    return replace(child, expr=expr)
            if base.columns is None or any(k not in base.columns for k in keys):
                return None  # unknown, or a KeyError (the column rules say so)
            rows = base.rows()
            if isinstance(node.slice, ast.Constant):
                child = self.view.get(f"{base.expr}[{keys[0]!r}]") if not base.derived else None
                out = (
                    replace(child, expr=expr)
                    if child is not None
                    else ObjInfo(expr=expr, type="pandas.Series")
                )
                out.shape = [rows] if rows is not None else None
                out.derived = base.derived
                if base.derived and child is None:
                    out.facts = []
                return out
            out = _derived(base, expr, base.derived)
            out.columns = list(keys)
            out.shape = [rows, len(keys)] if rows is not None else [None, len(keys)]
            out.dtypes = None
            out.has_nan = None
            return out
        return None

    def _slice(self, node: ast.Subscript, site: Site, depth: int) -> ObjInfo | None:
        """`x[a:b]` of an array, tensor or list, and `df.iloc[a:b]` / `s.iloc[a:b]`: the rows
        range(*slice.indices(n)) selects."""
        assert isinstance(node.slice, ast.Slice)
        value = node.value
        positional = isinstance(value, ast.Attribute) and value.attr == "iloc"
        base = self.value_of(
            value.value if isinstance(value, ast.Attribute) and positional else value, site, depth + 1
        )
        if base is None or not isinstance(node.ctx, ast.Load):
            return None
        if positional and not (base.is_frame or base.is_series):
            return None
        if not positional and not (base.is_ndarray or base.is_tensor or base.type in ("list", "tuple")):
            return None
        n = base.rows()
        if n is None:
            return None
        bounds = []
        for part in (node.slice.lower, node.slice.upper, node.slice.step):
            value_ = None if part is None else self.scalar(part, site, depth + 1)
            if value_ is UNKNOWN or (value_ is not None and type(value_) is not int):
                return None
            bounds.append(value_)
        if bounds[2] == 0:
            return None
        rows = len(range(*slice(*bounds).indices(n)))
        expr = ast.unparse(node)
        out = _derived(base, expr, base.derived or f"{expr} in this cell", same_values=False)
        if base.shape:
            out.shape = [rows, *base.shape[1:]]
        out.length = rows if base.type in ("list", "tuple") else out.length
        out.items = None
        out.has_nan = None  # the slice may or may not hold the missing values
        out.nan = out.min = out.max = None
        out.counts = out.examples = None
        out.unique = None
        return out

    def _call(self, node: ast.Call, site: Site, depth: int) -> ObjInfo | None:
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            return None
        func = node.func
        expr = ast.unparse(node)
        if isinstance(func, ast.Attribute):
            path = self.class_path(func, site)
            if path is not None:
                return self._library_function(path, node, site, depth, expr)
            base = self.value_of(func.value, site, depth + 1)
            if base is None:
                return None
            return self._method(base, func.attr, node, site, depth, expr)
        if isinstance(func, ast.Name):
            path = self.class_path(func, site)
            if path is not None:
                return self._library_function(path, node, site, depth, expr)
        return None

    def _method(
        self, base: ObjInfo, method: str, node: ast.Call, site: Site, depth: int, expr: str
    ) -> ObjInfo | None:
        derived = base.derived or f"{expr} in this cell"
        if base.is_frame:
            if method in FRAME_KEEPS_COLUMNS and not _kwarg_true(node, "inplace"):
                if method == "dropna" and (node.args or _kwarg(node, "axis") is not None):
                    return None  # axis=1 drops columns
                out = _derived(
                    base, expr, derived, same_values=method in ("copy", "sort_values", "sort_index")
                )
                if not FRAME_KEEPS_COLUMNS[method]:
                    out.shape = [None, *base.shape[1:]] if base.shape else None
                    if method in ("head", "tail") and base.shape and isinstance(base.shape[0], int):
                        n = _const_int(node.args[0]) if node.args else 5
                        if n is not None and n >= 0:
                            out.shape = [min(n, base.shape[0]), *base.shape[1:]]
                if method in ("fillna", "dropna", "astype", "replace", "interpolate", "ffill", "bfill"):
                    out.has_nan, out.nan = None, None
                if method == "astype":
                    out.dtypes = None
                return out
            if method == "drop" and not _kwarg_true(node, "inplace"):
                return self._drop_columns(base, node, expr, derived)
            if method == "to_numpy" and not node.args:
                return _as_array(base, expr)
            return None
        if base.is_series:
            if method == "to_numpy" and not node.args:
                return _as_array(base, expr)
            if method in SERIES_SAME_LENGTH and not _kwarg_true(node, "inplace"):
                out = _derived(base, expr, derived, same_values=method == "copy")
                out.examples = out.counts = None
                out.min = out.max = None
                if method != "copy":
                    out.has_nan = out.nan = None
                    out.dtype = None if method in ("map", "replace") else out.dtype
                return out
            return None
        if base.is_ndarray:
            return self._array_method(base, method, node, expr, derived)
        if base.is_tensor:
            return self._tensor_method(base, method, node, expr, derived)
        if base.is_sklearn and method in ("fit_transform", "transform") and node.args:
            if type_class(base.type) not in SHAPE_KEEPING_TRANSFORMERS:
                return None
            x = self.value_of(node.args[0], site, depth + 1)
            if x is None or x.shape is None or not (x.is_frame or x.is_ndarray):
                return None
            return ObjInfo(expr=expr, type="numpy.ndarray", shape=list(x.shape), derived=derived)
        return None

    def _drop_columns(self, base: ObjInfo, node: ast.Call, expr: str, derived: str) -> ObjInfo | None:
        if _kwarg(node, "columns") is not None:
            keys = _const_strs(_kwarg(node, "columns"))
        elif _is_axis_one(_kwarg(node, "axis")) and (node.args or _kwarg(node, "labels") is not None):
            keys = _const_strs(node.args[0] if node.args else _kwarg(node, "labels"))
        else:
            return None
        if keys is None or base.columns is None or any(k not in base.columns for k in keys):
            return None  # unknown, or a KeyError
        out = _derived(base, expr, derived)
        out.columns = [c for c in base.columns if c not in keys]
        out.shape = [base.rows(), len(out.columns)]
        out.dtypes = None
        out.has_nan = None
        return out

    def _array_method(
        self, base: ObjInfo, method: str, node: ast.Call, expr: str, derived: str
    ) -> ObjInfo | None:
        shape = base.shape
        if shape is None or not all(isinstance(d, int) for d in shape):
            return None
        out = ObjInfo(expr=expr, type="numpy.ndarray", dtype=base.dtype, derived=derived)
        if method == "copy" and not node.args:
            out.shape = list(shape)
        elif method in ("flatten", "ravel") and not node.args:
            out.shape = [math.prod(shape)]  # type: ignore[arg-type]
        elif method == "reshape":
            target = _reshape_target(node, math.prod(shape))  # type: ignore[arg-type]
            if target is None:
                return None
            out.shape = list(target)
        elif method == "astype" and node.args:
            dtype = _dtype_name(node.args[0])
            if dtype is None:
                return None
            out.shape, out.dtype = list(shape), dtype
        else:
            return None
        return out

    def _tensor_method(
        self, base: ObjInfo, method: str, node: ast.Call, expr: str, derived: str
    ) -> ObjInfo | None:
        shape = base.shape
        if shape is None or not all(isinstance(d, int) for d in shape):
            return None
        out = ObjInfo(expr=expr, type="torch.Tensor", dtype=base.dtype, derived=derived)
        if method in TORCH_CASTS and not node.args and not node.keywords:
            out.shape, out.dtype = list(shape), TORCH_CASTS[method]
        elif method in ("view", "reshape"):
            target = _reshape_target(node, math.prod(shape))  # type: ignore[arg-type]
            if target is None:
                return None
            out.shape = list(target)
        elif method in ("clone", "detach", "contiguous", "cpu") and not node.args:
            out.shape = list(shape)
            if method == "detach":
                out.layer = {}
        else:
            return None
        return out

    def _library_function(
        self, path: str, node: ast.Call, site: Site, depth: int, expr: str
    ) -> ObjInfo | None:
        top, name = path.split(".", 1)[0], path.rsplit(".", 1)[-1]
        args = node.args
        if top == "numpy" and name in ("zeros", "ones", "empty", "full", "arange") and args:
            return self._numpy_constructor(name, node, site, expr)
        if top == "numpy" and name in ("array", "asarray") and len(args) == 1 and not node.keywords:
            x = self.value_of(args[0], site, depth + 1)
            if x is not None and x.shape is not None and (x.is_ndarray or x.is_frame or x.is_series):
                return _as_array(x, expr)
            return None
        if top == "torch" and name in TORCH_PLAIN_LOSSES and not args and not node.keywords:
            # `criterion = nn.CrossEntropyLoss()`: default settings (no weight, no ignore_index)
            return ObjInfo(expr=expr, type=f"torch.nn.modules.loss.{name}", user_code=False,
                           derived=f"{expr} in this cell")  # fmt: skip
        if top == "torch" and len(args) == 1:
            x = self.value_of(args[0], site, depth + 1)
            if x is None or x.shape is None or not (x.is_ndarray or x.is_tensor):
                return None
            dtype: str | None
            if name in ("tensor", "from_numpy", "as_tensor") and x.is_ndarray:
                dtype = NUMPY_TO_TORCH_DTYPE.get(x.dtype or "")
                requested = _kwarg(node, "dtype")
                if requested is not None:
                    if name == "from_numpy":
                        return None
                    dtype = _torch_dtype(requested)
                elif node.keywords:
                    return None
            elif name in TORCH_TENSOR_TYPES and not node.keywords:
                dtype = TORCH_TENSOR_TYPES[name]
            else:
                return None
            if dtype is None:
                return None
            return ObjInfo(expr=expr, type="torch.Tensor", shape=list(x.shape), dtype=dtype,
                           derived=x.derived or f"{expr} in this cell")  # fmt: skip
        return None

    def _numpy_constructor(self, name: str, node: ast.Call, site: Site, expr: str) -> ObjInfo | None:
        """`np.zeros(n)`, `np.ones((n, k))`, `np.full(n, v)`, `np.arange(n)`: the shape its arguments fix."""
        first = node.args[0]
        if name == "arange":
            if len(node.args) != 1 or node.keywords:
                return None
            n = self.scalar(first, site)
            return ObjInfo(expr=expr, type="numpy.ndarray", shape=[max(n, 0)]) if type(n) is int else None
        if name != "full" and len(node.args) > 1:
            return None
        dims_nodes = list(first.elts) if isinstance(first, (ast.Tuple, ast.List)) else [first]
        dims = [self.scalar(d, site) for d in dims_nodes]
        if not all(type(d) is int and d >= 0 for d in dims):
            return None
        dtype = _kwarg(node, "dtype")
        dtype_name = _dtype_name(dtype) if dtype is not None else ("float64" if name != "full" else None)
        return ObjInfo(
            expr=expr,
            type="numpy.ndarray",
            shape=list(dims),
            dtype=dtype_name,
            derived=f"{expr} in this cell",
        )

    def split_part(self, name: str, site: Site, depth: int = 0) -> ObjInfo | None:
        """`X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=...)`: each part has
        the rows sklearn's rule gives (n_test = ceil(test_size * n), n_train = n - n_test unless
        train_size says otherwise) and the rest of its source's shape."""
        unpacked = site.unpacked_from(name)
        if unpacked is None:
            return None
        call, index = unpacked
        path = self.class_path(call.func, site) if isinstance(call.func, (ast.Name, ast.Attribute)) else None
        if path is None or not path.startswith("sklearn.") or not path.endswith("train_test_split"):
            return None
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return None
        if index >= 2 * len(call.args):
            return None
        where = self.site_of(call)
        if where is None:
            return None
        source = self.value_of(call.args[index // 2], where, depth + 1)
        if source is None or source.rows() is None:
            return None
        sizes = _split_sizes(source.rows() or 0, _kwarg(call, "test_size"), _kwarg(call, "train_size"))
        if sizes is None:
            return None
        rows = sizes[index % 2]
        how = f"{name} is part of train_test_split({ast.unparse(call.args[index // 2])}, ...)"
        out = _derived(source, name, how, same_values=False)
        out.shape = [rows, *(source.shape or [None])[1:]] if source.shape else None
        out.length = rows if source.shape is None else out.length
        out.has_nan = None if not source.has_nan else source.has_nan if rows else None
        out.nan = None
        out.counts = None
        return out

    # ----- scalars and conditions ---------------------------------------------------------------------
    def scalar(self, node: ast.expr, site: Site, depth: int = 0) -> Any:
        """A Python scalar or tuple the expression certainly evaluates to, or UNKNOWN."""
        if depth > 12:
            return UNKNOWN
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            if node.id in ("True", "False", "None"):
                return UNKNOWN
            info = self.value_of(node, site, depth + 1)
            if info is not None and info.has_value:
                return info.value
            if node.id in site.bound and not site.barrier:
                assigned = site.assigned_value(node.id)
                where = self.site_of(assigned) if assigned is not None else None
                if assigned is not None and where is not None:
                    return self.scalar(assigned, where, depth + 1)
            return UNKNOWN
        if isinstance(node, ast.UnaryOp):
            value = self.scalar(node.operand, site, depth + 1)
            if value is UNKNOWN:
                return UNKNOWN
            if isinstance(node.op, ast.Not):
                return not value if isinstance(value, (bool, int, float, str, tuple, type(None))) else UNKNOWN
            if isinstance(node.op, ast.USub) and _number(value):
                return -value
            return UNKNOWN
        if isinstance(node, ast.BinOp) and type(node.op) in _ARITH:
            left, right = self.scalar(node.left, site, depth + 1), self.scalar(node.right, site, depth + 1)
            if _number(left) and _number(right):
                try:
                    return _ARITH[type(node.op)](left, right)
                except ArithmeticError:
                    return UNKNOWN
            return UNKNOWN
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            left = self.scalar(node.left, site, depth + 1)
            right = self.scalar(node.comparators[0], site, depth + 1)
            op = node.ops[0]
            none_test = isinstance(op, (ast.Is, ast.IsNot)) and isinstance(node.comparators[0], ast.Constant)
            if none_test and right is None:
                info = self.value_of(node.left, site, depth + 1)
                if info is None or not info.type:
                    return UNKNOWN
                is_none = info.type == "NoneType"
                return is_none if isinstance(op, ast.Is) else not is_none
            if left is UNKNOWN or right is UNKNOWN or type(op) not in _COMPARE:
                return UNKNOWN
            if not (_number(left) and _number(right)) and type(left) is not type(right):
                return UNKNOWN
            try:
                return bool(_COMPARE[type(op)](left, right))
            except TypeError:
                return UNKNOWN
        if isinstance(node, ast.BoolOp):
            values = [self.scalar(v, site, depth + 1) for v in node.values]
            if any(v is UNKNOWN for v in values):
                return UNKNOWN
            if isinstance(node.op, ast.And):
                return all(bool(v) for v in values)
            return any(bool(v) for v in values)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len":
            if len(node.args) != 1 or node.keywords or "len" in site.bound:
                return UNKNOWN
            n = self.length(node.args[0], site)
            return n if n is not None else UNKNOWN
        if isinstance(node, ast.Attribute) and node.attr in ("shape", "ndim"):
            info = self.value_of(node.value, site, depth + 1)
            if info is None or info.shape is None or not all(isinstance(d, int) for d in info.shape):
                return UNKNOWN
            if not (info.is_ndarray or info.is_frame or info.is_series or info.is_tensor):
                return UNKNOWN
            return tuple(info.shape) if node.attr == "shape" else len(info.shape)
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            container = self.scalar(node.value, site, depth + 1)
            index = node.slice.value
            integer = isinstance(index, int) and not isinstance(index, bool)
            if isinstance(container, tuple) and integer and -len(container) <= index < len(container):  # type: ignore[operator]
                return container[index]  # type: ignore[index]
            return UNKNOWN
        return UNKNOWN

    def length(self, node: ast.expr, site: Site) -> int | None:
        """len() of a value the kernel (or the cell) certainly holds."""
        if isinstance(node, (ast.List, ast.Tuple)) and not any(isinstance(e, ast.Starred) for e in node.elts):
            return len(node.elts)
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)):
            return len(node.value)
        info = self.value_of(node, site)
        if info is None:
            return None
        if info.type in ("list", "tuple", "dict", "set", "frozenset", "str", "range"):
            return info.length
        if info.is_frame or info.is_series or info.is_ndarray or info.is_tensor:
            return info.rows()
        return None

    def truth(self, node: ast.expr, site: Site) -> bool | None:
        """Whether the condition is certainly true / false when it runs; None when the runtime cannot say."""
        value = self.scalar(node, site)
        if value is UNKNOWN or not isinstance(value, (bool, int, float, str, tuple, type(None))):
            return None
        return bool(value)

    def nonempty(self, node: ast.expr, site: Site) -> bool:
        """A loop iterable that certainly yields at least once."""
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id not in site.bound:
            name, args = node.func.id, node.args
            if node.keywords or any(isinstance(a, ast.Starred) for a in args):
                return False
            if name == "range" and 1 <= len(args) <= 3:
                bounds = [self.scalar(a, site) for a in args]
                if not all(type(b) is int for b in bounds):
                    return False
                return len(range(*bounds)) > 0
            if name in ("enumerate", "reversed", "sorted", "list", "tuple", "iter") and len(args) == 1:
                return self.nonempty(args[0], site)
            if name == "zip" and args:
                return all(self.nonempty(a, site) for a in args)
            return False
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.args:
            if node.func.attr in ("items", "keys", "values", "iterrows", "itertuples"):
                info = self.value_of(node.func.value, site)
                if info is not None and (info.type == "dict" or info.is_frame or info.is_series):
                    n = info.length if info.type == "dict" else info.rows()
                    if node.func.attr == "items" and info.is_frame:
                        n = info.shape[1] if info.shape and len(info.shape) == 2 else None
                    return isinstance(n, int) and n > 0
            return False
        n = self.length(node, site)
        if n is not None:
            info = self.value_of(node, site)
            if info is not None and info.is_frame:  # iterating a frame yields its column labels
                width = info.shape[1] if info.shape and len(info.shape) == 2 else None
                return isinstance(width, int) and width > 0
            return n > 0
        return False

    # ----- names of library callables ---------------------------------------------------------------
    def class_path(self, func: ast.expr, site: Site) -> str | None:
        """Dotted path of the library callable `func` names at `site`, e.g. `sklearn.svm.SVC`."""
        parts: list[str] = []
        node = func
        while isinstance(node, ast.Attribute):
            parts.insert(0, node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        name = node.id
        base = site.imported(name)
        if base is None and site.pristine(name):
            module = self.view.modules.get(name)
            info = self.view.get(name)
            if module is not None:
                base = module.module
            elif info is not None and info.path and not parts:
                base = info.path
        if base is None:
            return None
        return ".".join([base, *parts])


# ----- helpers --------------------------------------------------------------------------------------------


def _derived(info: ObjInfo, expr: str, derived: str | None, same_values: bool = True) -> ObjInfo:
    """A copy of `info` for another expression. `same_values`: every row and value of the columns is
    kept (a column selection, a copy, a sort), so the source frame's column entries still describe it."""
    source = (info.source if info.derived else info.expr) if same_values else None
    return replace(info, expr=expr, derived=derived, facts=list(info.facts), children=[], source=source)


def _as_array(info: ObjInfo, expr: str) -> ObjInfo:
    """`.values` / `.to_numpy()` / `np.array(...)`: an ndarray of the same shape (its dtype is the
    column's for 1-D data, unknown for a frame)."""
    dtype = info.dtype if (info.is_series or info.is_ndarray) else None
    if dtype is not None and not dtype.startswith(("int", "uint", "float", "bool", "complex")):
        dtype = None  # extension dtypes (Int64, category, str) become other numpy dtypes
    return ObjInfo(
        expr=expr,
        type="numpy.ndarray",
        shape=list(info.shape) if info.shape is not None else None,
        dtype=dtype,
        has_nan=info.has_nan,
        nan=info.nan,
        min=info.min,
        max=info.max,
        unique=info.unique,
        kind=info.kind,
        examples=info.examples,
        counts=info.counts,
        non_numeric=info.non_numeric,
        non_numeric_examples=info.non_numeric_examples,
        dtypes=info.dtypes,
        columns=None,
        derived=info.derived or (f"{expr} in this cell" if info.expr != expr else None),
        facts=list(info.facts),
    )


def _has_call(node: ast.AST) -> bool:
    return any(isinstance(sub, ast.Call) for sub in ast.walk(node))


def _kwarg(call: ast.Call, name: str) -> ast.expr | None:
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    return None


def _kwarg_true(call: ast.Call, name: str) -> bool:
    value = _kwarg(call, name)
    return value is not None and not (isinstance(value, ast.Constant) and value.value is False)


def _is_axis_one(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and node.value in (1, "columns")


def _const_int(node: ast.expr) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _const_int(node.operand)
        return -inner if inner is not None else None
    return None


def _const_strs(node: ast.expr | None) -> list[str] | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.List, ast.Tuple)) and node.elts:
        items = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        return items if len(items) == len(node.elts) else None
    return None


def _reshape_target(node: ast.Call, size: int) -> list[int | None] | None:
    """The shape `reshape(...)`/`view(...)` asks for, with one -1 resolved; None when not constant or
    when it cannot be resolved (the shape rules report impossible reshapes themselves)."""
    if node.keywords:
        return None
    args: list[ast.expr] = list(node.args)
    if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)):
        args = list(args[0].elts)
    dims = [_const_int(a) for a in args]
    if not dims or any(d is None for d in dims):
        return None
    known = [d for d in dims if d is not None and d != -1]
    if any(d < 0 for d in known) or sum(1 for d in dims if d == -1) > 1:
        return None
    product = math.prod(known)
    if -1 in dims:
        if product == 0 or size % product:
            return None
        return [size // product if d == -1 else d for d in dims]
    return list(dims) if product == size else None


def _dtype_name(node: ast.expr) -> str | None:
    text = node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None
    if text is None and isinstance(node, ast.Attribute):
        text = node.attr
    if text is None and isinstance(node, ast.Name) and node.id in ("int", "float", "bool"):
        text = {"int": "int64", "float": "float64", "bool": "bool"}[node.id]
    if text in ("float", "double"):
        text = "float64"
    if text is not None and text in NUMPY_TO_TORCH_DTYPE:
        return text
    return None


def _torch_dtype(node: ast.expr) -> str | None:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return {"float32": "float32", "float": "float32", "float64": "float64", "double": "float64",
                "int64": "int64", "long": "int64", "int32": "int32", "float16": "float16",
                "half": "float16"}.get(node.attr)  # fmt: skip
    return None


def _split_sizes(n: int, test: ast.expr | None, train: ast.expr | None) -> tuple[int, int] | None:
    """(n_train, n_test) as sklearn's _validate_shuffle_split computes them."""

    def size(node: ast.expr | None) -> float | int | None:
        if node is None:
            return None
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and _number(node.value):
            return node.value
        return -1  # not a constant: unknown

    t, r = size(test), size(train)
    if t == -1 or r == -1:
        return None
    if t is None and r is None:
        t = 0.25
    n_test: int | None = None
    n_train: int | None = None
    if isinstance(t, float):
        if not 0 < t < 1:
            return None
        n_test = math.ceil(t * n)
    elif isinstance(t, int):
        n_test = t
    if isinstance(r, float):
        if not 0 < r < 1:
            return None
        n_train = math.floor(r * n)
    elif isinstance(r, int):
        n_train = r
    if n_train is None and n_test is not None:
        n_train = n - n_test
    if n_test is None and n_train is not None:
        n_test = n - n_train
    if n_train is None or n_test is None or n_train <= 0 or n_test <= 0 or n_train + n_test > n:
        return None
    return n_train, n_test


def is_numeric_dtype(dtype: str | None) -> bool:
    return dtype is not None and dtype.startswith(("int", "uint", "float", "bool", "Int", "UInt", "Float"))


def library_root(info: ObjInfo) -> str:
    return type_root(info.type)
