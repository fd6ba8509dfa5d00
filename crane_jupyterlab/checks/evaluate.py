"""What the cell's expressions evaluate to, as far as the runtime view makes it certain.

Rules ask `value_of(node, site)`: the kernel's description of an expression, or one derived from it
by library semantics that are exact (a column selection keeps those columns, `.to_numpy()` keeps the
shape, `train_test_split` cuts rows by a known rule, `torch.tensor(x)` keeps shape and dtype). Names the
cell binds are followed back to the expression they were bound to, at the site it ran, when nothing
may have changed them since. The walker asks `truth(test, site)` (an `if`/`while` condition the
runtime decides: `if len(df) > 0:`, `if DEBUG:`) and `nonempty(iterable, site)` (a loop that certainly
runs its first iteration). Anything not certain gives None: the rules stay silent. This module binds
names and evaluates scalars and conditions; the derivations of frames, arrays and tensors are derive.py.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from . import torch_forward
from .derive import (
    Derivations,
    _as_array,
    _derived,
    _has_call,
    _number,
)
from .site import Site, root_name
from .view import ObjInfo, RuntimeView

# Facts of a value that still hold for a slice of its rows (the rest describe values it may not hold).
_STRUCTURE_KEYS = frozenset({"dtype", "device", "index_type", "requires_grad", "layout"})
# A value the evaluator cannot tell.
UNKNOWN: Any = object()
_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge,
}  # fmt: skip
_ARITH: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}  # fmt: skip


class Evaluator(Derivations):
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
        found = self.labels(node.slice, site, depth + 1) if base.is_frame else None
        if found is not None:
            keys, single = found
            if single and not base.derived:
                child = self.view.get(f"{base.expr}[{keys[0]!r}]")
                if child is not None and not child.missing:
                    return replace(child, expr=expr)
            if base.columns is None or any(k not in base.columns for k in keys):
                return None  # unknown, or a KeyError (the column rules say so)
            rows = base.rows()
            if single:
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
        out.non_numeric = out.non_numeric_examples = None  # values seen may lie outside the slice
        out.unique = out.kind = None
        out.raw = {k: v for k, v in base.raw.items() if k in _STRUCTURE_KEYS}
        return out

    def _call(self, node: ast.Call, site: Site, depth: int) -> ObjInfo | None:
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            return None
        func = node.func
        expr = ast.unparse(node)
        if isinstance(func, (ast.Name, ast.Attribute, ast.Subscript)) and len(node.args) == 1:
            model = self.value_of(func, site, depth + 1)
            if model is not None and torch_forward.is_module(model):
                return self._forward(model, node, site, depth, expr)
        if isinstance(func, ast.Attribute):
            path = self.class_path(func, site)
            if path is not None:
                return self._library_function(path, node, site, depth, expr)
            base = self.value_of(func.value, site, depth + 1)
            if base is None:
                return None
            return self._method(base, func.attr, node, site, depth, expr)
        if isinstance(func, ast.Name):
            if (
                func.id == "range"
                and "range" not in site.bound
                and not node.keywords
                and 1 <= len(node.args) <= 3
            ):
                bounds = [self.scalar(a, site, depth + 1) for a in node.args]
                if all(type(b) is int for b in bounds) and bounds[-1] != 0:
                    values = range(*bounds)
                    items = list(values) if len(values) <= 1000 else None
                    return ObjInfo(expr=expr, type="range", length=len(values), items=items)
                return None
            if func.id in ("list", "tuple") and func.id not in site.bound and len(node.args) == 1:
                inner = self.value_of(node.args[0], site, depth + 1)
                if inner is None or inner.items is None or node.keywords:
                    return None
                return ObjInfo(expr=expr, type=func.id, length=len(inner.items), items=list(inner.items))
            path = self.class_path(func, site)
            if path is not None:
                return self._library_function(path, node, site, depth, expr)
        return None

    def _forward(self, model: ObjInfo, node: ast.Call, site: Site, depth: int, expr: str) -> ObjInfo | None:
        """`model(x)` for a torch model of the kernel: the shape and dtype its layers give x."""
        if node.keywords:
            return None
        x = self.value_of(node.args[0], site, depth + 1)
        found = torch_forward.output(self.view, model, x) if x is not None else None
        if x is None or found is None:
            return None
        return ObjInfo(
            expr=expr,
            type="torch.Tensor",
            shape=list(found[0]),
            dtype=found[1],
            device=x.device if x.device == model.raw.get("param_device") else None,
            derived=f"{expr}: {model.expr} maps {x.expr} of shape {tuple(x.shape or ())} to "
            f"{tuple(found[0])}",
        )

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
