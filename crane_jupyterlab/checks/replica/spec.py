"""Recipes for replicas: what the runtime view proves about each name the cell reads, as JSON specs.

A spec says how to rebuild a value from recorded facts only. Where the view leaves something open (the
values of a column it did not sample, whether the index is a RangeIndex, NaN on a sampled column) the spec
says so (`None`), and the runner fills it differently in each variant: a crash that every variant shares
was decided by what the facts hold, not by what we made up. A name we cannot rebuild exactly gets an
`unknown` spec: the runner binds a placeholder whose every use aborts the judgement.
"""

from __future__ import annotations

import ast
import math
import re
from typing import Any

from ...kernel.cell import python_source
from ..view import ObjInfo, RuntimeView

# Biggest replica we build (elements): beyond it the exact shape costs too much memory and time.
MAX_ELEMENTS = 5_000_000
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_NUMERIC = re.compile(r"^(u?int(8|16|32|64)|float(16|32|64)|bool)$")
_TORCH_DTYPE = re.compile(r"^torch\.(float(16|32|64)|bfloat16|u?int(8|16|32|64)|long|int|bool|double|half)$")
_TEXT_DTYPES = ("object", "str", "string")


def unknown(why: str) -> dict[str, Any]:
    return {"kind": "unknown", "why": why}


def _scalar(value: Any) -> bool:
    return (
        value is None
        or isinstance(value, (bool, int, str))
        or (isinstance(value, float) and math.isfinite(value))
    )


def _literal(info: ObjInfo) -> dict[str, Any] | None:
    if info.has_value and _scalar(info.value) and info.type in ("int", "float", "bool", "str", "NoneType"):
        return {"kind": "literal", "value": info.value, "type": info.type}
    types = info.raw.get("element_types")
    if info.type in ("list", "tuple") and info.items is not None and info.length == len(info.items):
        # Items are shown as text when they are not plain values (a tensor's repr): only lists whose
        # element types are all plain are their items.
        plain = {"int", "float", "bool", "str", "NoneType"}
        if isinstance(types, list) and set(types) <= plain and all(_scalar(v) for v in info.items):
            return {"kind": "literal", "value": list(info.items), "type": info.type}
    return None


def column_values(info: ObjInfo, n: int) -> dict[str, Any] | None:
    """The value recipe of a 1-D column of `n` rows, or None when its dtype is not one we rebuild."""
    dtype = (info.dtype or "").lower()
    if not dtype:
        return None
    exact = not info.sampled
    nan = info.nan if info.nan is not None and (exact or info.nan > 0) else None
    if nan is not None and not exact:
        nan = None  # some NaN proven, how many not: the runner varies it
    proven_nan = bool((info.nan or 0) > 0 or info.has_nan)
    spec: dict[str, Any] = {"dtype": dtype, "n": n, "nan": nan if exact else None, "some_nan": proven_nan}
    counts = info.counts or []
    if exact and info.unique is not None and counts and len(counts) == info.unique:
        spec["values"] = [[v, c] for v, c in counts if _scalar(v)]  # every distinct value, with its count
        if len(spec["values"]) != info.unique:
            spec.pop("values")
    if _NUMERIC.match(dtype):
        if info.min is not None and info.max is not None:
            spec["min"], spec["max"] = info.min, info.max
            spec["range_exact"] = exact
        return spec
    if dtype in _TEXT_DTYPES:
        examples = [v for v in (info.examples or []) + (info.non_numeric_examples or []) if _scalar(v)]
        spec["examples"] = list(dict.fromkeys(examples))[:20]
        if info.non_numeric is not None and exact:
            spec["non_numeric"] = info.non_numeric
        return spec
    return None


def _frame(info: ObjInfo, view: RuntimeView) -> dict[str, Any]:
    if not info.shape or len(info.shape) != 2 or any(v is None for v in info.shape):
        return unknown("its shape was not recorded")
    rows, cols = int(info.shape[0] or 0), int(info.shape[1] or 0)
    if rows * max(cols, 1) > MAX_ELEMENTS:
        return unknown("too big to rebuild")
    if info.columns is None or len(info.columns) != cols:
        return unknown("its columns were not all recorded")
    if any(not isinstance(c, (str, int)) for c in info.columns):
        return unknown("column labels of a kind we do not rebuild")
    if info.index_names and any(n is not None for n in info.index_names):
        return unknown("a named index")
    columns = []
    for name in info.columns:
        # The probe names a column's entry by its real label: a label recorded as text that has no
        # `df['label']` entry may be the repr of a tuple or of another object.
        child = view.get(f"{info.expr}[{name!r}]")
        values = column_values(child, rows) if child is not None else None
        if values is None:
            return unknown(f"the dtype of column {name!r} was not recorded")
        columns.append({"name": name, "values": values})
    if info.raw.get("index_type") != "RangeIndex":
        # A date, text or multi-level index changes what the frame can do (resample, loc, joins): only
        # the default index is rebuilt exactly.
        return unknown("an index other than the default RangeIndex")
    return {"kind": "frame", "rows": rows, "columns": columns, "index": "range"}


def _array(info: ObjInfo) -> dict[str, Any]:
    if not info.shape or any(not isinstance(v, int) for v in info.shape):
        return unknown("its shape was not recorded")
    size = math.prod(v or 0 for v in info.shape)
    if size > MAX_ELEMENTS:
        return unknown("too big to rebuild")
    values = column_values(info, size)
    if values is None:
        return unknown(f"dtype {info.dtype} is not one we rebuild")
    return {"kind": "ndarray", "shape": list(info.shape), "values": values}


def _series(info: ObjInfo) -> dict[str, Any]:
    n = info.length if info.length is not None else (info.shape[0] if info.shape else None)
    if not isinstance(n, int):
        return unknown("its length was not recorded")
    if n > MAX_ELEMENTS:
        return unknown("too big to rebuild")
    values = column_values(info, n)
    if values is None:
        return unknown(f"dtype {info.dtype} is not one we rebuild")
    name = info.raw.get("name")
    return {"kind": "series", "values": values, "name": name if _scalar(name) else None, "index": None}


def _tensor(info: ObjInfo) -> dict[str, Any]:
    if not info.shape or any(not isinstance(v, int) for v in info.shape):
        return unknown("its shape was not recorded")
    if math.prod(v or 0 for v in info.shape) > MAX_ELEMENTS:
        return unknown("too big to rebuild")
    dtype = info.dtype or ""
    if not _TORCH_DTYPE.match(dtype):
        return unknown(f"dtype {dtype} is not one we rebuild")
    if info.device not in (None, "cpu") or info.requires_grad is None:
        return unknown("a tensor off the CPU, or whose grad state was not recorded")
    return {"kind": "tensor", "shape": list(info.shape), "dtype": dtype,
            "requires_grad": bool(info.requires_grad),
            "min": info.min, "max": info.max, "range_exact": not info.sampled}  # fmt: skip


def _estimator(info: ObjInfo) -> dict[str, Any]:
    params = info.raw.get("params")
    if not isinstance(params, dict) or not all(_scalar(v) for v in params.values()):
        return unknown("its parameters were not recorded as plain values")
    if info.steps is not None or info.raw.get("columns_used") is not None:
        return unknown("a pipeline or column transformer")
    if info.fitted is None:
        return unknown("its fitted state was not recorded")
    spec: dict[str, Any] = {"kind": "estimator", "path": info.type, "params": params, "fitted": info.fitted}
    if info.fitted:
        if info.n_features_in is None:
            return unknown("a fitted estimator whose feature count was not recorded")
        outputs = info.raw.get("n_outputs_")
        if outputs not in (None, 1):
            return unknown("a multi-output estimator")
        classes = info.raw.get("classes_")
        spec["n_features"] = info.n_features_in
        spec["feature_names"] = info.feature_names_in
        spec["classes"] = classes if isinstance(classes, list) and all(_scalar(c) for c in classes) else None
    return spec


def spec_of(info: ObjInfo, view: RuntimeView) -> dict[str, Any]:
    """How to rebuild the value `info` describes, or an `unknown` spec saying why we cannot."""
    if info.missing:
        return unknown("not there")
    literal = _literal(info)
    if literal is not None:
        return literal
    if info.is_frame:
        return _frame(info, view)
    if info.is_ndarray:
        return _array(info)
    if info.is_series:
        return _series(info)
    if info.is_("torch", "Tensor", "Parameter"):
        return _tensor(info)
    if info.is_sklearn and info.raw.get("class"):
        return _estimator(info)
    if (
        info.user_code is False
        and info.path
        and info.type in ("function", "type", "builtin_function_or_method")
    ):
        module, _, name = info.path.rpartition(".")
        if module and _IDENT.match(name):
            return {"kind": "attr", "module": module, "name": name}
    if info.user_code and info.type in ("function", "type", "abc.ABCMeta"):
        return {"kind": "defined"}  # the runner defines it from the executed cells
    if info.type == "module":
        return {"kind": "defined"}  # the executed cells' own import statement binds it exactly
    return unknown(f"a {info.type or 'value'} we do not rebuild")


def specs(view: RuntimeView) -> dict[str, dict[str, Any]]:
    """One spec per top-level name the view describes (plain identifiers; children come with parents)."""
    out: dict[str, dict[str, Any]] = {}
    for expr, info in view.objects.items():
        if _IDENT.match(expr) and not (expr.startswith("__") and expr.endswith("__")):
            out[expr] = spec_of(info, view)
    for name, module in view.modules.items():
        # Only `import x` itself: an alias entry names the root package, not the submodule it binds
        # (`smf` is statsmodels.formula.api); the executed cells' imports rebuild those exactly.
        if _IDENT.match(name) and name not in out and name == module.module:
            out[name] = {"kind": "module", "module": module.module}
    return out


def definitions(executed_cells: list[str]) -> list[str]:
    """Sources of the top-level imports, functions and classes the executed cells left bound.

    A definition counts only when no later top-level statement rebinds its name: the kernel's value is
    then that def (a later `model = build()` makes `model` something we do not know)."""
    statements: list[tuple[ast.stmt, str]] = []
    for raw in executed_cells:
        cell = python_source(raw)  # magics as the kernel runs them, so the cell's imports still count
        try:
            tree = ast.parse(cell)
        except (SyntaxError, ValueError, RecursionError):
            continue  # a magic or broken cell: its definitions are not ours to replay
        statements += [(node, cell) for node in tree.body]
    last: dict[str, int] = {}
    for i, (node, _) in enumerate(statements):
        for name in _bound(node):
            last[name] = i
    out = []
    for i, (node, cell) in enumerate(statements):
        if isinstance(
            node, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
        ):
            if any(n == "*" for n in _bound(node)):
                continue
            if all(last.get(name) == i for name in _bound(node)):
                segment = ast.get_source_segment(cell, node)
                if segment:
                    out.append(segment)
    return out


def _bound(node: ast.stmt) -> list[str]:
    """Names a top-level statement binds (roughly: enough to know what a later statement rebinds)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name).split(".")[0] for a in node.names]
    names = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, (ast.Store, ast.Del)):
            names.append(sub.id)
        elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(sub.name)
        elif isinstance(sub, (ast.Import, ast.ImportFrom)):
            names += [(a.asname or a.name).split(".")[0] for a in sub.names]
    return names
