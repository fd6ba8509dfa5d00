"""ValueError: targets of a kind the classifier or the metric cannot take.

scikit-learn's `type_of_target` decides, from the values alone:
- a classifier's `fit(X, y)` with y holding non-integral floats ("continuous"):
  `check_classification_targets` raises "Unknown label type: continuous";
- a classification metric (`accuracy_score`, `f1_score`, `confusion_matrix`, ...) given non-integral
  floats (probabilities, regression outputs): "Classification metrics can't handle a mix of ... and
  continuous targets";
- `f1_score`/`precision_score`/`recall_score`/`fbeta_score`/`jaccard_score` with the default
  `average='binary'` on targets with three or more classes ("Target is multiclass but
  average='binary'"), or on two classes of which none is the default `pos_label=1`.

Evidence: the target's dtype and the values the probe saw (min/max or value counts with a fractional
part prove non-integral floats; a unique count of 3 or more, even on a sample, proves multiclass;
complete value counts give the two labels).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ...models import Finding
from ..context import CellContext, argument, has_star_args, kwarg, line_of
from ..flow import Site
from ..view import ObjInfo, type_class

RULE = "label-type"

CLASSIFIERS = frozenset(
    {"LogisticRegression", "LogisticRegressionCV", "SVC", "LinearSVC", "NuSVC", "GaussianNB", "MultinomialNB",
     "BernoulliNB", "ComplementNB", "CategoricalNB", "LinearDiscriminantAnalysis",
     "QuadraticDiscriminantAnalysis", "Perceptron"}
)  # fmt: skip
CLASSIFICATION_METRICS = frozenset(
    {"accuracy_score", "balanced_accuracy_score", "f1_score", "fbeta_score", "precision_score",
     "recall_score", "confusion_matrix", "classification_report", "jaccard_score", "matthews_corrcoef",
     "cohen_kappa_score",
     "precision_recall_fscore_support", "hamming_loss", "zero_one_loss"}
)  # fmt: skip
# Classifiers whose fit refuses a target with one class (liblinear/lbfgs solvers: "This solver needs
# samples of at least 2 classes"; libsvm and SGD: "The number of classes has to be greater than one";
# GradientBoosting: "y contains 1 class"). Trees, forests, kNN and naive Bayes fit one class fine.
ONE_CLASS_REFUSED = {
    "LogisticRegression": "This solver needs samples of at least 2 classes in the data",
    "LogisticRegressionCV": "This solver needs samples of at least 2 classes in the data",
    "LinearSVC": "This solver needs samples of at least 2 classes in the data",
    "SVC": "The number of classes has to be greater than one",
    "NuSVC": "The number of classes has to be greater than one",
    "SGDClassifier": "The number of classes has to be greater than one",
    "Perceptron": "The number of classes has to be greater than one",
    "PassiveAggressiveClassifier": "The number of classes has to be greater than one",
    "QuadraticDiscriminantAnalysis": "The number of classes has to be greater than one",
    "GradientBoostingClassifier": "y contains 1 class, while a minimum of 2 classes are required",
}
AVERAGED = frozenset({"f1_score", "fbeta_score", "precision_score", "recall_score", "jaccard_score"})


def is_classifier(type_name: str, steps: list[str] | None = None) -> bool:
    cls = type_class(type_name)
    if cls == "Pipeline" and steps:
        cls = steps[-1]
    return cls in CLASSIFIERS or cls.endswith("Classifier")


def _fraction(value: object) -> bool:
    return (
        isinstance(value, float)
        and value == value
        and value not in (float("inf"), float("-inf"))
        and not value.is_integer()
    )


def continuous(y: ObjInfo | None) -> float | None:
    """A non-integral value y certainly holds (so type_of_target says 'continuous'), else None."""
    if y is None or not y.dtype or not y.dtype.startswith("float"):
        return None
    if not (y.is_series or y.is_ndarray or y.is_tensor):
        return None
    if y.shape is not None and len(y.shape) > 2:
        return None
    for value in (y.min, y.max, *(v for v, _ in y.counts or []), *(y.examples or [])):
        if isinstance(value, float) and _fraction(value):
            return value
    return None


def _estimator(ctx: CellContext, node: ast.expr, site: Site) -> ObjInfo | None:
    info = ctx.value_of(node, site)
    if info is not None:
        return info
    made = ctx.made_here(node, site)
    return made[0] if made is not None else None


def _fit(ctx: CellContext, site: Site, call: ast.Call) -> Finding | None:
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr not in ("fit", "partial_fit", "fit_predict"):
        return None
    est = _estimator(ctx, func.value, site)
    if est is None or not est.type.startswith("sklearn.") or not is_classifier(est.type, est.steps):
        return None
    y_node = argument(call, 1, "y")
    y = ctx.value_of(y_node, site) if y_node is not None else None
    value = continuous(y)
    if y is not None and value is None and func.attr == "fit":
        return _one_class(est, y, call)
    if y is None or value is None:
        return None
    return Finding(
        rule=RULE,
        message=(
            f"ValueError: Unknown label type: continuous: {type_class(est.type)} is a classifier and "
            f"{y.expr} "
            f"holds non-integral values such as {value} (a regression target; line {line_of(call)})."
        ),
        evidence=[f"{y.expr}.dtype = {y.dtype}", f"{y.expr} holds {value}"],
        line=line_of(call),
    )


def _one_class(est: ObjInfo, y: ObjInfo, call: ast.Call) -> Finding | None:
    """A classifier that needs two classes, fitted on a target whose complete value counts hold one."""
    cls = type_class(est.type)
    if cls == "Pipeline" and est.steps:
        cls = est.steps[-1]
    if cls not in ONE_CLASS_REFUSED or y.counts is None or y.sampled or y.has_nan or y.nan:
        return None
    if not (y.is_series or y.is_ndarray) or (y.shape is not None and len(y.shape) != 1):
        return None
    rows = y.rows()
    if len(y.counts) != 1 or rows is None or y.counts[0][1] != rows or rows == 0:
        return None  # the counts must cover every row: one value seen n times in n rows
    label = y.counts[0][0]
    return Finding(
        rule=RULE,
        message=(
            f"ValueError: {ONE_CLASS_REFUSED[cls]}: every one of the {rows} values of {y.expr} is {label!r} "
            f"({cls}.fit, line {line_of(call)})."
        ),
        evidence=[f"{y.expr} value counts: {y.counts}", f"len({y.expr}) = {rows}"],
        line=line_of(call),
    )


def _unseen_labels(ctx: CellContext, site: Site, call: ast.Call) -> Finding | None:
    """`enc.transform(s)` of a fitted LabelEncoder: `_encode` raises "y contains previously unseen
    labels" for any value outside `classes_`. The classes must be complete (every one shown); a value
    of s shown (on a sample too) that is not among them proves it."""
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr != "transform" or len(call.args) != 1:
        return None
    enc = ctx.value_of(func.value, site)
    if enc is None or type_class(enc.type) != "LabelEncoder" or not enc.type.startswith("sklearn."):
        return None
    classes = enc.raw.get("classes_")
    if not isinstance(classes, list) or not classes or "n_classes" in enc.raw or enc.fitted is not True:
        return None
    if not all(isinstance(c, str) and len(c) < 60 for c in classes):
        return None  # numbers may be shown rounded; long labels cut: only exact text is compared
    y = ctx.value_of(call.args[0], site)
    if y is None or not (y.is_series or y.is_ndarray) or y.dtype not in ("object", "str", "string", None):
        return None  # (None: the array of a text column, whose numpy dtype is not shown)
    unseen = [v for v in y.shown_values() if isinstance(v, str) and len(v) < 60 and v not in classes]
    if not unseen:
        return None
    return Finding(
        rule="bad-value",
        message=(
            f"ValueError: y contains previously unseen labels: {unseen[0]!r} is not among the classes "
            f"{enc.expr} was fitted on (line {line_of(call)})."
        ),
        evidence=[f"{enc.expr}.classes_ = {classes}", f"{y.expr} values include {unseen[:3]}"],
        line=line_of(call),
    )


def _metric(ctx: CellContext, site: Site, call: ast.Call) -> Finding | None:
    if not isinstance(call.func, (ast.Name, ast.Attribute)) or len(call.args) < 2:
        return None
    path = ctx.class_path(call.func, site)
    if (
        path is None
        or not path.startswith("sklearn.")
        or path.rsplit(".", 1)[-1] not in CLASSIFICATION_METRICS
    ):
        return None
    name = path.rsplit(".", 1)[-1]
    y_true, y_pred = (ctx.value_of(a, site) for a in call.args[:2])
    for y in (y_true, y_pred):
        value = continuous(y)
        if y is not None and value is not None:
            return Finding(
                rule=RULE,
                message=(
                    f"ValueError: Classification metrics can't handle continuous targets: {y.expr} holds "
                    f"non-integral values such as {value} ({name}, line {line_of(call)})."
                ),
                evidence=[f"{y.expr}.dtype = {y.dtype}", f"{y.expr} holds {value}"],
                line=line_of(call),
            )
    if name not in AVERAGED or y_true is None:
        return None
    average = kwarg(call, "average")
    if average is not None and not (isinstance(average, ast.Constant) and average.value == "binary"):
        return None
    if len(call.args) > 2 or kwarg(call, "labels") is not None:
        return None
    if y_true.unique is not None and y_true.unique >= 3 and (y_true.is_series or y_true.is_ndarray):
        return Finding(
            rule=RULE,
            message=(
                f"ValueError: Target is multiclass but average='binary': {y_true.expr} has {y_true.unique} "
                f"classes; pass average='macro', 'micro' or 'weighted' ({name}, line {line_of(call)})."
            ),
            evidence=[f"{y_true.expr} has {y_true.unique} distinct values"],
            line=line_of(call),
        )
    labels = _all_labels(y_true)
    if kwarg(call, "pos_label") is None and labels is not None and len(labels) == 2 and 1 not in labels:
        return Finding(
            rule=RULE,
            message=(
                f"ValueError: pos_label=1 is not a valid label: {y_true.expr} has the labels {labels}; pass "
                f"pos_label= one of them ({name}, line {line_of(call)})."
            ),
            evidence=[f"{y_true.expr} value counts: {y_true.counts}"],
            line=line_of(call),
        )
    return None


def _all_labels(y: ObjInfo) -> list[object] | None:
    """Every distinct value of y, when its value counts are complete (few values, no sample)."""
    if y.counts is None or y.unique is None or y.sampled or y.has_nan:
        return None
    if not (y.is_series or y.is_ndarray) or len(y.counts) != y.unique or y.unique > 8:
        return None
    labels = [value for value, _ in y.counts]
    if any(isinstance(v, float) for v in labels):
        return None
    return labels


def check(ctx: CellContext) -> Iterator[Finding]:
    for site in ctx.certain(ast.Call):
        call = site.node
        assert isinstance(call, ast.Call)
        if has_star_args(call) or site.caught(("ValueError",)):
            continue
        finding = _fit(ctx, site, call) or _metric(ctx, site, call) or _unseen_labels(ctx, site, call)
        if finding is not None:
            yield finding
