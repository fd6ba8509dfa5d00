"""Recipes for replicas: what the runtime view proves about each name the cell reads, as JSON specs.

A spec says how to rebuild a value from recorded facts only, and owns up to what it cannot: every fact the
probe reports about the value is reproduced by its replica, or listed in the spec (`listed`).
- `open`: value facts the view leaves open (the values of a column it did not sample or count, NaN on a
  sampled column). The runner fills them differently in each variant: a crash that every variant shares
  was decided by what the facts hold, not by what we made up.
- `unfaithful`: facts the replica does not reproduce, reported or not (an index whose labels are not
  recorded, a category's categories, a strided array), each with why. The replica still runs, but a
  crash on a line that touches it is not claimed (`taint.py`).
A name we cannot rebuild at all gets an `unknown` spec: the runner binds a placeholder whose every use
aborts the judgement.
"""

from __future__ import annotations

import ast
import dataclasses
import math
import re
from typing import Any

from ...kernel.cell import python_source
from ..view import ObjInfo, RuntimeView

# Biggest replica we build (elements): beyond it the exact shape costs too much memory and time.
MAX_ELEMENTS = 5_000_000
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Value families (build.py fills each): numpy numbers, pandas' nullable numbers, naive dates, text.
_NUMBER = re.compile(r"^(u?int(8|16|32|64)|float(16|32|64)|bool)$")
_NULLABLE = re.compile(r"^(U?Int(8|16|32|64)|Float(32|64)|boolean)$")
_DATETIME = re.compile(r"^datetime64\[(D|s|ms|us|ns)\]$")  # no time zone
_UNICODE = re.compile(r"^<U[0-9]+$")
_TORCH_DTYPE = re.compile(r"^(torch\.)?(float(16|32|64)|bfloat16|u?int(8|16|32|64)|bool)$")
# Element types of an object column or array we rebuild ("nan": a float NaN, as the probe names it).
ELEMENT_TYPES = frozenset({"str", "int", "float", "bool", "nan", "NoneType"})
# Value facts a recipe leaves open when the probe did not record them exactly (a sample, or counts of
# only some values): the runner fills them differently per variant, so a crash every variant shares
# does not depend on them.
_VALUE_FACTS = ("unique", "kind", "counts", "examples", "non_numeric", "non_numeric_examples")
# The most frequent values, ties in the order of the rows: row order is never recorded, so these stay
# open even when every value and its count is.
_ORDERED_FACTS = ("examples", "non_numeric_examples")
_MAX_CHARS = 80  # the probe's default bound of a text value: a text this long may have been cut
_INDEX_FACTS = ("index_type", "index_names", "index_range", "index_dates", "label_reprs")


def unknown(why: str) -> dict[str, Any]:
    return {"kind": "unknown", "why": why}


def _scalar(value: Any) -> bool:
    return (
        value is None
        or isinstance(value, (bool, int, str))
        or (isinstance(value, float) and math.isfinite(value))
    )


def _plain_label(value: Any) -> bool:
    """A label the probe may have recorded as itself: a plain value, not a text it may have cut short."""
    return _scalar(value) and not (isinstance(value, str) and len(value) >= _MAX_CHARS)


def _named_as_shown(info: ObjInfo, key: str, label: Any) -> bool:
    """Whether `label`, from fact `key`, is the label itself: not cut short, and not a label of another
    type the probe shows as text (np.int64(7) as '7', a tuple as its repr: `label_reprs` says which)."""
    shown = info.raw.get("label_reprs")
    return _plain_label(label) and not (isinstance(shown, list) and key in shown)


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


def _family(dtype: str, pandas: bool) -> str | None:
    if _NUMBER.match(dtype):
        return "number"
    if _DATETIME.match(dtype) and (dtype != "datetime64[D]" or not pandas):
        return "datetime"
    if dtype == "object":
        return "object"
    if _UNICODE.match(dtype) and not pandas:
        return "text"
    if pandas and _NULLABLE.match(dtype):
        return "nullable"
    if pandas and dtype in ("str", "string", "category"):
        return "text"
    return None


def column_values(info: ObjInfo, n: int, pandas: bool = True) -> dict[str, Any] | None:
    """The value recipe of `n` values `info` describes (a column, a series, or an array or a tensor read
    flat), or None when its dtype is not one we rebuild (`pandas`: pandas' own dtypes may occur).

    `open` lists the value facts the variants fill differently; `unfaithful` maps the facts the values
    do not reproduce to why."""
    dtype = info.dtype or ""
    family = _family(dtype, pandas)
    if family is None:
        return None
    exact = not info.sampled
    spec: dict[str, Any] = {"dtype": dtype, "family": family, "n": n, "open": [], "unfaithful": {}}
    if family == "object":
        types = info.raw.get("element_types")
        if not isinstance(types, list):
            if n:
                spec["unfaithful"]["element_types"] = "the types of its elements were not recorded"
            types = ["str"]
        elif not set(types) <= ELEMENT_TYPES:
            return None
        spec["types"] = [t for t in types if t not in ("nan", "NoneType")]
        spec["missing"] = [t for t in types if t in ("nan", "NoneType")]
        if not exact:
            spec["open"].append("element_types")  # types beyond the sample: variant 1 adds another
    # numpy's integers and bools, and its fixed-width text, have no missing value
    holds_missing = {"number": dtype.startswith("float"), "text": pandas}.get(family, True)
    if not holds_missing:
        spec["nan"] = 0
    elif exact and info.nan is not None:
        spec["nan"] = info.nan
    elif exact and family == "object" and "element_types" in info.raw:
        spec["nan"] = None if spec["missing"] else 0  # how many is not recorded, whether any is
    else:
        spec["nan"] = None
    if spec["nan"] is None:
        spec["some_nan"] = bool((info.nan or 0) > 0 or info.has_nan or spec.get("missing"))
        spec["open"].append("nan")
    counts = info.counts or []
    values = [[v, c] for v, c in counts if _scalar(v) and not (isinstance(v, str) and len(v) >= _MAX_CHARS)]
    rows = n - (spec["nan"] or 0)
    every = values and len(values) == len(counts) == info.unique and sum(c for _, c in values) == rows
    if exact and spec["nan"] is not None and every:
        spec["values"] = values  # every distinct value, with its count
    if "values" not in spec or dtype == "category":  # (a category's counts list its unused categories)
        spec["open"] += _VALUE_FACTS
    else:
        spec["open"] += _ORDERED_FACTS
    if family in ("number", "nullable", "datetime"):
        lo, hi = info.raw.get("min"), info.raw.get("max")
        if _is_bound(lo, family) and _is_bound(hi, family):
            spec["min"], spec["max"], spec["range_exact"] = lo, hi, exact
        if not spec.get("range_exact"):
            spec["open"] += ["min", "max"]
    if family in ("object", "text"):
        examples = [v for v in (info.examples or []) + (info.non_numeric_examples or []) if _scalar(v)]
        spec["examples"] = list(dict.fromkeys(examples))[:20]
        if info.non_numeric is not None and exact:
            spec["non_numeric"] = info.non_numeric
    if dtype == "category":
        spec["unfaithful"]["categories"] = "its categories and their order are not recorded"
    return spec


def _is_bound(value: Any, family: str) -> bool:
    if family == "datetime":
        return isinstance(value, str)
    return isinstance(value, (int, float)) and _scalar(value)


def _merge(spec: dict[str, Any], part: dict[str, Any], prefix: str = "") -> None:
    """Take a value recipe's open and unfaithful facts into its object's spec (a column's as `['c'].key`)."""
    spec.setdefault("open", []).extend(prefix + k for k in part.get("open") or [])
    unfaithful = part.get("unfaithful") or {}
    spec.setdefault("unfaithful", {}).update({prefix + k: why for k, why in unfaithful.items()})


def _index(info: ObjInfo, n: int) -> tuple[dict[str, Any], dict[str, str]]:
    """The recipe of a frame's or series' row labels, and the facts it leaves unfaithful."""
    kind = info.raw.get("index_type")
    labels = _range(info.raw.get("index_range"), n) if kind == "RangeIndex" else None
    if kind == "DatetimeIndex":
        labels = _dates(info.raw.get("index_dates"), n)
    if labels is None:
        # Labels other than a range or regular dates are not recorded (irregular dates, text, several
        # levels): partial indexing, .loc, unstack and resample would answer for labels we made up.
        what = f"a {kind}" if isinstance(kind, str) else "an index whose type was not recorded"
        why = f"{what} is not rebuilt (its labels are not recorded)"
        return {"kind": "open"}, dict.fromkeys(_INDEX_FACTS, why)
    names = info.raw.get("index_names")
    if isinstance(names, list) and len(names) == 1 and _named_as_shown(info, "index_names", names[0]):
        return {**labels, "name": names[0]}, {}
    why = "the index's name is not rebuilt (not recorded as itself)"
    return {**labels, "name": None}, {"index_names": why, "label_reprs": why}


def _range(bounds: Any, n: int) -> dict[str, Any] | None:
    """A RangeIndex of n labels from its recorded [start, stop, step]."""
    if (
        isinstance(bounds, list)
        and len(bounds) == 3
        and all(isinstance(b, int) and not isinstance(b, bool) for b in bounds)
        and bounds[2] != 0
        and len(range(*bounds)) == n
    ):
        return {"kind": "range", "range": bounds}
    return None


def _dates(dates: Any, n: int) -> dict[str, Any] | None:
    """A DatetimeIndex of n labels that is date_range(start, periods=n, freq): one with a freq, naive
    (a time zone's daylight saving shifts are not checked), and not a custom business day (its holidays
    are not in the freq's name)."""
    if not isinstance(dates, dict):
        return None
    start, freq, dtype = dates.get("start"), dates.get("freq"), dates.get("dtype")
    if not (isinstance(start, str) and isinstance(freq, str) and isinstance(dtype, str)):
        return None
    if not _DATETIME.match(dtype) or dtype.endswith("[D]") or freq.lstrip("0123456789").startswith("C"):
        return None
    return {"kind": "dates", "start": start, "freq": freq, "unit": dtype[len("datetime64[") : -1], "n": n}


def _frame(info: ObjInfo, view: RuntimeView) -> dict[str, Any]:
    if not info.shape or len(info.shape) != 2 or any(v is None for v in info.shape):
        return unknown("its shape was not recorded")
    rows, cols = int(info.shape[0] or 0), int(info.shape[1] or 0)
    if rows * max(cols, 1) > MAX_ELEMENTS:
        return unknown("too big to rebuild")
    if info.columns is None or len(info.columns) != cols:
        return unknown("its columns were not all recorded")
    if any(not isinstance(c, (str, int)) or not _plain_label(c) for c in info.columns):
        return unknown("column labels of a kind we do not rebuild")
    if info.raw.get("columns_type") == "MultiIndex":
        return unknown("column labels on several levels")
    index, unfaithful = _index(info, rows)
    spec: dict[str, Any] = {"kind": "frame", "rows": rows, "columns": [], "index": index, "open": [],
                            "unfaithful": unfaithful}  # fmt: skip
    labels = info.raw.get("columns_type")
    if labels == "RangeIndex" and info.columns == list(range(cols)):
        spec["column_labels"] = "range"
    elif labels != "Index":
        why = f"column labels in a {labels}" if isinstance(labels, str) else "the type of its column labels"
        spec["unfaithful"]["columns_type"] = f"{why} not rebuilt"
    names = info.raw.get("columns_names")
    if isinstance(names, list) and len(names) == 1 and _named_as_shown(info, "columns_names", names[0]):
        spec["columns_name"] = names[0]
    else:
        why = "the name of its column labels was not recorded as itself"
        spec["unfaithful"].update(columns_names=why, label_reprs=why)
    for name in info.columns:
        # The probe names a column's entry by its real label: a label recorded as text that has no
        # `df['label']` entry may be the repr of a tuple or of another object.
        child = view.get(f"{info.expr}[{name!r}]")
        values = column_values(child, rows) if child is not None else None
        if values is None:
            return unknown(f"the dtype of column {name!r} was not recorded")
        spec["columns"].append({"name": name, "values": values})
        _merge(spec, values, f"[{name!r}].")
    if any(c["values"]["nan"] is None for c in spec["columns"]):
        spec["open"].append("nan_columns")
    return spec


def _array(info: ObjInfo) -> dict[str, Any]:
    if not info.shape or any(not isinstance(v, int) for v in info.shape):
        return unknown("its shape was not recorded")
    size = math.prod(v or 0 for v in info.shape)
    if size > MAX_ELEMENTS:
        return unknown("too big to rebuild")
    values = column_values(info, size, pandas=False)
    if values is None:
        return unknown(f"dtype {info.dtype} is not one we rebuild")
    spec: dict[str, Any] = {"kind": "ndarray", "shape": list(info.shape), "values": values}
    _merge(spec, values)
    order = info.raw.get("order")
    if order in ("C", "F"):
        spec["order"] = order
    elif order:
        spec["unfaithful"]["order"] = "a strided view is not rebuilt"
    else:
        spec["unfaithful"]["order"] = "its memory order was not recorded"
    return spec


def _series(info: ObjInfo) -> dict[str, Any]:
    n = info.length if info.length is not None else (info.shape[0] if info.shape else None)
    if not isinstance(n, int):
        return unknown("its length was not recorded")
    if n > MAX_ELEMENTS:
        return unknown("too big to rebuild")
    values = column_values(info, n)
    if values is None:
        return unknown(f"dtype {info.dtype} is not one we rebuild")
    index, unfaithful = _index(info, n)
    name = info.raw.get("name")
    spec: dict[str, Any] = {"kind": "series", "values": values, "name": name, "index": index,
                            "unfaithful": unfaithful}  # fmt: skip
    _merge(spec, values)
    if not _named_as_shown(info, "name", name):
        spec["name"] = None
        why = "its name was not recorded as itself"
        spec["unfaithful"].update(name=why, label_reprs=why)
    return spec


def _tensor(info: ObjInfo) -> dict[str, Any]:
    if not info.shape or any(not isinstance(v, int) for v in info.shape):
        return unknown("its shape was not recorded")
    size = math.prod(v or 0 for v in info.shape)
    if size > MAX_ELEMENTS:
        return unknown("too big to rebuild")
    dtype = (info.dtype or "").removeprefix("torch.")
    if not _TORCH_DTYPE.match(dtype):
        return unknown(f"dtype {dtype} is not one we rebuild")
    if info.device != "cpu" or info.requires_grad is None:
        return unknown("a tensor off the CPU, or whose device or grad state was not recorded")
    # numpy has no bfloat16: its values are drawn as float32 (the probe reads them so too)
    as_numpy = dataclasses.replace(info, dtype="float32" if dtype == "bfloat16" else dtype)
    values = column_values(as_numpy, size, pandas=False)
    if values is None:
        return unknown(f"dtype {dtype} is not one we rebuild")
    spec: dict[str, Any] = {"kind": "tensor", "shape": list(info.shape), "dtype": dtype,
                            "requires_grad": bool(info.requires_grad), "values": values}  # fmt: skip
    _merge(spec, values)
    if info.raw.get("contiguous") is False:
        spec["unfaithful"]["contiguous"] = "a non-contiguous view is not rebuilt"
    return spec


def _estimator(info: ObjInfo) -> dict[str, Any]:
    params = info.raw.get("params")
    if not isinstance(params, dict) or not all(_scalar(v) for v in params.values()):
        return unknown("its parameters were not recorded as plain values")
    if info.steps is not None or info.raw.get("columns_used") is not None:
        return unknown("a pipeline or column transformer")
    if info.fitted is None:
        return unknown("its fitted state was not recorded")
    spec: dict[str, Any] = {"kind": "estimator", "path": info.type, "params": params, "fitted": info.fitted,
                            "unfaithful": {}}  # fmt: skip
    left = info.raw.get("params_left_out")
    if left:
        spec["unfaithful"]["params"] = f"{', '.join(map(str, left))} not recorded"
    role = info.raw.get("estimator_type")
    if not isinstance(role, str):
        spec["unfaithful"]["estimator_type"] = "what kind of estimator it is was not recorded"
    if info.fitted:
        if info.n_features_in is None:
            return unknown("a fitted estimator whose feature count was not recorded")
        outputs = info.raw.get("n_outputs_")
        if outputs not in (None, 1):
            return unknown("a multi-output estimator")
        classes = info.raw.get("classes_")
        spec["n_features"] = info.n_features_in
        spec["feature_names"] = info.feature_names_in
        if info.feature_names_in is None and info.raw.get("feature_names_in_") is not None:
            spec["unfaithful"]["feature_names_in_"] = "only some of its feature names were recorded"
        spec["classes"] = classes if isinstance(classes, list) and all(_scalar(c) for c in classes) else None
        spec["classes_dtype"] = info.raw.get("classes_dtype")
        coef = info.raw.get("coef_shape")
        if role == "regressor" and outputs is None and not (isinstance(coef, list) and len(coef) == 1):
            # fitted on one target or several (predict's shape): only n_outputs_ or coef_ say which
            spec["unfaithful"]["targets"] = "the shape of the targets it was fitted on was not recorded"
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
        and info.type in ("function", "type", "builtin_function_or_method", "abc.ABCMeta")
    ):  # a library's own function or class (scikit-learn's are ABCMeta's), imported by its path
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
