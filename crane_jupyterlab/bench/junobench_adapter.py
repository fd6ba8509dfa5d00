"""JunoBench's recorded runtime information (`runtime_info_obj`) as a `RuntimeView`.

The CRANE-LLM extractor recorded one dict per name the target cell uses (`type`, `shape`, `dtype`,
`per_column`, `is_fitted`, `fitted_attributes`, ...) and `__method__<name>_<attr>` entries for attributes
it could read. There is no live kernel behind it, so the adapter only states what the record proves:

- a DataFrame's columns are complete when `per_column` has as many names as `shape[1]`;
- a dict's keys are complete when the listed keys (`metrics` of a Keras history, `preview`) number `length`;
- a name is undefined when the cell reads it, the record does not have it, and no executed cell could
  have bound it (no assignment, import, def, class, for/with/except target anywhere, no star import,
  no magic, no `exec`); a cell we cannot parse binds every word it contains.

A missing `__method__` entry proves nothing (the extractor skips what it cannot evaluate), so no
attribute is ever reported missing from this format.
"""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Iterable
from typing import Any

from ..checks.cell import parse_cell
from ..checks.view import ModuleInfo, ObjInfo, RuntimeView, _int, _num

_TYPE_RE = re.compile(r"^<class '([^']+)'>$")
# Names an IPython kernel defines for the user.
IPYTHON_NAMES = frozenset(
    {"display", "get_ipython", "In", "Out", "exit", "quit", "_", "__", "___", "_i", "_ii"}
)
_DYNAMIC = re.compile(
    r"\b(exec|eval|globals|locals|vars|setattr|__import__|get_ipython|run_line_magic)\b|%run|%store"
)


def _type_name(raw: Any) -> str:
    text = str(raw or "")
    match = _TYPE_RE.match(text)
    return match.group(1) if match else text


def _info(expr: str, rec: dict[str, Any]) -> ObjInfo:
    info = ObjInfo(expr=expr, type=_type_name(rec.get("type")))
    if info.type.startswith("__main__."):
        info.user_code = True
    elif info.type in ("function", "type", "method"):
        # Objects the notebook created carry the cell that made them; imported ones do not.
        info.user_code = "execution_cell_source" in rec
    shape = rec.get("shape")
    if isinstance(shape, list) and all(_int(v) is not None or v is None for v in shape):
        info.shape = list(shape)
        info.facts.append(f"{expr}.shape = {tuple(shape)}")
    if isinstance(rec.get("dtype"), str):
        info.dtype = rec["dtype"]
        info.facts.append(f"{expr}.dtype = {info.dtype}")
    info.length = _int(rec.get("length"))
    if rec.get("has_nan") is True:
        info.has_nan = True
        info.facts.append(f"{expr} contains NaN")
    value_range = rec.get("value_range") or (rec.get("value_info") or {}).get("value_range")
    if isinstance(value_range, list) and len(value_range) == 2:
        info.min, info.max = _num(value_range[0]), _num(value_range[1])
        if info.min is not None and info.max is not None:
            info.facts.append(f"{expr} ranges over [{value_range[0]}, {value_range[1]}]")
    per_column = rec.get("per_column")
    if (
        isinstance(per_column, dict)
        and info.shape
        and len(info.shape) == 2
        and info.shape[1] == len(per_column)
    ):
        info.columns = list(per_column)
        info.facts.append(f"{expr} has {len(per_column)} columns: {_preview(per_column)}")
    keys = rec.get("metrics") if rec.get("detected") == "training_history_dict" else None
    if keys is None and isinstance(rec.get("preview"), list):
        keys = [p.get("key") for p in rec["preview"] if isinstance(p, dict)]
    if info.type == "dict" and isinstance(keys, list) and info.length == len(keys):
        info.keys = keys
        info.facts.append(f"{expr} keys = {keys}")
    if isinstance(rec.get("is_fitted"), bool):
        info.fitted = rec["is_fitted"]
        info.facts.append(f"{expr} fitted = {info.fitted}")
    fitted_attrs = rec.get("fitted_attributes")
    if isinstance(fitted_attrs, dict) and _int(fitted_attrs.get("n_features_in_")) is not None:
        info.n_features_in = fitted_attrs["n_features_in_"]
        info.facts.append(f"{expr}.n_features_in_ = {info.n_features_in}")
    if _int(rec.get("num_classes")) is not None:
        info.num_classes = rec["num_classes"]
        info.facts.append(f"{expr}.num_classes = {info.num_classes}")
    value = rec.get("value")
    kinds = {"int": int, "float": float, "bool": bool}
    if info.type in kinds and type(value) is kinds[info.type]:
        # The extractor records a scalar's value as it was (strings it may have cut: not taken).
        info.value, info.has_value = value, True
        info.facts.append(f"{expr} = {value!r}")
    return info


def _columns(expr: str, rec: dict[str, Any]) -> list[ObjInfo]:
    """One Series entry per recorded column: dtype, value range and example values."""
    out: list[ObjInfo] = []
    per_column = rec.get("per_column")
    if not isinstance(per_column, dict):
        return out
    for name, col in per_column.items():
        if not isinstance(col, dict):
            continue
        info = ObjInfo(expr=f"{expr}[{name!r}]", type="pandas.Series")
        if isinstance(col.get("dtype"), str):
            info.dtype = col["dtype"]
        values = col.get("unique_values") or col.get("example_values")
        if isinstance(values, list):
            info.examples = values
            info.facts.append(f"{info.expr} values include {values[:5]}")
        value_range = col.get("value_range")
        if isinstance(value_range, list) and len(value_range) == 2:
            info.min, info.max = _num(value_range[0]), _num(value_range[1])
        out.append(info)
    return out


def _preview(names: Iterable[Any], limit: int = 8) -> str:
    items = [repr(n) for n in names]
    return ", ".join(items[:limit]) + (f", ... ({len(items)} in all)" if len(items) > limit else "")


def _method_keys(tree: ast.Module) -> dict[str, str]:
    """`__method__df_drop` -> `df.drop`, for every `name.attr` the cell writes."""
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            out[f"__method__{node.value.id}_{node.attr}"] = f"{node.value.id}.{node.attr}"
    return out


def bound_anywhere(cells: Iterable[str]) -> tuple[set[str], bool]:
    """Names any executed cell may have bound, and whether some cell may bind names we cannot see."""
    names: set[str] = set()
    opaque = False
    for source in cells:
        tree, _ = parse_cell(source)
        if tree is None:  # unparsable (the upstream comment stripping broke some): every word counts
            names.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", source))
            continue
        if _DYNAMIC.search(source):
            opaque = True
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                names.add(node.id)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    if alias.name == "*":
                        opaque = True
                    names.add(alias.asname or alias.name.split(".")[0])
            elif isinstance(node, ast.ExceptHandler) and node.name:
                names.add(node.name)
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                names.update(node.names)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
            elif isinstance(node, ast.alias):
                names.add(node.asname or node.name.split(".")[0])
            else:
                for attr in ("name", "rest"):  # match-case captures
                    value = getattr(node, attr, None)
                    if isinstance(value, str) and isinstance(node, ast.pattern):
                        names.add(value)
    return names, opaque


def module_aliases(cells: Iterable[str]) -> dict[str, str]:
    """Names every executed cell binds only by one import: `pd` -> `pandas`, `SVC` -> `sklearn.svm.SVC`."""
    imported: dict[str, set[str]] = {}
    other: set[str] = set()
    for source in cells:
        tree, _ = parse_cell(source)
        if tree is None:
            other.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", source))
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    name = alias.asname or alias.name.split(".")[0]
                    top = alias.name if alias.asname else alias.name.split(".")[0]
                    imported.setdefault(name, set()).add(top)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    imported.setdefault(alias.asname or alias.name, set()).add(f"{node.module}.{alias.name}")
            elif isinstance(node, ast.ImportFrom):
                other.update(a.asname or a.name for a in node.names)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                other.add(node.id)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                other.add(node.name)
            elif isinstance(node, ast.arg):
                other.add(node.arg)
    return {name: next(iter(mods)) for name, mods in imported.items() if len(mods) == 1 and name not in other}


def from_junobench(
    record: dict[str, Any] | None, source: str, executed_cells: list[str] | None
) -> RuntimeView:
    """The view of one JunoBench case. `record` may be None (28 cases have no parsed record)."""
    view = RuntimeView(source="junobench")
    tree, _ = parse_cell(source)
    if not isinstance(record, dict) or tree is None:
        return view
    methods = _method_keys(tree)
    aliases = module_aliases(executed_cells or [])
    for key, rec in record.items():
        if not isinstance(rec, dict):
            continue
        expr = methods.get(key) if key.startswith("__method__") else key
        if expr is None:
            continue
        info = _info(expr, rec)
        if info.type == "module":
            view.modules[expr] = ModuleInfo(expr, aliases.get(expr, expr), None)
        elif expr in aliases and info.type in ("type", "function", "abc.ABCMeta"):
            info.module, info.path = aliases[expr].rsplit(".", 1)[0], aliases[expr]
        view.objects[expr] = info
        for column in _columns(expr, rec):
            view.objects.setdefault(column.expr, column)
    if executed_cells is not None:
        bound, opaque = bound_anywhere(executed_cells)
        if not opaque:
            for node in ast.walk(tree):
                if not (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)):
                    continue
                name = node.id
                if name in record or name in bound or name in IPYTHON_NAMES or hasattr(builtins, name):
                    continue
                view.undefined.add(name)
    return view
