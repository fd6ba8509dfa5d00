"""Calls whose arguments the values at hand cannot satisfy.

- `lst.remove(x)` / `lst.index(x)`: x is not among the list's elements (ValueError);
- `train_test_split(..., stratify=y)`: some class of y has a single member (ValueError);
- `arr /= 255.0`, `arr *= 0.5`: in-place float arithmetic on an integer NumPy array (UFuncTypeError);
- `s.str` / `s.dt` on a Series of numbers (AttributeError: Can only use .str accessor with string values);
- `np.concatenate(a, b)` / `np.stack(a, b)`: an array where the axis belongs (TypeError).

Evidence: the complete elements of a small list, value counts (their least frequent values included),
dtypes and shapes as the kernel holds them.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ...models import Finding
from ..context import CellContext, argument, has_star_args, kwarg, line_of
from ..flow import Site

RULE = "bad-value"

NUMERIC_DTYPE_PREFIXES = ("int", "uint", "float", "bool", "Int", "UInt", "Float", "complex")


def _list_lookup(ctx: CellContext, site: Site, call: ast.Call) -> Finding | None:
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr in ("remove", "index")) or len(call.args) != 1:
        return None
    if call.keywords or not isinstance(call.args[0], ast.Constant):
        return None
    lst = ctx.value_of(func.value, site)
    value = call.args[0].value
    if lst is None or lst.type != "list" or lst.items is None or value in lst.items:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int, float)) or site.caught(("ValueError",)):
        return None
    return Finding(
        rule=RULE,
        message=f"ValueError: list.{func.attr}(x): {value!r} is not in {lst.expr} (line {line_of(call)}).",
        evidence=[f"{lst.expr} = {lst.items}"],
        line=line_of(call),
    )


def _stratify(ctx: CellContext, site: Site, call: ast.Call) -> Finding | None:
    path = ctx.class_path(call.func, site) if isinstance(call.func, (ast.Name, ast.Attribute)) else None
    if path is None or not path.startswith("sklearn.") or not path.endswith(".train_test_split"):
        return None
    stratify = kwarg(call, "stratify")
    y = ctx.value_of(stratify, site) if stratify is not None else None
    if y is None or not y.counts or site.caught(("ValueError",)):
        return None
    single = [value for value, count in y.counts if count == 1]
    if not single:
        return None
    return Finding(
        rule=RULE,
        message=(
            f"ValueError: the least populated class in {y.expr} ({single[0]!r}) has only 1 member, too few "
            f"for a stratified split (line {line_of(call)})."
        ),
        evidence=[f"{y.expr}.value_counts() includes {single[0]!r}: 1"],
        line=line_of(call),
    )


def _inplace_float(ctx: CellContext, site: Site, node: ast.AugAssign) -> Finding | None:
    if not isinstance(node.target, ast.Name) or site.caught(("TypeError",)):
        return None
    arr = ctx.value_of(node.target, site)
    if arr is None or not arr.is_ndarray or not arr.dtype or not arr.dtype.startswith(("int", "uint")):
        return None
    value = node.value
    float_operand = isinstance(value, ast.Constant) and isinstance(value.value, float)
    if not (
        isinstance(node.op, ast.Div) or (float_operand and isinstance(node.op, (ast.Mult, ast.Add, ast.Sub)))
    ):
        return None
    return Finding(
        rule=RULE,
        message=(
            f"UFuncTypeError: {arr.expr} is a {arr.dtype} array; the in-place "
            f"{type(node.op).__name__.lower()} produces floats that cannot be stored back into it "
            f"(line {line_of(node)})."
        ),
        evidence=[f"{arr.expr}.dtype = {arr.dtype}"],
        line=line_of(node),
    )


def _accessor(ctx: CellContext, site: Site, node: ast.Attribute) -> Finding | None:
    """`s.str` on numbers, `s.dt` on numbers or on text (strings are not parsed into dates)."""
    if node.attr not in ("str", "dt") or not isinstance(node.ctx, ast.Load):
        return None
    series = ctx.value_of(node.value, site)
    if series is None or not series.is_("pandas", "Series") or not series.dtype:
        return None
    if site.caught(("AttributeError",)):
        return None
    wanted = "string" if node.attr == "str" else "datetimelike"
    if series.dtype.startswith(NUMERIC_DTYPE_PREFIXES):
        evidence = [f"{series.expr}.dtype = {series.dtype}"]
    elif node.attr == "dt" and series.dtype in ("str", "string", "object"):
        text = [
            v for v in (series.examples or []) + (series.non_numeric_examples or []) if isinstance(v, str)
        ]
        if not text:
            return None
        evidence = [
            f"{series.expr}.dtype = {series.dtype}",
            f"{series.expr} holds strings such as {text[0]!r}",
        ]
    else:
        return None
    return Finding(
        rule=RULE,
        message=(
            f"AttributeError: Can only use .{node.attr} accessor with {wanted} values: {series.expr} is "
            f"{series.dtype} (line {line_of(node)})."
        ),
        evidence=[*evidence, *([series.derived] if series.derived else [])],
        line=line_of(node),
    )


# Estimators with a size parameter that the number of samples (or features) bounds, and when.
SIZE_PARAMETERS = {
    "PCA": ("n_components", 0, "fit"),
    "KMeans": ("n_clusters", 0, "fit"),
    "MiniBatchKMeans": ("n_clusters", 0, "fit"),
    "KNeighborsClassifier": ("n_neighbors", 0, "predict"),
    "KNeighborsRegressor": ("n_neighbors", 0, "predict"),
}


def _size_parameter(ctx: CellContext, site: Site, call: ast.Call) -> Finding | None:
    """`PCA(n_components=10).fit(X)` with X of 5 samples or features, `KMeans(n_clusters=8).fit(X)` on
    fewer samples, `KNeighborsClassifier(n_neighbors=7)` fitted on fewer than 7 samples then asked to
    predict: ValueError from each estimator's own validation."""
    func = call.func
    if not isinstance(func, ast.Attribute) or has_star_args(call):
        return None
    receiver = func.value
    ctor: ast.Call | None = None
    fit_call: ast.Call | None = None
    if isinstance(receiver, ast.Call):
        ctor = receiver
    elif isinstance(receiver, ast.Name):
        ctor = site.made_by(receiver.id)
        fitted = site.fitted_here(receiver.id)
        if ctor is None and fitted is not None:
            ctor, fit_call = fitted
    if ctor is None or not isinstance(ctor.func, (ast.Name, ast.Attribute)):
        return None
    path = ctx.class_path(ctor.func, site)
    cls = path.rsplit(".", 1)[-1] if path is not None else ""
    if path is None or not path.startswith("sklearn.") or cls not in SIZE_PARAMETERS:
        return None
    param, position, when = SIZE_PARAMETERS[cls]
    value_node = kwarg(ctor, param) or (ctor.args[position] if len(ctor.args) > position else None)
    if value_node is None:
        return None
    value = ctx.scalar(value_node, site)
    if type(value) is not int:
        return None
    if when == "fit":
        if func.attr not in ("fit", "fit_transform", "fit_predict") or fit_call is not None:
            return None
        x = ctx.value_of(argument(call, 0, "X"), site)
    else:
        if func.attr not in ("predict", "predict_proba", "kneighbors", "score") or fit_call is None:
            return None
        fit_site = next((s for s in ctx.sites if s.node is fit_call), None)
        x_fit = fit_call.args[0] if fit_call.args else kwarg(fit_call, "X")
        x = ctx.value_of(x_fit, fit_site) if fit_site is not None and x_fit is not None else None
    if x is None or x.shape is None or len(x.shape) != 2 or not all(isinstance(d, int) for d in x.shape):
        return None
    n_samples, n_features = x.shape
    assert isinstance(n_samples, int) and isinstance(n_features, int)
    limit = min(n_samples, n_features) if param == "n_components" and cls == "PCA" else n_samples
    broken = value > n_samples if param == "n_neighbors" else value > limit
    if not broken or site.caught(("ValueError",)):
        return None
    return Finding(
        rule=RULE,
        message=(
            f"ValueError: {cls}({param}={value}) cannot be used on {x.expr} of shape {tuple(x.shape)}: "
            f"{param} must be at most {limit} (line {line_of(call)})."
        ),
        evidence=[
            f"{x.expr}.shape = {tuple(x.shape)}",
            f"{param} = {value}",
            *([x.derived] if x.derived else []),
        ],
        line=line_of(call),
    )


def _concatenate_axis(ctx: CellContext, site: Site, call: ast.Call) -> Finding | None:
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr in ("concatenate", "stack")) or has_star_args(call):
        return None
    path = ctx.class_path(func, site)
    if path is None or path.split(".")[0] != "numpy" or len(call.args) < 2:
        return None
    axis = ctx.value_of(call.args[1], site)
    # Only a 0-d integer array converts to an axis; any array with a dimension raises TypeError
    # ("only integer scalar arrays can be converted to a scalar index").
    if axis is None or not axis.is_ndarray or axis.shape is None or len(axis.shape) == 0:
        return None
    if site.caught(("TypeError",)):
        return None
    return Finding(
        rule=RULE,
        message=(
            f"TypeError: np.{func.attr} takes the arrays as one sequence; its second argument is the axis, "
            f"and {axis.expr} (an array) cannot be one (line {line_of(call)})."
        ),
        evidence=[f"{axis.expr}.shape = {tuple(axis.shape)}"],
        line=line_of(call),
    )


def _seasonal_decompose(ctx: CellContext, site: Site, call: ast.Call) -> Finding | None:
    """statsmodels' `seasonal_decompose(x, model=...)`: it refuses non-finite values ("This function does
    not handle missing values"), then, for model='multiplicative', any value <= 0 ("Multiplicative
    seasonality is not appropriate for zero and negative values"). A NaN count or a minimum seen (on a
    sample too: an actual value) proves either."""
    if not isinstance(call.func, (ast.Name, ast.Attribute)) or has_star_args(call) or not call.args:
        return None
    path = ctx.class_path(call.func, site)
    if path is None or path.split(".")[0] != "statsmodels" or not path.endswith(".seasonal_decompose"):
        return None
    if site.caught(("ValueError",)):
        return None
    x = ctx.value_of(call.args[0], site)
    if x is None or not (x.is_series or x.is_ndarray) or (x.shape is not None and len(x.shape) != 1):
        return None
    model_node = argument(call, 1, "model")
    model = ctx.scalar(model_node, site) if model_node is not None else "additive"
    if (x.nan or 0) > 0 or x.has_nan is True:
        detail, why = f"{x.expr} has missing values", "This function does not handle missing values"
    elif model in ("multiplicative", "mul") and isinstance(x.min, (int, float)) and x.min <= 0:
        detail = f"{x.expr} holds {x.min:g}"
        why = "Multiplicative seasonality is not appropriate for zero and negative values"
    else:
        return None
    return Finding(
        rule=RULE,
        message=f"ValueError: {why}: {detail} (seasonal_decompose, line {line_of(call)}).",
        evidence=[*(f for f in x.facts if ".nan" in f or ".min" in f), detail],
        line=line_of(call),
    )


def check(ctx: CellContext) -> Iterator[Finding]:
    augmented = {id(n.value): n for n in ast.walk(ctx.tree) if isinstance(n, ast.AugAssign)}
    for site in ctx.sites:
        if not site.certain:
            continue
        node = site.node
        finding: Finding | None = None
        if isinstance(node, ast.Call):
            finding = (
                _list_lookup(ctx, site, node)
                or _stratify(ctx, site, node)
                or _concatenate_axis(ctx, site, node)
                or _size_parameter(ctx, site, node)
                or _seasonal_decompose(ctx, site, node)
            )
        elif isinstance(node, ast.Attribute):
            finding = _accessor(ctx, site, node)
        if finding is None and id(node) in augmented:
            finding = _inplace_float(ctx, site, augmented[id(node)])
        if finding is not None:
            yield finding
