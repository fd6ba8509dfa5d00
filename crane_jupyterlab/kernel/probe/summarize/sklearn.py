"""scikit-learn estimators and pipelines: fitted state, input width, feature names, classes."""

from __future__ import annotations

from typing import Any

from ..facts import MAX_ITEMS, SAFE_SCALARS, _add, _Ctx
from ..safe import _class_name, _inst_dict, _is, _lookup
from ..signatures import _signature_of
from .core import _summarizer
from .numpy import _num
from .pandas import _label


@_summarizer(lambda o: _is(o, "sklearn", "BaseEstimator"))
def _sum_estimator(est: Any, e: dict[str, Any], ctx: _Ctx, hints: dict[str, Any]) -> None:
    d = first = last = _inst_dict(est)
    _add(e, "R", "class", _class_name(type(est)))
    steps = d.get("steps")
    if type(steps) is list and steps:
        # a Pipeline is fitted when its final step is; it takes its input width from the first step
        real = [
            s
            for _, s in (p for p in steps if type(p) is tuple and len(p) == 2)
            if s is not None and not (type(s) is str and s == "passthrough")
        ]
        first, last = (_inst_dict(real[0]), _inst_dict(real[-1])) if real else (d, d)
    fitted = any(type(k) is str and k.endswith("_") and not k.startswith("_") for k in last)
    _add(e, "V", "fitted", fitted)
    if type(first.get("n_features_in_")) is int:
        _add(e, "S", "n_features_in_", first["n_features_in_"])
    d = last
    names = _plain_values(first.get("feature_names_in_"))
    if names is not None:
        _add(e, "R", "feature_names_in_", [str(x) for x in names[:MAX_ITEMS]])
    classes = d.get("classes_")
    values = _plain_values(classes)
    if values is not None:
        _add(e, "V", "classes_", [_label(_num(c), ctx) for c in values[:MAX_ITEMS]])
        if len(values) > MAX_ITEMS:
            _add(e, "S", "n_classes", len(values))
        if classes is not None and _is(classes, "numpy", "ndarray"):
            _add(e, "R", "classes_dtype", str(classes.dtype))
    if type(d.get("n_outputs_")) is int:
        _add(e, "S", "n_outputs_", d["n_outputs_"])
    coef = d.get("coef_")
    if coef is not None and _is(coef, "numpy", "ndarray"):
        _add(e, "S", "coef_shape", list(coef.shape))  # 2-D for a regressor fitted on several targets
    role = _role(est if type(steps) is not list else None)
    if role:
        _add(e, "R", "estimator_type", role)
    if type(steps) is list:
        _add(e, "R", "steps", [f"{n}={_class_name(type(s))}" for n, s in steps[:10] if type(n) is str])
    used = _transformer_columns(_inst_dict(est).get("transformers"))
    if used:
        _add(e, "S", "columns_used", used)  # a ColumnTransformer's columns must exist in what it is given
    params, left = _non_default_params(est, _inst_dict(est), ctx)
    _add(e, "R", "params", params)
    if left:
        _add(e, "R", "params_left_out", left)


_ROLES = (("classifier", "ClassifierMixin"), ("regressor", "RegressorMixin"), ("clusterer", "ClusterMixin"),
          ("outlier_detector", "OutlierMixin"), ("transformer", "TransformerMixin"))  # fmt: skip


def _role(est: Any) -> str | None:
    """What the estimator is, from the mixin in its class's MRO (the order sklearn's own tags use)."""
    for role, mixin in _ROLES if est is not None else ():
        if _is(est, "sklearn", mixin):
            return role
    return None


def _plain_values(values: Any) -> list[Any] | None:
    """The elements of a list or 1-D array of plain scalars (numpy scalars become Python ones)."""
    if _is(values, "numpy", "ndarray"):
        if values.ndim != 1 or values.dtype.kind not in "biufUSO" or values.shape[0] > 100_000:
            return None
        head = [_num(v) for v in values[:200].tolist()]
        rest = values.shape[0] - len(head)
    elif type(values) is list:
        head, rest = values[:200], len(values) - 200
    else:
        return None
    if not all(type(v) in SAFE_SCALARS for v in head):
        return None  # (object arrays may hold anything; only plain values are shown)
    return head + [None] * max(0, rest)


def _transformer_columns(transformers: Any) -> list[str]:
    out: list[str] = []
    if not isinstance(transformers, list):
        return out
    for t in transformers[:30]:
        cols = t[2] if type(t) is tuple and len(t) == 3 else None
        for c in [cols] if type(cols) is str else cols if type(cols) is list else []:
            if type(c) is str and c not in out and len(out) < 40:
                out.append(c)
    return out


def _non_default_params(est: Any, d: dict[str, Any], ctx: _Ctx) -> tuple[dict[str, Any], list[str]]:
    """The non-default constructor params that are plain values (6 at most), and the names of the
    others that differ from their defaults (not plain values, or past the 6)."""
    out: dict[str, Any] = {}
    left: list[str] = []
    sig = _signature_of(_lookup(type(est), "__init__")[1])
    if sig is None:
        return out, left
    for name, p in sig.parameters.items():
        if name == "self" or name not in d:
            continue
        v = d[name]
        # (a default is compared only when it is a plain value: a notebook object's __eq__ is not run)
        default = p.default
        if type(v) in SAFE_SCALARS and (type(default) not in SAFE_SCALARS or v != default):
            if len(out) < 6:
                out[name] = v if not isinstance(v, str) else v[: ctx.max_chars]
            else:
                left.append(name)
        elif type(v) not in SAFE_SCALARS and v is not default:
            left.append(name)  # a tuple, a dict, an estimator: not shown, and not the default
    return out, left[:10]
