"""Values the cell derives from kernel objects by exact library semantics: column selections and drops,
`.values`/`.to_numpy()`, reshapes and casts, `torch.tensor(x)`, torch's shape-keeping functions and
`one_hot` (with the torch tables of torch_forward.py), numpy constructors, the parts of `train_test_split`.
The Evaluator (evaluate.py) binds names and dispatches here; anything not exact gives None."""

from __future__ import annotations

import ast
import math
from dataclasses import replace
from typing import Any

from . import torch_forward
from .site import Site
from .view import ObjInfo, RuntimeView, type_class, type_root

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


class Derivations:
    """The Evaluator's derivations (evaluate.Evaluator inherits them)."""

    view: RuntimeView

    def value_of(self, node: ast.expr | None, site: Site, depth: int = 0) -> ObjInfo | None:
        raise NotImplementedError

    def scalar(self, node: ast.expr, site: Site, depth: int = 0) -> Any:
        raise NotImplementedError

    def class_path(self, func: ast.expr, site: Site) -> str | None:
        raise NotImplementedError

    def site_of(self, node: ast.AST) -> Site | None:
        raise NotImplementedError

    def labels(self, node: ast.expr | None, site: Site, depth: int = 0) -> tuple[list[str], bool] | None:
        """The column labels a key names, and whether it is one label (`df[key]` gives a Series).

        `'a'`, `['a', 'b']`, and names the kernel or the cell binds to a str or to a complete list of
        str (`features = [...]` in an earlier cell: `df[features]`); None when not certain. A tuple is
        one MultiIndex key to pandas, so only literal tuples (the `df.groupby(k)['a', 'b']` form) and
        lists of labels count as several.
        """
        if node is None or depth > 8:
            return None
        if isinstance(node, ast.Constant):
            return ([node.value], True) if isinstance(node.value, str) else None
        if isinstance(node, (ast.List, ast.Tuple)):
            parts = [self.labels(e, site, depth + 1) for e in node.elts]
            if not node.elts or any(p is None or not p[1] for p in parts):
                return None
            return [p[0][0] for p in parts if p is not None], False
        if isinstance(node, ast.Name):
            info = self.value_of(node, site, depth + 1)
            if info is None:
                if not site.pristine(node.id):
                    assigned = site.assigned_value(node.id)
                    where = self.site_of(assigned) if assigned is not None else None
                    if assigned is not None and where is not None and isinstance(assigned, ast.List):
                        return self.labels(assigned, where, depth + 1)
                return None
            if info.has_value and isinstance(info.value, str):
                return [info.value], True
            items = info.items
            if info.type == "list" and items and all(isinstance(i, str) for i in items):
                return [str(i) for i in items], False
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
                return self._drop_columns(base, node, site, expr, derived)
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

    def _drop_columns(
        self, base: ObjInfo, node: ast.Call, site: Site, expr: str, derived: str
    ) -> ObjInfo | None:
        if _kwarg(node, "columns") is not None:
            found = self.labels(_kwarg(node, "columns"), site)
        elif _is_axis_one(_kwarg(node, "axis")) and (node.args or _kwarg(node, "labels") is not None):
            found = self.labels(node.args[0] if node.args else _kwarg(node, "labels"), site)
        else:
            return None
        if found is None or base.columns is None or any(k not in base.columns for k in found[0]):
            return None  # unknown, or a KeyError
        keys = found[0]
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
        if method in torch_forward.TORCH_CASTS and not node.args and not node.keywords:
            out.shape, out.dtype = list(shape), torch_forward.TORCH_CASTS[method]
        elif method in ("view", "reshape"):
            target = _reshape_target(node, math.prod(shape))  # type: ignore[arg-type]
            if target is None:
                return None
            out.shape = list(target)
        elif method in ("clone", "detach", "contiguous", "cpu") and not node.args:
            out.shape = list(shape)
            if method == "detach":
                out.layer = {}
        elif method in ("unsqueeze", "squeeze") and len(node.args) <= 1 and not node.keywords:
            dims = torch_forward.squeezed(
                list(shape), method, _const_int(node.args[0]) if node.args else None
            )
            if dims is None or (node.args and _const_int(node.args[0]) is None):
                return None
            out.shape = dims
        elif method in torch_forward.SAME_SHAPE_FUNCTIONS and (base.dtype or "").startswith(
            ("float", "bfloat")
        ):
            out.shape = list(shape)
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
        plain_kw = all(k.arg in ("prepend", "has_constant") for k in node.keywords)
        if top == "statsmodels" and name == "add_constant" and len(args) == 1 and plain_kw:
            x = self.value_of(args[0], site, depth + 1)  # one more column; the values (NaN, text) kept
            if x is None or x.shape is None or len(x.shape) != 2 or not (x.is_frame or x.is_ndarray):
                return None
            out = _derived(x, expr, x.derived or f"{expr} in this cell")
            out.shape, out.columns, out.source = [x.shape[0], None], None, x.source or x.expr
            return out
        if (
            top == "torch"
            and name in torch_forward.TORCH_PLAIN_LOSSES
            and not args
            and all(kw.arg in torch_forward.TORCH_PLAIN_LOSSES[name] for kw in node.keywords)
        ):
            # `criterion = nn.CrossEntropyLoss()`: no ignore_index (the default, -100)
            return ObjInfo(expr=expr, type=f"torch.nn.modules.loss.{name}", user_code=False,
                           derived=f"{expr} in this cell")  # fmt: skip
        if (
            top == "torch"
            and name in torch_forward.SAME_SHAPE_FUNCTIONS | {"one_hot"}
            and 1 <= len(args) <= 2
        ):
            return self._torch_function(name, node, site, depth, expr)
        if top == "torch" and len(args) == 1:
            x = self.value_of(args[0], site, depth + 1)
            if x is None or x.shape is None or not (x.is_ndarray or x.is_tensor):
                return None
            dtype: str | None
            if name in ("tensor", "from_numpy", "as_tensor") and x.is_ndarray:
                dtype = torch_forward.NUMPY_TO_TORCH_DTYPE.get(x.dtype or "")
                requested = _kwarg(node, "dtype")
                if requested is not None:
                    if name == "from_numpy":
                        return None
                    dtype = torch_forward.torch_dtype(requested)
                elif node.keywords:
                    return None
            elif name in torch_forward.TORCH_TENSOR_TYPES and not node.keywords:
                dtype = torch_forward.TORCH_TENSOR_TYPES[name]
            else:
                return None
            if dtype is None:
                return None
            return ObjInfo(expr=expr, type="torch.Tensor", shape=list(x.shape), dtype=dtype,
                           derived=x.derived or f"{expr} in this cell")  # fmt: skip
        return None

    def _torch_function(self, name: str, node: ast.Call, site: Site, depth: int, expr: str) -> ObjInfo | None:
        """`torch.softmax(x, 1)`, `F.log_softmax(x, dim=1)`, `torch.sigmoid(x)`: x's shape and dtype;
        `F.one_hot(t, k)`: t's shape plus an axis of k, int64."""
        x = self.value_of(node.args[0], site, depth + 1)
        if x is None or not x.is_tensor or x.shape is None or not all(isinstance(d, int) for d in x.shape):
            return None
        out = ObjInfo(expr=expr, type="torch.Tensor", derived=x.derived or f"{expr} in this cell")
        if name == "one_hot":
            k_node = (
                node.args[1]
                if len(node.args) == 2
                else next((kw.value for kw in node.keywords if kw.arg == "num_classes"), None)
            )
            k = self.scalar(k_node, site, depth + 1) if k_node is not None else None
            if type(k) is not int or k <= 0 or x.dtype != "int64" or len(node.args) + len(node.keywords) != 2:
                return None
            out.shape, out.dtype = [*x.shape, k], "int64"
            return out
        if any(kw.arg != "dim" for kw in node.keywords) or not (x.dtype or "").startswith(
            ("float", "bfloat")
        ):
            return None
        out.shape, out.dtype = list(x.shape), x.dtype
        return out

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
    if text is not None and text in torch_forward.NUMPY_TO_TORCH_DTYPE:
        return text
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


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
