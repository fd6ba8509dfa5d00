"""ValueError: inputs that must describe the same samples have different lengths.

Preconditions as the libraries check them:
- scikit-learn `check_consistent_length` (every supervised `fit(X, y)`, `score(X, y)`,
  `fit_transform(X, y)` of a classifier/regressor, `train_test_split(*arrays)`, and the metrics
  `accuracy_score(y_true, y_pred)`, `mean_squared_error`, `confusion_matrix`, ...): "Found input
  variables with inconsistent numbers of samples";
- scipy.stats `pearsonr(x, y)`, `spearmanr`, `kendalltau`, `ttest_rel`, `wilcoxon` (paired samples);
- statsmodels `OLS(endog, exog)` (and the other models on endog/exog): "endog and exog matrices are
  different sizes".

Evidence: the first-axis lengths of both inputs as the kernel holds them (or as the cell derives them:
`X = df.drop(columns=...)`, `train_test_split` parts), and the callee traced to its library (a kernel
object, an import of this cell, a module alias).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ...models import Finding
from ..context import CellContext, argument, has_star_args, kwarg, line_of
from ..flow import Site
from ..view import ObjInfo, type_class

RULE = "inconsistent-length"

# Estimators whose fit/score take (X, y) and check both (supervised), by class name.
SUPERVISED_SUFFIXES = ("Classifier", "Regressor", "Regression", "Classification")
SUPERVISED = frozenset(
    {"LogisticRegression", "LinearRegression", "Ridge", "RidgeCV", "Lasso", "LassoCV", "ElasticNet",
     "ElasticNetCV", "SVC", "SVR", "LinearSVC", "LinearSVR", "NuSVC", "NuSVR", "GaussianNB", "MultinomialNB",
     "BernoulliNB", "ComplementNB", "CategoricalNB", "LinearDiscriminantAnalysis",
     "QuadraticDiscriminantAnalysis", "Perceptron", "Lars", "LassoLars", "BayesianRidge", "ARDRegression",
     "OrthogonalMatchingPursuit", "LogisticRegressionCV", "KernelRidge", "GaussianProcessRegressor",
     "GaussianProcessClassifier", "PLSRegression"}
)  # fmt: skip
METRICS = frozenset(
    {"accuracy_score", "balanced_accuracy_score", "f1_score", "fbeta_score", "precision_score",
     "recall_score", "confusion_matrix", "classification_report", "mean_squared_error",
     "mean_absolute_error", "r2_score", "mean_absolute_percentage_error", "median_absolute_error",
     "explained_variance_score", "log_loss", "roc_auc_score", "matthews_corrcoef", "cohen_kappa_score",
     "jaccard_score", "hamming_loss", "zero_one_loss", "root_mean_squared_error", "max_error",
     "precision_recall_fscore_support", "mean_squared_log_error", "average_precision_score",
     "roc_curve", "precision_recall_curve", "hinge_loss", "brier_score_loss"}
)  # fmt: skip
PAIRED_TESTS = frozenset({"pearsonr", "spearmanr", "kendalltau", "ttest_rel", "wilcoxon", "pointbiserialr"})
STATSMODELS_MODELS = frozenset({"OLS", "WLS", "GLS", "Logit", "Probit", "GLM", "Poisson", "QuantReg", "RLM",
                                "MNLogit", "NegativeBinomial"})  # fmt: skip
SAMPLE_TYPES = ("list", "tuple")


def supervised(type_name: str, steps: list[str] | None = None) -> bool:
    cls = type_class(type_name)
    if cls == "Pipeline" and steps:
        cls = steps[-1]
    return cls in SUPERVISED or cls.endswith(SUPERVISED_SUFFIXES)


def samples(info: ObjInfo | None) -> int | None:
    """Number of samples (first-axis length) of array-like data."""
    if info is None or info.missing:
        return None
    if info.is_frame or info.is_series or info.is_ndarray or info.is_tensor:
        return info.rows() if info.shape is None or len(info.shape) >= 1 else None
    if info.type in SAMPLE_TYPES:
        return info.length
    return None


def _estimator(ctx: CellContext, node: ast.expr, site: Site) -> ObjInfo | None:
    info = ctx.value_of(node, site)
    if info is not None:
        return info
    made = ctx.made_here(node, site)
    if made is not None:
        return made[0]
    if isinstance(node, ast.Name):
        fitted = site.fitted_here(node.id)
        if fitted is not None:
            path = ctx.class_path(fitted[0].func, site)
            return ObjInfo(expr=node.id, type=path) if path is not None else None
    return None


def _pair(ctx: CellContext, site: Site, nodes: list[ast.expr]) -> tuple[ObjInfo, int, ObjInfo, int] | None:
    infos = [ctx.value_of(n, site) for n in nodes]
    known = [(i, n) for i, n in ((i, samples(i)) for i in infos) if i is not None and n is not None]
    for a, n_a in known:
        for b, n_b in known:
            if n_a != n_b:
                return a, n_a, b, n_b
    return None


def _finding(call: ast.Call, what: str, pair: tuple[ObjInfo, int, ObjInfo, int], message: str) -> Finding:
    a, n_a, b, n_b = pair
    evidence = [f"{a.expr} has {n_a} samples", f"{b.expr} has {n_b} samples"]
    evidence += [d for d in (a.derived, b.derived) if d]
    return Finding(
        rule=RULE,
        message=f"ValueError: {message}: [{n_a}, {n_b}] ({a.expr} and {b.expr} passed to {what}, line "
        f"{line_of(call)}).",
        evidence=evidence,
        line=line_of(call),
    )


SKLEARN_MESSAGE = "Found input variables with inconsistent numbers of samples"


def _fit(ctx: CellContext, site: Site, call: ast.Call) -> Finding | None:
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr not in (
        "fit",
        "score",
        "fit_transform",
        "fit_predict",
        "partial_fit",
    ):
        return None
    est = _estimator(ctx, func.value, site)
    if est is None or not est.type.startswith("sklearn.") or not supervised(est.type, est.steps):
        return None
    x_node = argument(call, 0, "X")
    y_node = argument(call, 1, "y")
    if x_node is None or y_node is None:
        return None
    pair = _pair(ctx, site, [x_node, y_node])
    return _finding(call, f"{ast.unparse(func)}", pair, SKLEARN_MESSAGE) if pair else None


def _library_call(ctx: CellContext, site: Site, call: ast.Call) -> Finding | None:
    func = call.func
    if not isinstance(func, (ast.Name, ast.Attribute)):
        return None
    path = ctx.class_path(func, site)
    if path is None:
        return None
    top, name = path.split(".", 1)[0], path.rsplit(".", 1)[-1]
    what = ast.unparse(func)
    if top == "sklearn" and name == "train_test_split":
        pair = _pair(ctx, site, list(call.args))
        return _finding(call, what, pair, SKLEARN_MESSAGE) if pair else None
    if top == "sklearn" and name in METRICS and len(call.args) >= 2:
        pair = _pair(ctx, site, list(call.args[:2]))
        return _finding(call, what, pair, SKLEARN_MESSAGE) if pair else None
    if top == "scipy" and name in PAIRED_TESTS and len(call.args) >= 2:
        pair = _pair(ctx, site, list(call.args[:2]))
        return _finding(call, what, pair, "paired samples must have the same length") if pair else None
    if top == "statsmodels" and name in STATSMODELS_MODELS and kwarg(call, "missing") is None:
        endog = argument(call, 0, "endog")
        exog = argument(call, 1, "exog")
        if endog is None or exog is None:
            return None
        pair = _pair(ctx, site, [endog, exog])
        return _finding(call, what, pair, "endog and exog matrices are different sizes") if pair else None
    return None


def check(ctx: CellContext) -> Iterator[Finding]:
    for site in ctx.certain(ast.Call):
        call = site.node
        assert isinstance(call, ast.Call)
        if has_star_args(call) or site.caught(("ValueError",)):
            continue
        finding = _fit(ctx, site, call) or _library_call(ctx, site, call)
        if finding is not None:
            yield finding
