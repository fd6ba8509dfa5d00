"""ValueError: converting values to numbers that cannot be numbers.

- `s.astype(int)` / `df['c'].astype('float')` / `pd.to_numeric(df['c'])` (default errors='raise') when
  the values shown include a string no number parser accepts (`'10,000+'`, `'$36,945 '`, `'abc'`);
- `s.astype(int)` (NumPy integer, not the nullable `'Int64'`) when the float column has missing values
  (IntCastingNaNError);
- `pd.to_datetime(s, format='%Y-%m-%d')` when a value shown is written another way ('01/15/2024').

Evidence: the values the runtime shows are actual values of that column (a sample: their absence proves
nothing, their presence proves the crash), its NaN count, and the Series must still be the kernel's.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from datetime import datetime

from ...models import Finding
from ..context import CellContext, const_str, has_star_args, kwarg, line_of
from ..flow import Site
from ..view import ObjInfo

RULE = "bad-conversion"

INT_NAMES = frozenset(
    {"int", "int64", "int32", "int16", "int8", "uint8", "uint16", "uint32", "uint64", "int_"}
)
FLOAT_NAMES = frozenset({"float", "float64", "float32", "double"})
# Strings the numeric parsers read as missing or infinite, not as errors.
NA_STRINGS = frozenset(
    {"", "nan", "na", "n/a", "null", "none", "inf", "+inf", "-inf", "infinity", "+infinity", "-infinity",
     "<na>", "nat", "#n/a", "#na", "-nan", "1.#ind", "1.#qnan", "-1.#ind", "-1.#qnan", "#n/a n/a"}
)  # fmt: skip


def _target(ctx: CellContext, site: Site, node: ast.expr) -> str | None:
    """'int' / 'float' for a NumPy integer / float dtype spelled as a builtin, string or np attribute."""
    name = const_str(node)
    if (
        name is None
        and isinstance(node, ast.Name)
        and node.id in ("int", "float")
        and node.id not in site.bound
    ):
        name = node.id
    if name is None and isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        module = ctx.view.modules.get(node.value.id)
        if module is not None and module.module.split(".")[0] == "numpy" and site.pristine(node.value.id):
            name = node.attr
    if name in INT_NAMES:
        return "int"
    if name in FLOAT_NAMES:
        return "float"
    return None


def unparsable(value: object) -> bool:
    """A string that neither int() nor float() nor pandas' numeric parser can read."""
    if not isinstance(value, str) or value.strip().lower() in NA_STRINGS:
        return False
    try:
        float(value)
    except ValueError:
        return True
    return False


# Values shown as text that a datetime/timedelta column would hold (those columns convert to integers).
_DATETIME_LIKE = re.compile(r"^\s*\d{1,4}[-/:.]\d{1,2}|\d\s*days?\b|^\s*NaT\s*$")
TEXT_DTYPES = ("object", "str", "string", "category")


def _bad_strings(series: ObjInfo) -> list[str]:
    """Example values that prove the column holds non-numeric text."""
    if series.dtype is not None and not series.dtype.startswith(TEXT_DTYPES):
        return []
    shown = [*(series.non_numeric_examples or []), *(series.examples or [])]
    return list(
        dict.fromkeys(
            v
            for v in shown
            if isinstance(v, str)
            and unparsable(v)
            and (series.dtype is not None or not _DATETIME_LIKE.search(v))
        )
    )


def _finding(series: ObjInfo, call: ast.Call, what: str, bad: list[str]) -> Finding:
    return Finding(
        rule=RULE,
        message=(
            f"ValueError: {what} cannot convert {series.expr}: it holds values such as {bad[0]!r} that are "
            f"not numbers (line {line_of(call)})."
        ),
        evidence=[
            f"{series.expr} values include {bad[:3]}",
            *([f"{series.expr}.dtype = {series.dtype}"] if series.dtype else []),
        ],
        line=line_of(call),
    )


def _astype(ctx: CellContext, site: Site, call: ast.Call) -> Finding | None:
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr == "astype") or has_star_args(call):
        return None
    if len(call.args) != 1 or kwarg(call, "errors") is not None:
        return None
    target = _target(ctx, site, call.args[0])
    series = ctx.value_of(func.value, site)
    if target is None or series is None or not series.is_("pandas", "Series"):
        return None
    bad = _bad_strings(series)
    if bad:
        return _finding(series, call, f"astype({target})", bad)
    if target == "int" and series.nan and series.dtype in ("float64", "float32", "float16"):
        return Finding(
            rule=RULE,
            message=(
                f"IntCastingNaNError: {series.expr} has {series.nan} missing value(s); astype(int) cannot "
                f"convert NaN to an integer (line {line_of(call)})."
            ),
            evidence=[f"{series.expr}.isna().sum() = {series.nan}", f"{series.expr}.dtype = {series.dtype}"],
            line=line_of(call),
        )
    return None


def _to_numeric(ctx: CellContext, site: Site, call: ast.Call) -> Finding | None:
    func = call.func
    if not (
        isinstance(func, ast.Attribute) and func.attr == "to_numeric" and isinstance(func.value, ast.Name)
    ):
        return None
    module = ctx.view.modules.get(func.value.id)
    if module is None or module.module.split(".")[0] != "pandas" or not site.pristine(func.value.id):
        return None
    errors = kwarg(call, "errors")
    if has_star_args(call) or len(call.args) != 1 or (errors is not None and const_str(errors) != "raise"):
        return None
    series = ctx.value_of(call.args[0], site)
    if series is None or not series.is_("pandas", "Series"):
        return None
    bad = _bad_strings(series)
    return _finding(series, call, "pd.to_numeric", bad) if bad else None


# `pd.to_datetime(s, format=F)` parses every value with F (exact=True, errors='raise'): a value shown
# that F cannot parse is a ValueError ("time data ... doesn't match format"). Only directives whose
# meaning does not depend on the locale or on pandas' own extensions are judged (datetime.strptime
# agrees with pandas' array_strptime on them).
_PLAIN_FORMAT = re.compile(r"(?:[^%]|%[YmdHMSyj%])+")


def _unparsed_dates(series: ObjInfo, fmt: str) -> list[str]:
    bad = []
    for value in (v for v in series.shown_values() if isinstance(v, str)):
        if value.strip().lower() in NA_STRINGS:
            continue
        try:
            datetime.strptime(value, fmt)
        except ValueError:
            bad.append(value)
    return bad


def _to_datetime(ctx: CellContext, site: Site, call: ast.Call) -> Finding | None:
    func = call.func
    if not isinstance(func, (ast.Attribute, ast.Name)) or has_star_args(call) or len(call.args) != 1:
        return None
    path = ctx.class_path(func, site)
    if path is None or path.split(".")[0] != "pandas" or path.rsplit(".", 1)[-1] != "to_datetime":
        return None
    if any(k.arg in ("errors", "exact") for k in call.keywords):
        return None
    fmt = const_str(kwarg(call, "format"))
    # a format with no directive is a keyword of pandas' own ('mixed', 'ISO8601'), not a strptime format
    if fmt is None or "%" not in fmt or not _PLAIN_FORMAT.fullmatch(fmt):
        return None
    series = ctx.value_of(call.args[0], site)
    if series is None or not series.is_series or series.dtype not in ("object", "str", "string"):
        return None
    bad = _unparsed_dates(series, fmt)
    if not bad:
        return None
    return Finding(
        rule=RULE,
        message=(
            f"ValueError: time data {bad[0]!r} doesn't match format {fmt!r}: {series.expr} holds dates "
            f"written another way (line {line_of(call)})."
        ),
        evidence=[f"{series.expr} values include {bad[:3]}", f"format = {fmt!r}"],
        line=line_of(call),
    )


def check(ctx: CellContext) -> Iterator[Finding]:
    for site in ctx.certain(ast.Call):
        call = site.node
        assert isinstance(call, ast.Call)
        if site.caught(("ValueError",)):
            continue
        finding = _astype(ctx, site, call) or _to_numeric(ctx, site, call) or _to_datetime(ctx, site, call)
        if finding is not None:
            yield finding
