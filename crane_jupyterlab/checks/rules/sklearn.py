"""scikit-learn: inference on an estimator that cannot accept it.

- `est.predict(X)` (or transform, predict_proba, score, ...) on an estimator that was never fitted
  (NotFittedError);
- X with a different number of features than `est.n_features_in_` (ValueError), or a DataFrame whose
  column names differ from `est.feature_names_in_` (ValueError).

Evidence: the estimator's fitted state and `n_features_in_`/`feature_names_in_` as the kernel holds
them, and X's shape/columns; both names must still hold the kernel's objects at the call. Silent for
estimators outside `sklearn.*`, for meta-estimators whose fitted state lives in their steps, for
transformers that need no fit, and for estimators that do not check the feature count.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ...models import Finding
from ..context import CellContext, argument, has_star_args, line_of
from ..flow import Site
from ..view import ObjInfo, type_class

RULE = "sklearn-input"

NEEDS_FIT = frozenset(
    {"predict", "predict_proba", "predict_log_proba", "decision_function", "transform", "score",
     "score_samples", "kneighbors"}
)  # fmt: skip
# Fitted state kept elsewhere (steps), or no fit needed at all: the `fitted` fact does not apply.
# (A vectorizer given a fixed vocabulary transforms without being fitted.)
NO_OWN_FIT_STATE = (
    "Pipeline", "FeatureUnion", "FunctionTransformer", "Normalizer", "Binarizer", "Hashing", "Vectorizer",
)  # fmt: skip
# Estimators that accept X with another number of columns than at fit time.
NO_FEATURE_CHECK = ("Dummy", "Vectorizer", "FunctionTransformer", "ColumnTransformer", "Pipeline", "Union",
                    "Hasher", "Isotonic")  # fmt: skip
# Classes that may wrap an already fitted estimator, or that hold no fitted state of their own.
META_OR_PREFIT = (
    *NO_OWN_FIT_STATE, "Frozen", "SearchCV", "Calibrated", "SelectFromModel", "Stacking", "Voting", "Bagging",
    "OneVs", "MultiOutput", "Chain", "TransformedTarget", "ColumnTransformer", "SequentialFeatureSelector",
    "RFE",
)  # fmt: skip
# NotFittedError derives from both.
NOT_FITTED_BASES = ("ValueError", "AttributeError")


def _x_arg(call: ast.Call) -> ast.expr | None:
    if has_star_args(call):
        return None
    return argument(call, 0, "X")


def _unfitted(est: ObjInfo, method: str, call: ast.Call, site: Site) -> Finding | None:
    cls = type_class(est.type)
    if est.fitted is not False or any(part in cls for part in NO_OWN_FIT_STATE):
        return None
    if site.caught(NOT_FITTED_BASES):
        return None
    return Finding(
        rule=RULE,
        message=(
            f"NotFittedError: this {cls} instance ({est.expr}) is not fitted yet; call fit before "
            f"{method}() (line {line_of(call)})."
        ),
        evidence=[f"{est.expr} is a {cls} that has not been fitted"],
        line=line_of(call),
    )


def _feature_mismatch(est: ObjInfo, x: ObjInfo, call: ast.Call, site: Site) -> Finding | None:
    cls = type_class(est.type)
    checked_by = cls
    if cls == "Pipeline" and est.steps:
        # A Pipeline hands X to its first step, which checks the width (n_features_in_ is that step's).
        checked_by = next((step for step in est.steps if step not in ("passthrough", "str", "NoneType")), cls)
    if any(part in checked_by for part in NO_FEATURE_CHECK) or site.caught(("ValueError",)):
        return None
    if not (x.is_frame or x.is_ndarray or x.type.startswith("scipy.sparse")):
        return None
    n = est.n_features_in
    if n is not None and x.shape is not None and len(x.shape) == 2 and x.shape[1] not in (n, None):
        return Finding(
            rule=RULE,
            message=(
                f"ValueError: X has {x.shape[1]} features, but {cls} is expecting {n} features as input "
                f"({x.expr} passed to {est.expr}, line {line_of(call)})."
            ),
            evidence=[
                *[f for f in est.facts if "fitted in this cell" in f],
                f"{est.expr}.n_features_in_ = {n}",
                f"{x.expr}.shape = {tuple(x.shape)}",
            ],
            line=line_of(call),
        )
    names = est.feature_names_in
    if (
        names is not None
        and x.is_frame
        and x.columns is not None
        and all(isinstance(c, str) for c in x.columns)
        and list(x.columns) != names
    ):
        unseen = [c for c in x.columns if c not in names][:5]
        gone = [c for c in names if c not in x.columns][:5]
        detail = (
            f"unseen at fit time: {unseen}; seen at fit time, now missing: {gone}"
            if unseen or gone
            else ("same names in another order")
        )
        return Finding(
            rule=RULE,
            message=(
                f"ValueError: the feature names of {x.expr} do not match those {est.expr} was fitted with "
                f"({detail}; line {line_of(call)})."
            ),
            evidence=[
                f"{est.expr}.feature_names_in_ = {names[:8]}{' ...' if len(names) > 8 else ''}",
                f"{x.expr}.columns = {x.columns[:8]}{' ...' if len(x.columns) > 8 else ''}",
            ],
            line=line_of(call),
        )
    return None


def _fresh(ctx: CellContext, node: ast.expr, site: Site) -> ObjInfo | None:
    """An estimator this cell constructs and has not touched since: certainly not fitted yet."""
    made = ctx.made_here(node, site)
    if made is None:
        return None
    info, call = made
    cls = type_class(info.type)
    if not info.type.startswith("sklearn.") or any(part in cls for part in META_OR_PREFIT):
        return None
    if any(kw.arg in (None, "prefit", "cv") for kw in call.keywords):
        return None  # prefit/cv='prefit' wrappers, or **kwargs we cannot see
    info.fitted = False
    return info


def _fitted_here(ctx: CellContext, node: ast.expr, site: Site) -> ObjInfo | None:
    """An estimator this cell constructs and fits: it expects X shaped like the X it was fitted on."""
    if not isinstance(node, ast.Name):
        return None
    made = site.fitted_here(node.id)
    if made is None:
        return None
    ctor, fit = made
    path = ctx.class_path(ctor.func, site) if isinstance(ctor.func, (ast.Name, ast.Attribute)) else None
    if path is None or not path.startswith("sklearn.") or any(p in type_class(path) for p in META_OR_PREFIT):
        return None
    fit_site = next((s for s in ctx.sites if s.node is fit), None)
    x_node = _x_arg(fit)
    if fit_site is None or x_node is None:
        return None
    x = ctx.value_of(x_node, fit_site)
    if x is None or x.shape is None or len(x.shape) != 2 or not isinstance(x.shape[1], int):
        return None
    if not (x.is_frame or x.is_ndarray):
        return None
    info = ObjInfo(expr=node.id, type=path, fitted=True, n_features_in=x.shape[1])
    if x.is_frame and x.columns is not None and all(isinstance(c, str) for c in x.columns):
        info.feature_names_in = [str(c) for c in x.columns]
    info.facts.append(f"{node.id} was fitted in this cell on {x.expr} {tuple(x.shape)}")
    return info


# Estimators that take 1-D input (text vectorizers: an iterable of documents; label encoders; isotonic
# regression; dummies, which look at no values) or pass it on unseen (pipelines, column transformers).
ONE_D_OK = ("Vectorizer", "Isotonic", "LabelEncoder", "LabelBinarizer", "MultiLabelBinarizer", "Hasher",
            "Pipeline", "FunctionTransformer", "Dummy", "ColumnTransformer", "Union", "SearchCV",
            "TransformedTarget")  # fmt: skip
TAKES_X = frozenset({"fit", "predict", "predict_proba", "predict_log_proba", "decision_function", "transform",
                     "fit_transform", "fit_predict", "score", "partial_fit", "score_samples"})  # fmt: skip


def _one_dimensional(ctx: CellContext, site: Site, call: ast.Call) -> Finding | None:
    """`model.fit(df['x'], y)`: check_array(ensure_2d=True) rejects 1-D X ("Expected 2D array, got 1D
    array instead")."""
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr not in TAKES_X or site.caught(("ValueError",)):
        return None
    est = ctx.value_of(func.value, site)
    if est is None:
        made = ctx.made_here(func.value, site)
        est = made[0] if made is not None else None
    if est is None and isinstance(func.value, ast.Name):
        fitted = site.fitted_here(func.value.id)
        path = ctx.class_path(fitted[0].func, site) if fitted is not None else None
        est = ObjInfo(expr=func.value.id, type=path) if path is not None else None
    if est is None or not est.type.startswith("sklearn.") or any(p in type_class(est.type) for p in ONE_D_OK):
        return None
    if type_class(est.type)[:1].islower():
        return None  # a function (make_pipeline, ...), not an estimator class
    x_node = _x_arg(call)
    x = ctx.value_of(x_node, site) if x_node is not None else None
    if x is None or x.missing:
        return None
    one_d = x.is_series or ((x.is_ndarray or x.is_tensor) and x.shape is not None and len(x.shape) == 1)
    if x.type in ("list", "tuple") and x.items is not None:
        one_d = all(isinstance(v, (int, float, str, bool)) for v in x.items)
    if not one_d:
        return None
    return Finding(
        rule=RULE,
        message=(
            f"ValueError: Expected 2D array, got 1D array instead: {x.expr} is one-dimensional; "
            f"{type_class(est.type)}.{func.attr} needs X of shape (n_samples, n_features) - use "
            f"{x.expr}.to_frame() or reshape(-1, 1) (line {line_of(call)})."
        ),
        evidence=[
            f"{x.expr} is a {x.type}" + (f" of shape {tuple(x.shape)}" if x.shape else ""),
            *([x.derived] if x.derived else []),
        ],
        line=line_of(call),
    )


def check(ctx: CellContext) -> Iterator[Finding]:
    for site in ctx.certain(ast.Call):
        call = site.node
        assert isinstance(call, ast.Call)
        finding: Finding | None = None
        est: ObjInfo | None = None
        if isinstance(call.func, ast.Attribute) and call.func.attr in NEEDS_FIT:
            est = ctx.value_of(call.func.value, site)
            if est is None:
                est = _fresh(ctx, call.func.value, site) or _fitted_here(ctx, call.func.value, site)
            if est is not None and est.is_sklearn:
                finding = _unfitted(est, call.func.attr, call, site)  # checked before the input is
        finding = finding or _one_dimensional(ctx, site, call)
        method = call.func.attr if isinstance(call.func, ast.Attribute) else ""
        if finding is None and est is not None and est.is_sklearn and method != "kneighbors":
            x_node = _x_arg(call)
            x = ctx.value_of(x_node, site) if x_node is not None else None
            if x is not None:
                finding = _feature_mismatch(est, x, call, site)
        if finding is not None:
            yield finding
