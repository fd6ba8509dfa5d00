"""Text where numbers are needed.

- scikit-learn estimators that validate X as numeric (`check_array(dtype="numeric")`: linear models,
  SVMs, neighbors, trees and forests, naive Bayes, neural networks, clustering, decomposition, the
  scalers) given a DataFrame with a text column, or an array of strings: ValueError "could not
  convert string to float". Encoders, vectorizers, imputers, pipelines and column transformers take
  text on purpose and are left alone.
- statsmodels models given an exog DataFrame with a text column: ValueError ("Pandas data cast to
  numpy dtype of object").
- pandas reductions that need numbers over every column (`df.mean()`, `median`, `std`, `var`,
  `corr`, `cov`, and `df.groupby(k).mean()` over the other columns) without `numeric_only=True`:
  TypeError / ValueError since pandas 2.

Evidence: a column whose values are certainly text that is not a number: dtype `str`/`string`/
`category`/`object` and a value shown that float() cannot read (the probe's `non_numeric_examples`
or examples; their presence proves it, on a sample or not).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

from ...models import Finding
from ..context import CellContext, argument, has_star_args, kwarg, line_of
from ..flow import Site
from ..view import ObjInfo, type_class
from .conversion import unparsable

RULE = "text-data"

TEXT_DTYPES = ("object", "str", "string", "category")
NUMERIC_ESTIMATOR_MODULES = (
    "sklearn.linear_model", "sklearn.svm", "sklearn.neighbors", "sklearn.tree", "sklearn.ensemble",
    "sklearn.naive_bayes", "sklearn.neural_network", "sklearn.discriminant_analysis", "sklearn.cluster",
    "sklearn.decomposition", "sklearn.manifold", "sklearn.mixture", "sklearn.kernel_ridge",
    "sklearn.gaussian_process",
)  # fmt: skip
NUMERIC_TRANSFORMERS = frozenset(
    {"StandardScaler", "MinMaxScaler", "MaxAbsScaler", "RobustScaler", "Normalizer", "PolynomialFeatures",
     "PowerTransformer", "QuantileTransformer", "KBinsDiscretizer", "Binarizer", "SplineTransformer"}
)  # fmt: skip
# ensemble estimators that take categorical/text columns themselves
TEXT_TOLERANT = ("HistGradientBoosting", "Dummy", "StackingClassifier", "StackingRegressor", "Voting")
VALIDATING = frozenset({"fit", "predict", "predict_proba", "predict_log_proba", "decision_function",
                        "transform", "fit_transform", "fit_predict", "score", "partial_fit"})  # fmt: skip
REDUCTIONS = {"mean": "TypeError", "median": "TypeError", "std": "TypeError", "var": "TypeError",
              "sem": "TypeError", "corr": "ValueError", "cov": "ValueError", "skew": "TypeError",
              "kurt": "TypeError"}  # fmt: skip
GROUPBY_REDUCTIONS = frozenset({"mean", "median", "std", "var", "sem"})
# Series reductions that need numbers: pandas' nanops on a str/string column raise "Cannot perform
# reduction 'mean' with string dtype" whatever the text says; a Categorical "does not support" them.
SERIES_REDUCTIONS = frozenset({"mean", "median", "std", "var", "sem", "skew", "kurt"})
STRING_DTYPES = ("str", "string")
STATSMODELS_MODELS = frozenset({"OLS", "WLS", "GLS", "Logit", "Probit", "GLM", "Poisson", "QuantReg", "RLM",
                                "MNLogit"})  # fmt: skip


def text_values(column: ObjInfo | None) -> list[str]:
    """Values shown of a column that certainly are text float() cannot read."""
    if column is None or column.missing or not column.dtype or not column.dtype.startswith(TEXT_DTYPES):
        return []
    shown = [*(column.non_numeric_examples or []), *(column.examples or [])]
    return list(dict.fromkeys(v for v in shown if isinstance(v, str) and unparsable(v)))[:3]


def text_columns(
    ctx: CellContext, frame: ObjInfo, only: list[Any] | None = None
) -> list[tuple[str, list[str]]]:
    """(column, text values) of the frame's columns that certainly hold non-numeric text; the
    columns come from the frame's own entry (a frame the cell derives keeps its source's columns)."""
    source = frame.source or frame.expr
    if not source:
        return []
    names = only if only is not None else frame.columns
    if names is None:
        return []
    out = []
    for name in names:
        values = text_values(ctx.view.get(f"{source}[{name!r}]"))
        if values:
            out.append((str(name), values))
    return out


def _numeric_estimator(path: str) -> bool:
    cls = path.rsplit(".", 1)[-1]
    if any(part in cls for part in TEXT_TOLERANT):
        return False
    return path.startswith(NUMERIC_ESTIMATOR_MODULES) or cls in NUMERIC_TRANSFORMERS


def _estimator_path(ctx: CellContext, node: ast.expr, site: Site) -> str | None:
    info = ctx.value_of(node, site)
    if info is not None:
        return info.type if info.type.startswith("sklearn.") else None
    made = ctx.made_here(node, site)
    if made is not None:
        return made[0].type
    if isinstance(node, ast.Name):
        fitted = site.fitted_here(node.id)
        if fitted is not None:
            return ctx.class_path(fitted[0].func, site)
    return None


def _sklearn(ctx: CellContext, site: Site, call: ast.Call) -> Finding | None:
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr not in VALIDATING or has_star_args(call):
        return None
    path = _estimator_path(ctx, func.value, site)
    if path is None or not path.startswith("sklearn.") or not _numeric_estimator(path):
        return None
    x_node = argument(call, 0, "X")
    x = ctx.value_of(x_node, site) if x_node is not None else None
    if x is None:
        return None
    if x.is_frame:
        found = text_columns(ctx, x)
        if not found:
            return None
        column, values = found[0]
        detail = f"its column {column!r} holds text such as {values[0]!r}"
    elif x.is_ndarray and x.dtype and x.dtype.startswith(("<U", "|S", "str", "object")):
        values = [
            v
            for v in (x.examples or []) + (x.non_numeric_examples or [])
            if isinstance(v, str) and unparsable(v)
        ]
        if not values:
            return None
        detail = f"it holds strings such as {values[0]!r}"
    else:
        return None
    return Finding(
        rule=RULE,
        message=(
            f"ValueError: could not convert string to float: {type_class(path)} needs numbers, and "
            f"{x.expr} is "
            f"not all numbers: {detail} ({func.attr}, line {line_of(call)})."
        ),
        evidence=[f"{x.expr} passed to {ast.unparse(func)}", detail, *([x.derived] if x.derived else [])],
        line=line_of(call),
    )


def _statsmodels(ctx: CellContext, site: Site, call: ast.Call) -> Finding | None:
    if not isinstance(call.func, (ast.Name, ast.Attribute)) or has_star_args(call):
        return None
    path = ctx.class_path(call.func, site)
    if (
        path is None
        or path.split(".")[0] != "statsmodels"
        or path.rsplit(".", 1)[-1] not in STATSMODELS_MODELS
    ):
        return None
    exog_node = argument(call, 1, "exog")
    exog = ctx.value_of(exog_node, site) if exog_node is not None else None
    if exog is None or not exog.is_frame:
        return None
    found = text_columns(ctx, exog)
    if not found:
        return None
    column, values = found[0]
    return Finding(
        rule=RULE,
        message=(
            f"ValueError: Pandas data cast to numpy dtype of object: {exog.expr}[{column!r}] holds text "
            "such as "
            f"{values[0]!r} ({path.rsplit('.', 1)[-1]}, line {line_of(call)})."
        ),
        evidence=[f"{exog.expr}[{column!r}] values include {values}"],
        line=line_of(call),
    )


def _reduction(ctx: CellContext, site: Site, call: ast.Call) -> Finding | None:
    """`df.mean()` / `df.corr()` / `df.groupby('k').mean()` over text columns."""
    func = call.func
    if not isinstance(func, ast.Attribute) or has_star_args(call) or call.args:
        return None
    numeric_only = kwarg(call, "numeric_only")
    if numeric_only is not None and not (
        isinstance(numeric_only, ast.Constant) and numeric_only.value is False
    ):
        return None
    if kwarg(call, "axis") is not None:
        return None
    receiver = func.value
    keys: list[str] = []
    only: list[Any] | None = None
    if func.attr in GROUPBY_REDUCTIONS and isinstance(receiver, ast.Subscript):
        selection = ctx.labels(receiver.slice, site)
        grouped = receiver.value
        if selection is None or not _is_groupby(grouped):
            return None
        assert isinstance(grouped, ast.Call) and isinstance(grouped.func, ast.Attribute)
        only, frame_node = selection, grouped.func.value
    elif func.attr in GROUPBY_REDUCTIONS and _is_groupby(receiver):
        assert isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Attribute)
        grouped_keys = ctx.labels(receiver.args[0] if receiver.args else kwarg(receiver, "by"), site)
        plain = all(k.arg in ("by", "dropna", "sort", "observed") for k in receiver.keywords)
        if grouped_keys is None or len(receiver.args) > 1 or not plain:
            return None
        keys, frame_node = grouped_keys, receiver.func.value
    elif func.attr in REDUCTIONS:
        frame_node = receiver
    else:
        return None
    frame = ctx.value_of(frame_node, site)
    if frame is None or not frame.is_frame or frame.columns is None:
        return None
    if only is None:
        only = [c for c in frame.columns if c not in keys]
    found = text_columns(ctx, frame, only)
    if not found:
        return None
    column, values = found[0]
    error = REDUCTIONS.get(func.attr, "TypeError")
    what = (
        "could not convert string to float"
        if error == "ValueError"
        else f"cannot compute {func.attr} of text"
    )
    return Finding(
        rule=RULE,
        message=(
            f"{error}: {what}: {frame.expr}[{column!r}] holds text such as {values[0]!r}; {func.attr}() "
            "needs "
            "numbers in every column (pass numeric_only=True or select the numeric columns; line "
            f"{line_of(call)})."
        ),
        evidence=[f"{frame.expr}[{column!r}] values include {values}"],
        line=line_of(call),
    )


def _series_reduction(ctx: CellContext, site: Site, call: ast.Call) -> Finding | None:
    """`s.mean()` of a Series of text: pandas' string and categorical arrays refuse numeric reductions
    (any value, even '1.5'); an object Series only when a value shown is text float() cannot read."""
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr not in SERIES_REDUCTIONS or has_star_args(call):
        return None
    if call.args or any(k.arg not in ("skipna", "numeric_only") for k in call.keywords):
        return None
    series = ctx.value_of(func.value, site)
    if series is None or not series.is_series or not series.dtype or not ctx.view.at_least("pandas", 2):
        return None
    dtype = series.dtype
    if dtype in STRING_DTYPES or dtype.startswith("string["):
        detail = f"{series.expr} has dtype {dtype}"
        message = f"TypeError: Cannot perform reduction {func.attr!r} with string dtype"
    elif dtype == "category":
        detail = f"{series.expr} has dtype category"
        message = f"TypeError: 'Categorical' with dtype category does not support reduction {func.attr!r}"
    elif dtype == "object" and _words(series):
        # an object array's sum meets the str first ('n/a' + 1.0): any text float() cannot read
        detail = f"{series.expr} holds text such as {_words(series)[0]!r}"
        message = f"TypeError: cannot compute {func.attr} of text"
    else:
        return None
    return Finding(
        rule=RULE,
        message=f"{message}: {detail} (line {line_of(call)}).",
        evidence=[detail, *([series.derived] if series.derived else [])],
        line=line_of(call),
    )


def _words(series: ObjInfo) -> list[str]:
    """Strings shown in the Series that float() cannot read (their presence proves it)."""
    out = []
    for value in [*(series.non_numeric_examples or []), *(series.examples or [])]:
        if isinstance(value, str):
            try:
                float(value)
            except ValueError:
                out.append(value)
    return out


def _is_groupby(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "groupby"


def check(ctx: CellContext) -> Iterator[Finding]:
    for site in ctx.certain(ast.Call):
        call = site.node
        assert isinstance(call, ast.Call)
        if site.caught(("ValueError", "TypeError")):
            continue
        finding = (
            _sklearn(ctx, site, call)
            or _statsmodels(ctx, site, call)
            or _reduction(ctx, site, call)
            or _series_reduction(ctx, site, call)
        )
        if finding is not None:
            yield finding
