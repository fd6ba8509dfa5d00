"""Values rebuilt from specs (`spec.py`): frames, series, arrays, tensors, estimators, plain values.

Runs in the replica's sandboxed variant process (`runner.py`). What the spec leaves open (`None`) is
filled differently per `variant`, so that a crash every variant shares was decided by the recorded facts;
what the spec records is reproduced exactly (tests/checks/test_replica_fidelity.py holds every builder to
the facts the probe reads back from its replica).
"""

from __future__ import annotations

import math
from typing import Any

# A representative of each element type of an object column, where the examples hold none.
_SAMPLES: dict[str, Any] = {"str": "a", "int": 1, "float": 0.5, "bool": True}


def _missing(spec: dict[str, Any], rng: Any, variant: int) -> int:
    """How many of the values are missing: recorded, else one where some are proven (a tenth in variant 1)."""
    n, nan = int(spec["n"]), spec.get("nan")
    if nan is None:
        nan = (1 if spec.get("some_nan") else 0) if not variant else max(1, n // 10)
    return min(int(nan), n)


def _from_counts(pairs: list[list[Any]], m: int, rng: Any, variant: int) -> list[Any]:
    """`m` values holding each recorded value its recorded number of times (scaled when m differs)."""
    total = sum(int(c) for _, c in pairs) or 1
    vals: list[Any] = []
    for v, c in pairs:
        vals += [v] * max(1, round(int(c) * m / total))
    vals = (vals * (m // max(len(vals), 1) + 1))[:m]
    if variant:
        rng.shuffle(vals)
    return vals


def _numbers(spec: dict[str, Any], m: int, rng: Any, variant: int) -> Any:
    """`m` numbers in the recorded range (a numpy array of spec's numpy dtype, or int64/float64)."""
    import numpy as np

    dtype = _numpy_dtype(spec["dtype"])
    kind = np.dtype(dtype).kind
    lo, hi = spec.get("min"), spec.get("max")
    if lo is None or hi is None:
        lo, hi = (0, 1) if kind == "b" else (0, 9) if not variant else (-5, 500)
        if kind == "u":
            lo = 0
    lo, hi = (int(lo), int(hi)) if kind in "bu" else (lo, hi)
    if kind in "biu":
        arr = rng.integers(math.floor(lo), math.floor(hi) + 1, m)
    else:
        arr = rng.uniform(lo, hi, m)
        if variant:  # whole-number floats behave apart (class labels, counts): the other variant
            arr = np.clip(np.round(arr), lo, hi)
    if spec.get("range_exact") and m:
        where = [0, m - 1] if not variant else list(rng.choice(m, 2, replace=m < 2))
        arr[where[0]], arr[where[-1]] = lo, hi
    return arr.astype(dtype)


def _dates(spec: dict[str, Any], m: int, rng: Any, variant: int) -> Any:
    """`m` naive dates in the recorded range, of spec's datetime64 unit."""
    import numpy as np

    unit = spec["dtype"][len("datetime64[") : -1]
    lo, hi = spec.get("min"), spec.get("max")
    if lo is None or hi is None:
        lo, hi = ("2020-01-01", "2020-12-31") if not variant else ("1999-06-01", "2031-01-01")
    a, b = (int(np.datetime64(x, unit).astype(np.int64)) for x in (lo, hi))
    arr = rng.integers(a, b + 1, m)
    if spec.get("range_exact") and m:
        where = [0, m - 1] if not variant else list(rng.choice(m, 2, replace=m < 2))
        arr[where[0]], arr[where[-1]] = a, b
    return arr.astype(f"datetime64[{unit}]")


def _texts(spec: dict[str, Any], m: int, rng: Any, variant: int) -> list[Any]:
    """`m` values of a text or object column: its examples, and for an object column one value of each
    recorded element type first (the cycle then holds every type)."""
    examples = list(spec.get("examples") or [])
    first: list[Any] = []
    types = spec.get("types") or []
    if spec["family"] == "object":
        examples = [v for v in examples if type(v).__name__ in types]
        first = [next((v for v in examples if type(v).__name__ == t), _SAMPLES[t]) for t in types]
    seen = {(type(v), v) for v in first}
    rest = [v for v in dict.fromkeys(examples) if (type(v), v) not in seen] or ([] if first else ["a", "b"])
    if variant:
        numeric_text = spec.get("non_numeric") == 0  # every text is a number: so are the made-up ones
        words = [f"{7 + i}.5" if numeric_text else f"v{variant}_{i}" for i in range(3)]
        extra: dict[str, list[Any]] = {"str": words, "int": [7, 8], "float": [0.25, 2.5], "bool": [False]}
        rest = rest[::-1] + [x for t in types or ["str"] for x in extra.get(t, [])]
        if "element_types" in (spec.get("open") or []):
            first.append(0 if "str" in types else "v_other")  # the sample may not show every type
    pool = first + rest
    vals = [pool[i % len(pool)] for i in range(m)]
    if variant:
        rng.shuffle(vals)
    return vals


def _family(dtype: str) -> str:
    """A recipe's value family, where it does not say (spec.py always does)."""
    if dtype == "object":
        return "object"
    if dtype in ("str", "string", "category") or dtype.startswith("<U"):
        return "text"
    return "datetime" if dtype.startswith("datetime64") else "number"


def _numpy_dtype(dtype: str) -> str:
    """The numpy dtype that holds the values of a (possibly nullable pandas) dtype."""
    if dtype == "boolean":
        return "bool"
    return dtype.lower() if dtype[:1] in "IUF" else dtype


def _column(spec: dict[str, Any], rng: Any, variant: int) -> Any:
    """spec['n'] values: a numpy array, or a pandas array for pandas' own dtypes."""
    import numpy as np

    n, dtype = int(spec["n"]), spec["dtype"]
    family = spec.get("family") or _family(dtype)
    spec = {**spec, "family": family}
    missing = _missing(spec, rng, variant) if n else 0
    m = n - missing
    if spec.get("values"):
        body: Any = _from_counts(spec["values"], m, rng, variant)
        if family == "datetime":
            body = np.array(body, dtype=dtype)
        elif family in ("number", "nullable"):
            body = np.array(body).astype(_numpy_dtype(dtype))
    elif family in ("number", "nullable"):
        body = _numbers(spec, m, rng, variant)
    elif family == "datetime":
        body = _dates(spec, m, rng, variant)
    else:
        body = _texts(spec, m, rng, variant)
    gaps = set(rng.choice(n, missing, replace=False).tolist()) if missing else set()
    kinds = spec.get("missing") or []
    if family == "object" and kinds:
        holes = [float("nan") if kinds[i % len(kinds)] == "nan" else None for i in range(missing)]
    else:
        holes = [None] * missing
    values = iter(body.tolist() if hasattr(body, "tolist") else body)
    filled = iter(holes)
    out = [next(filled) if i in gaps else next(values) for i in range(n)]
    if family == "number":
        arr = np.array(out, dtype=float if missing else None).astype(dtype) if out else np.empty(0, dtype)
        return arr
    if family == "datetime":
        return np.array(out, dtype=dtype)
    if family == "object":
        arr = np.empty(n, dtype=object)
        arr[:] = out
        return arr
    if dtype.startswith("<U"):
        return np.array(out, dtype=dtype)
    import pandas as pd

    if dtype == "category":
        return pd.Categorical(out)
    return pd.array(out, dtype=dtype)


def _index(spec: Any, n: int, variant: int) -> Any:
    """The recorded RangeIndex or regular dates, or labels the facts leave open (a RangeIndex, or other
    integers)."""
    import pandas as pd

    if isinstance(spec, dict) and spec.get("kind") == "range":
        return pd.RangeIndex(*spec["range"], name=spec.get("name"))
    if isinstance(spec, dict) and spec.get("kind") == "dates":
        dates = pd.date_range(
            spec["start"], periods=n, freq=spec["freq"], unit=spec["unit"], name=spec.get("name")
        )
        if dates.freqstr != spec["freq"] or len(dates) != n or (n and dates[0].isoformat() != spec["start"]):
            raise ValueError("the dates did not come out as recorded")
        return dates
    if spec == "range" or not variant:
        return pd.RangeIndex(n)
    return pd.Index([7 + 3 * i for i in range(n)])


def _series(values: dict[str, Any], index: Any, name: Any, rng: Any, variant: int) -> Any:
    import pandas as pd

    data = _column(values, rng, variant)
    # pandas 3 reads an object array of text as its str dtype: an object column stays one
    return pd.Series(data, index=index, name=name, dtype=object if values["family"] == "object" else None)


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
        import numpy as np

        arr = _column(spec["values"], rng, variant).reshape(spec["shape"])
        return np.asfortranarray(arr) if spec.get("order") == "F" else arr
    if kind == "series":
        index = _index(spec.get("index"), int(spec["values"]["n"]), variant)
        return _series(spec["values"], index, spec.get("name"), rng, variant)
    if kind == "frame":
        import pandas as pd

        index = _index(spec.get("index"), spec["rows"], variant)
        data = {c["name"]: _series(c["values"], index, c["name"], rng, variant) for c in spec["columns"]}
        frame = pd.DataFrame(data, index=index)
        if list(frame.columns) != [c["name"] for c in spec["columns"]] or frame.shape[0] != spec["rows"]:
            raise ValueError("the frame did not come out as recorded")
        if spec.get("column_labels") == "range":
            frame.columns = pd.RangeIndex(len(frame.columns))
        frame.columns.name = spec.get("columns_name")
        return frame
    if kind == "tensor":
        return _tensor(spec, rng, variant)
    if kind == "estimator":
        return _estimator(spec, rng)
    raise ValueError(f"no replica for {kind}")


def _tensor(spec: dict[str, Any], rng: Any, variant: int) -> Any:
    import torch

    dtype = getattr(torch, spec["dtype"].removeprefix("torch."))
    values = _column(spec["values"], rng, variant).reshape(spec["shape"])
    t = torch.from_numpy(values).to(dtype)
    return t.requires_grad_(True) if spec["requires_grad"] and dtype.is_floating_point else t


def _estimator(spec: dict[str, Any], rng: Any) -> Any:
    import importlib

    module, _, name = spec["path"].rpartition(".")
    cls = getattr(importlib.import_module(module), name)
    est = cls(**spec["params"])
    if not spec["fitted"]:
        return est
    import numpy as np
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
        labels = [classes[i % len(classes)] for i in range(rows)]
        # the recorded dtype of classes_ (text labels from a list or a frame are objects, not '<U')
        y = np.array(labels, dtype=spec.get("classes_dtype") or None)
        est.fit(X, y)
    elif is_regressor(est):
        est.fit(X, rng.normal(size=rows))
    else:
        est.fit(X)
    if getattr(est, "n_features_in_", nf) != nf:
        raise ValueError("the fitted replica has another feature count")
    return est
