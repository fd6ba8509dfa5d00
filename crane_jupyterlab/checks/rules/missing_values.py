"""ValueError / MissingDataError: missing values handed to a model that refuses them.

- scikit-learn estimators of the families that never accept NaN (linear models, SVMs, neural networks,
  naive Bayes, discriminant analysis): `fit`, `predict`, `score`, ... with an X that contains NaN raise
  "Input X contains NaN". Trees, ensembles, neighbors (nan_euclidean), imputers, scalers and pipelines
  may accept NaN and are left alone.
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
from ..context import CellContext, has_star_args, kwarg, line_of
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
    x_node = call.args[0] if call.args else kwarg(call, "X")
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
    exog_node = call.args[1] if len(call.args) > 1 else kwarg(call, "exog")
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
        finding = _sklearn(ctx, site, call) or _statsmodels(ctx, site, call)
        if finding is not None:
            yield finding
