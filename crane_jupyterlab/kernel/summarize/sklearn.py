"""scikit-learn estimators and pipelines: fitted state, input width, feature names, classes."""

from __future__ import annotations

import inspect
from typing import Any

from ..safe import MAX_ITEMS, SAFE_SCALARS, _add, _Ctx, _inst_dict, _is
from .core import _summarizer
from .numpy import _num
from .pandas import _label


@_summarizer(lambda o: _is(o, "sklearn", "BaseEstimator"))
def _sum_estimator(est: Any, e: dict[str, Any], ctx: _Ctx, hints: dict[str, Any]) -> None:
    d = first = last = _inst_dict(est)
    _add(e, "R", "class", type(est).__name__)
    steps = d.get("steps")
    if isinstance(steps, list) and steps:
        # a Pipeline is fitted when its final step is; it takes its input width from the first step
        real = [
            s
            for _, s in (p for p in steps if isinstance(p, tuple) and len(p) == 2)
            if s not in (None, "passthrough")
        ]
        first, last = (_inst_dict(real[0]), _inst_dict(real[-1])) if real else (d, d)
    fitted = any(k.endswith("_") and not k.startswith("_") for k in last)
    _add(e, "V", "fitted", fitted)
    if "n_features_in_" in first:
        _add(e, "S", "n_features_in_", first["n_features_in_"])
    d = last
    names = first.get("feature_names_in_")
    if names is not None:
        _add(e, "R", "feature_names_in_", [str(x) for x in list(names[:MAX_ITEMS])])
    classes = d.get("classes_")
    if classes is not None and hasattr(classes, "__len__"):
        _add(e, "V", "classes_", [_label(_num(c), ctx) for c in list(classes[:MAX_ITEMS])])
        if len(classes) > MAX_ITEMS:
            _add(e, "S", "n_classes", len(classes))
        if _is(classes, "numpy", "ndarray"):
            _add(e, "R", "classes_dtype", str(classes.dtype))
    if "n_outputs_" in d:
        _add(e, "S", "n_outputs_", d["n_outputs_"])
    if isinstance(steps, list):
        _add(e, "R", "steps", [f"{n}={type(s).__name__}" for n, s in steps[:10] if isinstance(n, str)])
    used = _transformer_columns(_inst_dict(est).get("transformers"))
    if used:
        _add(e, "S", "columns_used", used)  # a ColumnTransformer's columns must exist in what it is given
    _add(e, "R", "params", _non_default_params(est, _inst_dict(est), ctx))


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


def _non_default_params(est: Any, d: dict[str, Any], ctx: _Ctx) -> dict[str, Any]:
    out: dict[str, Any] = {}
    try:
        params = inspect.signature(type(est).__init__).parameters
    except Exception:
        return out
    for name, p in params.items():
        if name == "self" or name not in d or len(out) >= 6:
            continue
        v = d[name]
        if type(v) in SAFE_SCALARS and (p.default is inspect.Parameter.empty or v != p.default):
            out[name] = v if not isinstance(v, str) else v[: ctx.max_chars]
    return out
