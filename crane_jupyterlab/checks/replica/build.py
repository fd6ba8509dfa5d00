"""Values rebuilt from specs (`spec.py`): frames, series, arrays, tensors, estimators, plain values.

Runs in the replica's sandboxed variant process (`runner.py`). What the spec leaves open (`None`) is
filled differently per `variant`, so that a crash every variant shares was decided by the recorded facts.
"""

from __future__ import annotations

import math
from typing import Any


def _column(spec: dict[str, Any], rng: Any, variant: int) -> Any:
    """A 1-D numpy array of spec['n'] values (object arrays for text)."""
    import numpy as np

    n, dtype = int(spec["n"]), spec["dtype"]
    text = dtype in ("object", "str", "string")
    if spec.get("values"):
        pairs = spec["values"]
        total = sum(int(c) for _, c in pairs) or 1
        vals: list[Any] = []
        for v, c in pairs:
            vals += [v] * max(1, round(int(c) * n / total))
        vals = (vals * (n // max(len(vals), 1) + 1))[:n]
        arr = np.array(vals, dtype=object if text else None)
        if variant:
            rng.shuffle(arr)
    elif text:
        pool = list(spec.get("examples") or []) or ["a", "b"]
        if variant:
            pool = pool[::-1] + [f"v{variant}_{i}" for i in range(3)]
        arr = np.array([pool[i % len(pool)] for i in range(n)], dtype=object)
        if variant:
            rng.shuffle(arr)
    elif dtype == "bool":
        arr = rng.random(n) < (0.5 if not variant else 0.2)
    else:
        lo, hi = spec.get("min"), spec.get("max")
        integer = "int" in dtype
        if lo is None or hi is None:
            lo, hi = (0, 9) if not variant else (-5, 500)
        if integer:
            arr = rng.integers(math.floor(lo), math.floor(hi) + 1, n)
        else:
            arr = rng.uniform(lo, hi, n)
            if variant:  # whole-number floats behave apart (class labels, counts): the other variant
                arr = np.clip(np.round(arr), lo, hi)
        if spec.get("range_exact") and n >= 2:
            where = [0, n - 1] if not variant else list(rng.choice(n, 2, replace=False))
            arr[where[0]], arr[where[1]] = lo, hi
        arr = arr.astype(dtype)
    if n and dtype.startswith("float"):
        nan = spec.get("nan")
        if nan is None:
            nan = (1 if spec.get("some_nan") else 0) if not variant else max(1, n // 10)
        if nan:
            arr = arr.astype(dtype)
            arr[rng.choice(n, min(int(nan), n), replace=False)] = np.nan
    elif text and n:
        nan = spec.get("nan")
        if nan is None:
            nan = (1 if spec.get("some_nan") else 0) if not variant else max(1, n // 10)
        if nan:
            arr[rng.choice(n, min(int(nan), n), replace=False)] = None
    return arr


def _index(kind: Any, n: int, variant: int) -> Any:
    import pandas as pd

    if kind == "range" or not variant:
        return pd.RangeIndex(n)
    return pd.Index([7 + 3 * i for i in range(n)])


def _pandas_column(values: dict[str, Any], arr: Any) -> Any:
    import pandas as pd

    if values["dtype"] in ("str", "string"):
        return pd.array(list(arr), dtype=values["dtype"])
    return arr


def build(spec: dict[str, Any], rng: Any, variant: int) -> Any:
    kind = spec["kind"]
    if kind == "literal":
        return tuple(spec["value"]) if spec.get("type") == "tuple" else spec["value"]
    if kind == "module":
        import importlib

        return importlib.import_module(spec["module"])
    if kind == "attr":
        import importlib

        return getattr(importlib.import_module(spec["module"]), spec["name"])
    if kind == "ndarray":
        arr = _column(spec["values"], rng, variant)
        return arr.reshape(spec["shape"])
    if kind == "series":
        import pandas as pd

        values = spec["values"]
        arr = _column(values, rng, variant)
        return pd.Series(_pandas_column(values, arr), index=_index(spec.get("index"), len(arr), variant),
                         name=spec.get("name"))  # fmt: skip
    if kind == "frame":
        import pandas as pd

        data = {
            c["name"]: _pandas_column(c["values"], _column(c["values"], rng, variant))
            for c in spec["columns"]
        }
        frame = pd.DataFrame(data, index=_index(spec.get("index"), spec["rows"], variant))
        if list(frame.columns) != [c["name"] for c in spec["columns"]] or frame.shape[0] != spec["rows"]:
            raise ValueError("the frame did not come out as recorded")
        return frame
    if kind == "tensor":
        import torch

        dtype = getattr(torch, spec["dtype"].split(".", 1)[1])
        shape = spec["shape"]
        lo, hi = spec.get("min"), spec.get("max")
        if dtype.is_floating_point:
            if lo is None or hi is None:
                lo, hi = (0.0, 1.0) if not variant else (-50.0, 50.0)
            t = torch.empty(shape, dtype=dtype).uniform_(float(lo), float(hi))
            return t.requires_grad_(bool(spec["requires_grad"]))
        if dtype == torch.bool:
            return torch.rand(shape) < 0.5
        if lo is None or hi is None:
            lo, hi = (0, 9) if not variant else (0, 500)
        return torch.randint(int(lo), int(hi) + 1, shape, dtype=dtype)
    if kind == "estimator":
        return _estimator(spec, rng)
    raise ValueError(f"no replica for {kind}")


def _estimator(spec: dict[str, Any], rng: Any) -> Any:
    import importlib

    module, _, name = spec["path"].rpartition(".")
    cls = getattr(importlib.import_module(module), name)
    est = cls(**spec["params"])
    if not spec["fitted"]:
        return est
    from sklearn.base import is_classifier, is_regressor

    nf = int(spec["n_features"])
    classes = spec.get("classes")
    rows = max(60, 12 * len(classes or []))
    X: Any = rng.normal(size=(rows, nf))
    if spec.get("feature_names"):
        import pandas as pd

        X = pd.DataFrame(X, columns=spec["feature_names"])
    if is_classifier(est):
        if not classes:
            raise ValueError("a classifier whose classes were not recorded")
        import numpy as np

        y = np.array([classes[i % len(classes)] for i in range(rows)])
        est.fit(X, y)
    elif is_regressor(est):
        est.fit(X, rng.normal(size=rows))
    else:
        est.fit(X)
    if getattr(est, "n_features_in_", nf) != nf:
        raise ValueError("the fitted replica has another feature count")
    return est
