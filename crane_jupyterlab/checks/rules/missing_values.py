"""ValueError / MissingDataError: missing values handed to a model that refuses them.

- scikit-learn estimators of the families that never accept NaN (linear models, SVMs, neural networks,
  naive Bayes, discriminant analysis): `fit`, `predict`, `score`, ... with an X that contains NaN raise
  "Input X contains NaN". Trees, ensembles, neighbors (nan_euclidean), imputers, scalers and pipelines
  may accept NaN and are left alone.
- any supervised scikit-learn estimator's `fit(X, y)` with NaN in y: "Input y contains NaN";
- `scipy.optimize.curve_fit` with NaN in xdata/ydata (check_finite on by default): "array must not
  contain infs or NaNs";
- statsmodels models (`sm.OLS(y, X)`, Logit, GLM, ...) built with the default `missing='none'` raise
  MissingDataError when exog contains NaN.

Evidence: X's NaN count or NaN columns as the kernel holds X (a count > 0, even on a sample, proves it)
and the estimator's class — a kernel instance, or one this cell creates from a class it can trace back
to its library (an import in the cell, or the probe's module of the class).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ...models import Finding
from ..context import CellContext, argument, has_star_args, kwarg, line_of
from ..flow import Site
from ..view import ObjInfo, type_class

RULE = "missing-values"

NAN_REJECTING = ("sklearn.linear_model.", "sklearn.svm.", "sklearn.neural_network.", "sklearn.naive_bayes.",
                 "sklearn.discriminant_analysis.")  # fmt: skip
VALIDATING = frozenset({"fit", "predict", "predict_proba", "predict_log_proba", "decision_function", "score",
                        "fit_predict", "fit_transform", "transform", "partial_fit"})  # fmt: skip
STATSMODELS_MODELS = frozenset({"OLS", "WLS", "GLS", "GLSAR", "Logit", "Probit", "MNLogit", "Poisson",
                                "NegativeBinomial", "GLM", "QuantReg", "RLM"})  # fmt: skip


def _nan_evidence(x: ObjInfo) -> list[str]:
    facts = [f for f in x.facts if ".nan" in f or "NaN" in f]
    return facts[:2] or [f"{x.expr} contains NaN"]


def _estimator(ctx: CellContext, receiver: ast.expr, site: Site) -> ObjInfo | None:
    info = ctx.value_of(receiver, site)
    if info is not None:
        return info
    made = ctx.made_here(receiver, site)
    return made[0] if made is not None else None


def _sklearn(ctx: CellContext, site: Site, call: ast.Call) -> Finding | None:
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr not in VALIDATING or has_star_args(call):
        return None
    est = _estimator(ctx, func.value, site)
    if est is None or not est.type.startswith(NAN_REJECTING) or "RANSAC" in est.type:
        return None  # RANSAC passes NaN on to its inner estimator, which may accept it
    x_node = argument(call, 0, "X")
    x = ctx.value_of(x_node, site) if x_node is not None else None
    if x is None or x.has_nan is not True or not (x.is_frame or x.is_ndarray or x.is_("pandas", "Series")):
        return None
    return Finding(
        rule=RULE,
        message=(
            f"ValueError: Input X contains NaN: {type_class(est.type)} does not accept missing values and "
            f"{x.expr} has some ({func.attr}, line {line_of(call)})."
        ),
        evidence=[*_nan_evidence(x), f"{est.expr} is a {type_class(est.type)} ({est.type})"],
        line=line_of(call),
    )


# Supervised estimators validate y with `check_array(..., ensure_all_finite=True)` whatever they do with
# NaN in X: "Input y contains NaN". Unsupervised ones in the same modules ignore y entirely.
SUPERVISED_MODULES = (*NAN_REJECTING, "sklearn.tree.", "sklearn.ensemble.", "sklearn.neighbors.",
                      "sklearn.gaussian_process.", "sklearn.kernel_ridge.")  # fmt: skip
IGNORES_Y = frozenset({"NearestNeighbors", "KernelDensity", "LocalOutlierFactor", "IsolationForest",
                       "RandomTreesEmbedding", "OneClassSVM", "BernoulliRBM",
                       "NeighborhoodComponentsAnalysis", "KNeighborsTransformer",
                       "RadiusNeighborsTransformer"})  # fmt: skip


def has_nan(x: ObjInfo | None) -> bool:
    """The value certainly holds a missing value (a count > 0 seen, even on a sample)."""
    return x is not None and (x.has_nan is True or (x.nan or 0) > 0)


def _target(ctx: CellContext, site: Site, call: ast.Call) -> Finding | None:
    """`est.fit(X, y)` with NaN in y: every supervised estimator refuses it."""
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr != "fit" or has_star_args(call):
        return None
    est = _estimator(ctx, func.value, site)
    if est is None or not est.type.startswith(SUPERVISED_MODULES) or type_class(est.type) in IGNORES_Y:
        return None
    y_node = argument(call, 1, "y")
    y = ctx.value_of(y_node, site) if y_node is not None else None
    if y is None or not has_nan(y) or not (y.is_ndarray or y.is_series or y.is_frame):
        return None
    return Finding(
        rule=RULE,
        message=(
            f"ValueError: Input y contains NaN: {y.expr} has missing values and {type_class(est.type)} "
            f"needs a target for every row (fit, line {line_of(call)})."
        ),
        evidence=[*_nan_evidence(y), f"{est.expr} is a {type_class(est.type)} ({est.type})"],
        line=line_of(call),
    )


# scipy's finite checks (`_asarray_validated`/`np.asarray_chkfinite` when check_finite is on): curve_fit
# checks xdata and ydata unless nan_policy or check_finite=False say otherwise.
def _scipy(ctx: CellContext, site: Site, call: ast.Call) -> Finding | None:
    path = ctx.class_path(call.func, site) if isinstance(call.func, (ast.Name, ast.Attribute)) else None
    if path is None or path.split(".")[0] != "scipy" or path.rsplit(".", 1)[-1] != "curve_fit":
        return None
    if has_star_args(call) or any(kwarg(call, k) is not None for k in ("nan_policy", "check_finite")):
        return None
    for position, keyword in ((1, "xdata"), (2, "ydata")):
        node = call.args[position] if len(call.args) > position else kwarg(call, keyword)
        data = ctx.value_of(node, site) if node is not None else None
        if data is not None and has_nan(data) and (data.is_ndarray or data.is_series):
            return Finding(
                rule=RULE,
                message=(
                    f"ValueError: array must not contain infs or NaNs: {data.expr} ({keyword}) has missing "
                    f"values and curve_fit checks its data (pass nan_policy='omit'; line {line_of(call)})."
                ),
                evidence=_nan_evidence(data),
                line=line_of(call),
            )
    return None


def _histogram(ctx: CellContext, site: Site, call: ast.Call) -> Finding | None:
    """`np.histogram(a)` / `bins=<int or str>` without `range=`: numpy derives the range from a.min()
    and a.max(), which are NaN when a holds one ("autodetected range of [nan, nan] is not finite").
    Explicit bin edges or a range avoid it (plt.hist drops NaN itself and is not judged)."""
    path = ctx.class_path(call.func, site) if isinstance(call.func, (ast.Name, ast.Attribute)) else None
    if path is None or path.split(".")[0] != "numpy" or path.rsplit(".", 1)[-1] not in ("histogram",):
        return None
    if has_star_args(call) or not call.args or kwarg(call, "range") is not None or len(call.args) > 2:
        return None
    bins = kwarg(call, "bins") or (call.args[1] if len(call.args) > 1 else None)
    if bins is not None and not (isinstance(bins, ast.Constant) and isinstance(bins.value, (int, str))):
        return None
    a = ctx.value_of(call.args[0], site)
    if (
        a is None
        or not has_nan(a)
        or not (a.is_ndarray or a.is_series)
        or not (a.dtype or "").startswith("float")
    ):
        return None
    return Finding(
        rule=RULE,
        message=(
            f"ValueError: autodetected range of [nan, nan] is not finite: {a.expr} has missing values "
            f"(drop them, or pass range=; np.histogram, line {line_of(call)})."
        ),
        evidence=_nan_evidence(a),
        line=line_of(call),
    )


def _statsmodels(ctx: CellContext, site: Site, call: ast.Call) -> Finding | None:
    path = ctx.class_path(call.func, site) if isinstance(call.func, (ast.Name, ast.Attribute)) else None
    if (
        path is None
        or path.split(".")[0] != "statsmodels"
        or path.rsplit(".", 1)[-1] not in STATSMODELS_MODELS
    ):
        return None
    if has_star_args(call) or kwarg(call, "missing") is not None or kwarg(call, "hasconst") is not None:
        return None
    exog_node = argument(call, 1, "exog")
    exog = ctx.value_of(exog_node, site) if exog_node is not None else None
    if exog is None or exog.has_nan is not True or not (exog.is_frame or exog.is_ndarray):
        return None
    return Finding(
        rule=RULE,
        message=(
            f"MissingDataError: exog contains inf or nans: {exog.expr} has missing values and "
            f"{path.rsplit('.', 1)[-1]} is built with missing='none' (line {line_of(call)})."
        ),
        evidence=_nan_evidence(exog),
        line=line_of(call),
    )


def check(ctx: CellContext) -> Iterator[Finding]:
    for site in ctx.certain(ast.Call):
        call = site.node
        assert isinstance(call, ast.Call)
        if site.caught(("ValueError",)):
            continue
        finding = (
            _sklearn(ctx, site, call)
            or _target(ctx, site, call)
            or _statsmodels(ctx, site, call)
            or _scipy(ctx, site, call)
            or _histogram(ctx, site, call)
        )
        if finding is not None:
            yield finding
