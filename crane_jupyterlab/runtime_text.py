"""Probe result -> the compact runtime-information block the prompt carries (docs/architecture.md §3).

One line per object where possible, deterministic order (the probe's order: the cell's objects as they
appear, then attribute/subscript steps, call checks and objects they were built from). Facts of categories
that are switched off are dropped; what is not a fact is tagged too: undefined names and missing
attributes/columns count as S (structure), library versions as R, torch's grad mode as V.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_FRAME_DETAIL_COLUMNS = 12  # frames this narrow get per-column details for every column
_NAMES_SHOWN = 40  # column names listed for wider frames
_LAYERS_SHOWN = 8


def render(result: dict[str, Any], categories: str = "SRV") -> str:
    """Render a probe result (see crane_jupyterlab.kernel.probe) as text, keeping only `categories`."""
    if not isinstance(result, dict):
        raise TypeError(f"render() needs the probe's result dict, got {type(result).__name__}")
    if not isinstance(categories, str) or set(categories) - set("SRV"):
        raise ValueError(f"categories must be a subset of 'SRV', got {categories!r}")
    cats = frozenset(categories)
    lines: list[str] = []
    err = result.get("syntax_error")
    if isinstance(err, dict):
        lines.append(f"syntax error: line {err.get('line')} col {err.get('col')}: {err.get('msg')}")
        return "\n".join(lines)
    undefined = [str(n) for n in result.get("undefined") or []]
    if undefined and "S" in cats:
        lines.append(f"undefined: {', '.join(undefined)} (NameError if read)")
    modules = _modules(result.get("modules") or [], cats)
    if modules:
        lines.append(modules)
    for entry in result.get("objects") or []:
        if isinstance(entry, dict):
            lines.append(_entry_line(entry, cats))
    if result.get("budget_exhausted"):
        lines.append("(time budget reached: value statistics of later objects skipped)")
    if result.get("error"):
        lines.append(f"(probe error: {_one_line(result['error'])})")
    return "\n".join(line for line in lines if line)


# ----------------------------------------------------------------------------------------------------


def _modules(mods: list[Any], cats: frozenset[str]) -> str:
    parts = []
    for m in mods:
        if not isinstance(m, dict):
            continue
        text = str(m.get("module") or m.get("name"))
        if "R" in cats and m.get("version"):
            text += f" {m['version']}"
        if m.get("imported") is False:
            text += " (not imported yet)"
        facts = _facts(m, cats)
        if "grad_enabled" in facts:
            text += " (grad enabled" if facts["grad_enabled"] else " (grad disabled: no_grad"
            text += ", autocast on" if facts.get("autocast") is True else ""
            text += ", no cuda)" if facts.get("cuda_available") is False else ")"
        parts.append(text)
    return f"libraries: {', '.join(parts)}" if parts and cats & {"R", "V"} else ""


def _facts(entry: dict[str, Any], cats: frozenset[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in entry.get("facts") or []:
        if isinstance(f, dict) and f.get("cat") in cats and isinstance(f.get("key"), str):
            out.setdefault(f["key"], f.get("value"))
    return out


def _entry_line(entry: dict[str, Any], cats: frozenset[str], parent: str | None = None) -> str:
    expr = str(entry.get("expr"))
    if parent and expr.startswith(parent) and len(expr) > len(parent):
        expr = expr[len(parent) :].lstrip(".")  # a child: its path relative to the parent
    facts = _facts(entry, cats)
    tname = _short(entry.get("type"))
    via = entry.get("via")
    head = expr
    if via:
        relation = entry.get("relation")
        head += (
            f" (read by {via}())"
            if relation == "read"
            else f" ({via} was fitted/compiled with it)"
            if relation == "fitted"
            else f" ({via} was built from it)"
        )
    if entry.get("missing"):
        if "S" not in cats:
            return ""
        close = facts.get("close") or []
        text = f"{head}: MISSING (no such attribute/key on {tname})"
        if close:
            text += f"; close: {', '.join(_val(c) for c in close)}"
        if facts.get("note"):
            text += f"; {facts['note']}"
        if tname == "path":
            text = f"{head}: does NOT exist (FileNotFoundError if opened)"
            text += f"; close: {', '.join(_val(c) for c in close)}" if close else ""
            text += f"; {facts['note']}" if facts.get("note") else ""
        if "available" in facts:
            text = f"{head}: MISSING (style not available); close: {', '.join(_val(c) for c in close)}"
        return text
    if entry.get("error") and not facts:
        return f"{head}: {tname} ({_one_line(entry['error'])})"
    if entry.get("type") == "call":  # a call whose arguments cannot bind (probe: _argument_checks)
        if "bind_error" not in facts:
            return ""
        signature = f" {facts['signature']}" if "signature" in facts else ""
        return f"{head}: arguments do not fit the signature{signature}: {facts['bind_error']} (TypeError)"
    kind = _kind_of(entry)
    body = _RENDERERS.get(kind, _generic)(entry, facts, cats)
    text = f"{head}: {tname}" + (f" {body}" if body else "")
    if entry.get("error"):
        text += f" ({_one_line(entry['error'])})"
    return text


def _kind_of(entry: dict[str, Any]) -> str:
    t = str(entry.get("type") or "")
    if t == "pandas.DataFrame":
        return "frame"
    keys = {f.get("key") for f in entry.get("facts") or [] if isinstance(f, dict)}
    if "n_params" in keys:
        return "torch_module"
    if "compiled" in keys:
        return "keras_model"
    if "fitted" in keys:
        return "estimator"
    if "batch_size" in keys and "drop_last" in keys:
        return "loader"
    return "generic"


def _short(type_name: Any) -> str:
    t = str(type_name or "?")
    return (
        t.rsplit(".", 1)[-1]
        if t.count(".") >= 1 and not t.startswith("__main__")
        else t.replace("__main__.", "")
    )


def _val(v: Any) -> str:
    """Compact value text: identifiers bare, strings with odd characters quoted, floats shortened."""
    if isinstance(v, str):
        if v.startswith("<") and v.endswith(">"):
            return v[1:-1]  # a description made by the probe (`<ndarray (96, 3) float32>`), not a value
        return v if _IDENT.match(v) or v in ("nan", "inf", "-inf") else repr(v)
    if isinstance(v, bool) or v is None:
        return str(v)
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, list):
        return "[" + ", ".join(_val(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_val(k)}: {_val(x)}" for k, x in v.items()) + "}"
    return str(v)


def _device(v: Any) -> str:
    """One notation for devices, tensors' and modules' alike: `cuda:0`, `[cpu, cuda:0]`, never quoted."""
    if isinstance(v, list):
        return "[" + ", ".join(str(d) for d in v) + "]"
    return str(v)


def _one_line(text: Any) -> str:
    """A probe's error on one line of the runtime block: CUDA errors run over many lines."""
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    return lines[0] if len(lines) <= 1 else f"{lines[0]} ..."


def _shape(v: Any) -> str:
    if isinstance(v, list):
        inner = ", ".join("None" if x is None else str(x) for x in v)
        return f"({inner},)" if len(v) == 1 else f"({inner})"
    return str(v)


def _range(facts: dict[str, Any]) -> str:
    if "min" in facts and "max" in facts:
        return f"[{_val(facts['min'])}..{_val(facts['max'])}]"
    return ""


def _stats(facts: dict[str, Any], with_counts: bool = True, named: bool = False) -> list[str]:
    """Value facts of 1-D data: NaN, range, uniques or value set, counts, examples."""
    parts: list[str] = []
    if facts.get("nan") or (named and "nan" in facts):
        parts.append(f"nan {facts['nan']}")
    kind = facts.get("kind")
    counts = facts.get("counts")
    unique = facts.get("unique")
    if kind in ("all-nan", "empty", "constant"):
        parts.append(str(kind))
    rng = _range(facts)
    if counts and isinstance(counts, list) and isinstance(unique, int) and unique <= 6 and with_counts:
        parts.append("counts " + ", ".join(f"{_val(c[0])}:{c[1]}" for c in counts if isinstance(c, list)))
    else:
        if rng:
            parts.append(rng)
        if isinstance(unique, int) and kind != "continuous":
            parts.append(f"{unique} unique")
        if counts and with_counts and isinstance(counts, list):
            parts.append("counts " + ", ".join(f"{_val(c[0])}:{c[1]}" for c in counts if isinstance(c, list)))
        elif facts.get("examples"):
            parts.append("e.g. " + ", ".join(_val(_clip(x)) for x in facts["examples"]))
    odd = facts.get("non_numeric_examples")
    if odd and isinstance(odd, list) and _looks_numeric(facts.get("examples")):
        # mostly numbers written as text, with a few that are not: what astype(float) trips on
        parts.append(f"{facts.get('non_numeric')} not numbers e.g. " + ", ".join(_val(_clip(x)) for x in odd))
    if facts.get("sampled"):
        parts.append(f"(stats on {facts['sampled']} sampled)")
    return parts


def _looks_numeric(examples: Any) -> bool:
    """Whether some of the most frequent values of a text column are numbers."""
    for value in examples if isinstance(examples, list) else []:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return True
        if isinstance(value, str):
            try:
                float(value)
            except ValueError:
                continue
            return True
    return False


def _clip(v: Any, limit: int = 30) -> Any:
    """Examples of free text only need to show what the text looks like."""
    return v[: limit - 3] + "..." if isinstance(v, str) and len(v) > limit else v


def _generic(entry: dict[str, Any], facts: dict[str, Any], cats: frozenset[str]) -> str:
    parts: list[str] = []
    if "shape" in facts:
        parts.append(_shape(facts["shape"]))
    if "len" in facts and "value" not in facts and "items" not in facts:
        parts.append(f"len {facts['len']}")
    for key in ("dtype", "device", "mode", "format", "version"):
        if key in facts:
            parts.append(_device(facts[key]) if key == "device" else str(facts[key]))
    if facts.get("requires_grad"):
        parts.append("requires_grad")
    if facts.get("contiguous") is False:
        parts.append("non-contiguous")
    if "size" in facts:
        parts.append(f"size {_val(facts['size'])}")
    if "nnz" in facts:
        parts.append(f"nnz {facts['nnz']}")
    if "name" in facts:
        parts.append(f"name {_val(facts['name'])}")
    if "value" in facts:
        parts.append(f"= {_val(facts['value'])}")
    if "items" in facts and isinstance(facts["items"], list):
        items = facts["items"]
        more = facts.get("len", 0) - len(items) if isinstance(facts.get("len"), int) else 0
        same = len(items) > 1 and isinstance(items[0], str) and all(x == items[0] for x in items)
        shown = f"[{_val(items[0])} x{len(items)}]" if same and items[0].startswith("<") else _val(items)
        parts.append(f"= {shown}" + (f" (+{more} more, len {facts['len']})" if more > 0 else ""))
    if "keys" in facts and "value" not in facts:
        parts.append(f"keys {_val(facts['keys'])}")
    parts.extend(_stats(facts))
    if "module" in facts and "qualname" in facts:
        parts.append(f"{facts['module']}.{facts['qualname']}")
    for key in ("element_spec", "cardinality", "signature", "note"):
        if key in facts:
            parts.append(f"{key.replace('_', ' ')} {facts[key]}" if key != "signature" else str(facts[key]))
    if facts.get("undefined_globals"):
        names = ", ".join(str(n) for n in facts["undefined_globals"])
        parts.append(f"; its body reads undefined {names} (NameError when reached)")
    if "attrs" in facts and isinstance(facts["attrs"], dict):
        parts.append("attrs: " + ", ".join(f"{k}={_val(v)}" for k, v in facts["attrs"].items()))
    for key in _ITER_KEYS:
        if key in facts:
            parts.append(f"{key}={_val(facts[key])}")
    for key in ("sample_shapes", "batch_shape", "labels"):
        if key in facts:
            parts.append(f"{key.replace('_', ' ')} {_val(facts[key])}")
    if "repr" in facts:
        parts.append(str(facts["repr"]))
    for key in _LAYER_KEYS:
        if key in facts:
            parts.append(f"{key}={_val(facts[key])}")
    if facts.get("exists"):
        parts.append("exists")
    if "lr" in facts:
        parts.append(f"lr={_val(facts['lr'])}")
    children = [c for c in entry.get("children") or [] if isinstance(c, dict)]
    if children:
        parent = str(entry.get("expr"))
        parts.append("[" + "; ".join(_entry_line(c, cats, parent) for c in children[:4]) + "]")
    return " ".join(parts)


_ITER_KEYS = ("samples", "num_classes", "class_indices", "batch_size", "image_shape", "target_size",
              "class_mode", "color_mode")  # fmt: skip
_LAYER_KEYS = ("in_features", "out_features", "in_channels", "out_channels", "kernel_size", "weight_dtype",
               "num_embeddings", "embedding_dim", "num_features")  # fmt: skip


def _column_name(c: Any) -> str:
    return c if isinstance(c, str) and _IDENT.match(c) else repr(c)


def _frame(entry: dict[str, Any], facts: dict[str, Any], cats: frozenset[str]) -> str:
    parts: list[str] = []
    if "shape" in facts:
        parts.append(_shape(facts["shape"]))
    children = [c for c in entry.get("children") or [] if isinstance(c, dict)]
    prefix = str(entry.get("expr"))
    names = facts.get("columns")
    n_cols = facts["shape"][1] if isinstance(facts.get("shape"), list) and len(facts["shape"]) == 2 else None
    if not isinstance(n_cols, int):  # S switched off: judge by the columns described
        n_cols = len([c for c in children if not c.get("missing")])
    narrow = n_cols <= _FRAME_DETAIL_COLUMNS
    details: list[str] = []
    for child in children:
        col = _child_label(prefix, child)
        cf = _facts(child, cats)
        if child.get("missing"):
            if "S" in cats:
                close = cf.get("close") or []
                details.append(
                    f"{col} MISSING" + (f" (close: {', '.join(map(repr, close))})" if close else "")
                )
            continue
        if not narrow and not _named(child):
            continue
        bits = [col]
        if "dtype" in cf:
            bits.append(str(cf["dtype"]))
        bits.extend(_stats(cf, with_counts=_named(child), named=_named(child)))
        details.append(" ".join(bits))
    if narrow:
        parts.append("columns: " + ", ".join(details))
    else:
        if isinstance(names, list) and "S" in cats:
            shown = ", ".join(_column_name(c) for c in names[:_NAMES_SHOWN])
            more = (n_cols or len(names)) - min(len(names), _NAMES_SHOWN)
            parts.append(f"columns: {shown}" + (f" (+{more} more)" if more > 0 else ""))
        if "dtypes" in facts and isinstance(facts["dtypes"], dict):
            parts.append("dtypes: " + ", ".join(f"{k} x{v}" for k, v in facts["dtypes"].items()))
        odd = facts.get("non_numeric_columns")
        if isinstance(odd, dict) and odd:
            parts.append("non-numeric: " + ", ".join(f"{_column_name(k)} {v}" for k, v in odd.items()))
        if details:
            parts.append("named: " + ", ".join(details))
    index = facts.get("index_names")
    if isinstance(index, list) and any(n is not None for n in index):
        parts.append("index: " + ", ".join(_column_name(n) for n in index))
    index_type = facts.get("index_type")
    if isinstance(index_type, str) and index_type not in ("RangeIndex", "Index") and "R" in cats:
        parts.append(f"index {index_type}")
    nan_cols = facts.get("nan_columns")
    if isinstance(nan_cols, dict) and nan_cols and not narrow:
        parts.append("nan: " + ", ".join(f"{_column_name(k)} {v}" for k, v in nan_cols.items()))
    elif nan_cols == {} and not narrow:
        parts.append("no nan")
    if facts.get("sampled"):
        parts.append(f"(stats on {facts['sampled']} sampled rows)")
    return "; ".join(parts)


def _named(child: dict[str, Any]) -> bool:
    """Columns the cell names carry value counts (the probe computes counts only for those)."""
    return any(isinstance(f, dict) and f.get("key") == "counts" for f in child.get("facts") or []) or bool(
        child.get("named")
    )


def _child_label(prefix: str, child: dict[str, Any]) -> str:
    expr = str(child.get("expr"))
    if expr.startswith(prefix + "["):
        inner = expr[len(prefix) + 1 : -1]
        return (
            inner[1:-1]
            if len(inner) >= 2 and inner[0] == inner[-1] == "'" and _IDENT.match(inner[1:-1])
            else inner
        )
    if expr.startswith(prefix + "."):
        return expr[len(prefix) + 1 :]
    return expr


def _layer(child: dict[str, Any], prefix: str, cats: frozenset[str]) -> str:
    cf = _facts(child, cats)
    label = _child_label(prefix, child)
    kind = _short(child.get("type"))
    dims = []
    if "in_features" in cf or "out_features" in cf:
        dims.append(f"{cf.get('in_features', '?')}→{cf.get('out_features', '?')}")
    if "in_channels" in cf or "out_channels" in cf:
        dims.append(f"{cf.get('in_channels', '?')}→{cf.get('out_channels', '?')}")
    if "kernel_size" in cf:
        dims.append(f"k={_val(cf['kernel_size'])}")
    for key in ("num_embeddings", "embedding_dim", "num_features", "units", "filters", "rate", "activation"):
        if key in cf:
            dims.append(f"{key}={_val(cf[key])}")
    if "name" in cf:
        label = str(cf["name"])
    where = f" on {_device(cf['weight_device'])}" if "weight_device" in cf else ""
    return f"{label} {kind}" + (f"({', '.join(dims)})" if dims else "") + where


def _layers(entry: dict[str, Any], cats: frozenset[str]) -> str:
    children = [c for c in entry.get("children") or [] if isinstance(c, dict)]
    prefix = str(entry.get("expr"))
    shown = [_layer(c, prefix, cats) for c in children[:_LAYERS_SHOWN]]
    if len(children) > _LAYERS_SHOWN:
        shown.append(f"... {_layer(children[-1], prefix, cats)}")
    return ", ".join(shown)


def _torch_module(entry: dict[str, Any], facts: dict[str, Any], cats: frozenset[str]) -> str:
    parts = []
    if "training" in facts:
        parts.append("train mode" if facts["training"] else "eval mode")
    if not facts.get("n_params") and not entry.get("children"):
        return ""  # a loss or activation module: the class says it all
    if "param_dtype" in facts:
        grad = " requires_grad" if facts.get("param_requires_grad") else ""
        parts.append(
            f"params {_val(facts['param_dtype'])} {_device(facts.get('param_device', ''))}{grad}".strip()
        )
    if "n_params" in facts:
        parts.append(f"{facts['n_params']} params")
    own = [k for k in _LAYER_KEYS if k in facts]
    if own:
        parts.append(" ".join(f"{k}={_val(facts[k])}" for k in own))
    layers = _layers(entry, cats)
    text = ", ".join(parts)
    if layers and "S" in cats:
        more = facts.get("layers_left_out")
        text += f"; layers: {layers}" + (f" (+{more} more)" if more else "")
    return f"({text})" if text and not layers else text


def _keras_model(entry: dict[str, Any], facts: dict[str, Any], cats: frozenset[str]) -> str:
    parts = []
    if "built" in facts:
        parts.append("built" if facts["built"] else "not built")
    for key in ("input_shape", "output_shape"):
        if key in facts:
            parts.append(f"{key.split('_')[0]} {_shape(facts[key])}")
    if "last_units" in facts or "last_activation" in facts:
        parts.append(f"last units {facts.get('last_units', '?')} {facts.get('last_activation', '')}".strip())
    if "compiled" in facts:
        parts.append(
            f"loss {facts['loss']}"
            if facts.get("loss")
            else "compiled"
            if facts["compiled"]
            else "not compiled"
        )
    layers = _layers(entry, cats) if "S" in cats else ""
    return ", ".join(parts) + (f"; layers: {layers}" if layers else "")


def _estimator(entry: dict[str, Any], facts: dict[str, Any], cats: frozenset[str]) -> str:
    parts = []
    if "fitted" in facts:
        parts.append("fitted" if facts["fitted"] else "NOT fitted")
    for key in ("n_features_in_", "n_outputs_", "n_classes"):
        if key in facts:
            parts.append(f"{key}={facts[key]}")
    for key in ("classes_", "feature_names_in_", "steps", "columns_used"):
        if key in facts:
            parts.append(f"{key}={_val(facts[key])}")
    if facts.get("params"):
        parts.append("params " + ", ".join(f"{k}={_val(v)}" for k, v in facts["params"].items()))
    return ", ".join(parts)


def _loader(entry: dict[str, Any], facts: dict[str, Any], cats: frozenset[str]) -> str:
    parts = [f"batch_size={facts.get('batch_size')}"] if "batch_size" in facts else []
    if facts.get("shuffle"):
        parts.append("shuffle")
    if facts.get("drop_last"):
        parts.append("drop_last")
    if facts.get("collate_fn"):
        parts.append(f"collate_fn={facts['collate_fn']}")
    text = ", ".join(parts)
    children = [c for c in entry.get("children") or [] if isinstance(c, dict)]
    for c in children:
        text += "; " + _entry_line(c, cats, str(entry.get("expr")))
    return text


_RENDERERS: dict[str, Callable[[dict[str, Any], dict[str, Any], frozenset[str]], str]] = {
    "frame": _frame,
    "torch_module": _torch_module,
    "keras_model": _keras_model,
    "estimator": _estimator,
    "loader": _loader,
    "generic": _generic,
}
