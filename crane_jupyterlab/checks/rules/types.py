"""TypeError: an operation the value's type does not support at all.

Python's own preconditions, decided by the type alone:
- calling a value that is not callable: a name that now holds data (`accuracy = 0.9` then
  `accuracy(y, p)`; `sum = 0` then `sum(xs)`), or a data attribute called as a method (`df.shape()`,
  `df.columns()`, `arr.size()`): the type has no `__call__` (TypeError: 'float' object is not callable);
- subscripting a value whose type has no `__getitem__` (`None[...]` after `df = df.dropna(inplace=True)`,
  an int, a function): TypeError: 'NoneType' object is not subscriptable;
- `len()` of a value without `__len__`, iterating over one without `__iter__` (`for i in 10:`).

Evidence: the value's type as the kernel holds it (or as the cell derives it), for the builtin and
library types whose protocol is fixed: numbers, None, strings and containers, DataFrame/Series/Index,
ndarray, torch Tensor. Objects of any other class are left alone (a class may define anything).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ...models import Finding
from ..context import CellContext, has_star_args, line_of
from ..flow import Site
from ..view import ObjInfo, type_class

RULE = "type-error"

# type (as the probe names it) -> (callable, subscriptable, has len, iterable)
PROTOCOLS: dict[str, tuple[bool, bool, bool, bool]] = {
    "int": (False, False, False, False),
    "float": (False, False, False, False),
    "bool": (False, False, False, False),
    "complex": (False, False, False, False),
    "NoneType": (False, False, False, False),
    "str": (False, True, True, True),
    "bytes": (False, True, True, True),
    "list": (False, True, True, True),
    "tuple": (False, True, True, True),
    "dict": (False, True, True, True),
    "set": (False, False, True, True),
    "frozenset": (False, False, True, True),
    "range": (False, True, True, True),
    "pandas.DataFrame": (False, True, True, True),
    "pandas.Series": (False, True, True, True),
    "pandas.Index": (False, True, True, True),
    "numpy.ndarray": (False, True, True, True),
    "torch.Tensor": (False, True, True, True),
    "function": (True, False, False, False),
    "builtin_function_or_method": (True, False, False, False),
    "method": (True, False, False, False),
    "generator": (False, False, False, True),
}

# Attributes of data types that hold values, not methods: calling them is a TypeError.
# (loc/iloc are callable in pandas; a tensor's size() is a method.)
DATA_ATTRIBUTES: dict[str, dict[str, str]] = {
    "pandas.DataFrame": {"shape": "tuple", "columns": "Index", "index": "Index", "dtypes": "Series",
                         "values": "numpy.ndarray", "T": "DataFrame", "size": "int", "ndim": "int",
                         "empty": "bool", "axes": "list"},
    "pandas.Series": {"shape": "tuple", "index": "Index", "dtype": "numpy.dtype", "values": "numpy.ndarray",
                      "size": "int", "ndim": "int", "empty": "bool", "T": "Series", "hasnans": "bool"},
    "numpy.ndarray": {"shape": "tuple", "size": "int", "ndim": "int", "dtype": "numpy.dtype", "T": "ndarray",
                      "nbytes": "int", "itemsize": "int"},
    "torch.Tensor": {"shape": "torch.Size", "dtype": "torch.dtype", "device": "torch.device",
                     "requires_grad": "bool", "is_cuda": "bool", "T": "Tensor", "ndim": "int"},
}  # fmt: skip

ITERATING_BUILTINS = frozenset(
    {"list", "tuple", "set", "sorted", "sum", "enumerate", "zip", "iter", "max", "min"}
)


def _protocol(info: ObjInfo | None) -> tuple[bool, bool, bool, bool] | None:
    if info is None or info.missing:
        return None
    return PROTOCOLS.get(info.type)


def _short(type_name: str) -> str:
    return type_class(type_name)


def _not_callable(ctx: CellContext, site: Site, call: ast.Call) -> Finding | None:
    func = call.func
    if isinstance(func, ast.Attribute):
        owner = ctx.value_of(func.value, site)
        if owner is None or owner.missing:
            return None
        held = DATA_ATTRIBUTES.get(owner.type, {}).get(func.attr)
        if held is None:
            return None
        what, evidence = (
            held,
            [f"{owner.expr} is a {owner.type}; {owner.expr}.{func.attr} is a {held}, not a method"],
        )
    else:
        info = ctx.value_of(func, site)
        protocol = _protocol(info)
        if info is None or protocol is None or protocol[0]:
            return None
        what, evidence = (
            info.type,
            [f"{info.expr} holds a {info.type}" + (f" ({info.derived})" if info.derived else "")],
        )
    return Finding(
        rule=RULE,
        message=f"TypeError: '{_short(what)}' object is not callable: {ast.unparse(func)} (line "
        f"{line_of(call)}).",
        evidence=evidence,
        line=line_of(call),
    )


def _not_subscriptable(ctx: CellContext, site: Site, node: ast.Subscript) -> Finding | None:
    if not isinstance(node.ctx, ast.Load):
        return None
    info = ctx.value_of(node.value, site)
    protocol = _protocol(info)
    if info is None or protocol is None or protocol[1]:
        return None
    return Finding(
        rule=RULE,
        message=f"TypeError: '{_short(info.type)}' object is not subscriptable: {info.expr} (line "
        f"{line_of(node)}).",
        evidence=[f"{info.expr} holds a {info.type}" + (f" ({info.derived})" if info.derived else "")],
        line=line_of(node),
    )


def _builtin_over(ctx: CellContext, site: Site, call: ast.Call) -> Finding | None:
    """`len(x)`, `list(x)`, `sum(x)`, ... on a value without `__len__` / `__iter__`."""
    func = call.func
    if not isinstance(func, ast.Name) or func.id in site.bound or len(call.args) < 1 or call.keywords:
        return None
    if func.id != "len" and func.id not in ITERATING_BUILTINS:
        return None
    if func.id in ("max", "min", "sum") and len(call.args) != 1:
        return None  # max(a, b) compares its arguments; sum(x, start) still iterates x, keep it simple
    info = ctx.value_of(call.args[0], site)
    protocol = _protocol(info)
    if info is None or protocol is None:
        return None
    if func.id == "len" and not protocol[2]:
        message = f"TypeError: object of type '{_short(info.type)}' has no len()"
    elif func.id != "len" and not protocol[3]:
        message = f"TypeError: '{_short(info.type)}' object is not iterable"
    else:
        return None
    return Finding(
        rule=RULE,
        message=f"{message}: {func.id}({info.expr}) (line {line_of(call)}).",
        evidence=[f"{info.expr} holds a {info.type}"],
        line=line_of(call),
    )


def _loop_over(ctx: CellContext, node: ast.For) -> Finding | None:
    site = ctx.values.site_of(node.iter)
    if site is None or not site.certain or site.caught(("TypeError",)):
        return None
    info = ctx.value_of(node.iter, site)
    protocol = _protocol(info)
    if info is None or protocol is None or protocol[3]:
        return None
    return Finding(
        rule=RULE,
        message=f"TypeError: '{_short(info.type)}' object is not iterable: for ... in {info.expr} (line "
        f"{line_of(node)}).",
        evidence=[f"{info.expr} holds a {info.type}"],
        line=line_of(node),
    )


TIME_INDEXES = frozenset({"DatetimeIndex", "TimedeltaIndex", "PeriodIndex"})


def _resample(ctx: CellContext, site: Site, call: ast.Call) -> Finding | None:
    """`df.resample('MS')` without `on=`/`level=`: pandas groups by the index and raises TypeError ("Only
    valid with DatetimeIndex, TimedeltaIndex or PeriodIndex") for any other index. Judged on the kernel's
    own object only (the cell may set another index before)."""
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr != "resample" or has_star_args(call):
        return None
    if any(k.arg in ("on", "level") for k in call.keywords):
        return None
    x = ctx.value_of(func.value, site)
    if x is None or x.derived or not (x.is_frame or x.is_series):
        return None
    index_type = x.raw.get("index_type")
    if index_type is None and isinstance(func.value, ast.Subscript) and x.is_series:
        frame = ctx.value_of(func.value.value, site)  # a column keeps its frame's index
        if frame is not None and frame.is_frame and not frame.derived:
            index_type = frame.raw.get("index_type")
    if not isinstance(index_type, str) or index_type in TIME_INDEXES:
        return None
    return Finding(
        rule=RULE,
        message=(
            "TypeError: Only valid with DatetimeIndex, TimedeltaIndex or PeriodIndex, but got an instance "
            f"of {index_type!r}: {x.expr}'s index holds no dates (set_index the date column, or pass on=; "
            f"line {line_of(call)})."
        ),
        evidence=[f"type({x.expr}.index) = {index_type}"],
        line=line_of(call),
    )


def check(ctx: CellContext) -> Iterator[Finding]:
    for site in ctx.sites:
        if not site.certain or site.caught(("TypeError",)):
            continue
        node = site.node
        finding: Finding | None = None
        if isinstance(node, ast.Call):
            finding = (
                _not_callable(ctx, site, node) or _builtin_over(ctx, site, node) or _resample(ctx, site, node)
            )
        elif isinstance(node, ast.Subscript):
            finding = _not_subscriptable(ctx, site, node)
        if finding is not None:
            yield finding
    for stmt in ast.walk(ctx.tree):
        if isinstance(stmt, ast.For):
            finding = _loop_over(ctx, stmt)
            if finding is not None:
                yield finding
