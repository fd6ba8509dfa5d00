"""torch tensors, nn.Modules (layer sizes, parameter dtype/device), optimizers, DataLoaders and datasets."""

from __future__ import annotations

import sys
from typing import Any

from ..safe import (
    _MISSING,
    ARRAY_SAMPLE,
    MAX_ITEMS,
    SAFE_SCALARS,
    TRUSTED_ROOTS,
    UNIQUE_LIMIT,
    _add,
    _callable_name,
    _Ctx,
    _entry,
    _inst_dict,
    _is,
    _isfunction,
    _py_scalar,
    _root_of_function,
    _short_type,
    _trusted,
    _type_name,
)
from .core import _summarizer, summarize
from .numpy import _array_stats, _counts, _np, _num
from .objects import _attrs


@_summarizer(lambda o: _is(o, "torch", "Tensor"))
def _sum_tensor(t: Any, e: dict[str, Any], ctx: _Ctx, hints: dict[str, Any]) -> None:
    torch = sys.modules.get("torch")
    _add(e, "S", "shape", list(t.shape))
    _add(e, "R", "dtype", str(t.dtype).replace("torch.", ""))
    _add(e, "R", "device", str(t.device))
    _add(e, "R", "requires_grad", bool(t.requires_grad))
    if not t.is_contiguous():
        _add(e, "R", "contiguous", False)  # .view() would fail
    if torch is None or t.numel() == 0 or t.is_sparse or str(t.device) == "meta":
        return
    if _np() is not None and t.device.type == "cpu":
        # numpy on a zero-copy view: torch's first reductions in a process cost tens of ms (op warm-up)
        try:
            arr = t.detach().numpy()
        except Exception:
            arr = None
        if arr is not None:
            _array_stats(arr, e, ctx)
            return
    with torch.no_grad():
        flat = t.detach()
        sampled = False
        if t.numel() > ARRAY_SAMPLE:
            if not t.is_contiguous() or t.device.type != "cpu":
                _add(e, "R", "note", "stats skipped (large tensor)")
                return
            flat = flat.reshape(-1)[:: -(-t.numel() // ARRAY_SAMPLE)]
            sampled = True
            _add(e, "V", "sampled", int(flat.numel()))
        flat = flat.reshape(-1)
        if t.is_floating_point():
            _add(e, "V", "nan", int(torch.isnan(flat).sum().item()))
        if t.dtype != torch.bool and not t.is_complex():
            finite = flat[~torch.isnan(flat)] if t.is_floating_point() else flat
            if finite.numel():
                _add(e, "V", "min", _num(finite.min().item()))
                _add(e, "V", "max", _num(finite.max().item()))
        if t.dim() == 1 and not t.is_floating_point() and not t.is_complex() and not sampled:
            vals, counts = torch.unique(flat[:UNIQUE_LIMIT], return_counts=True)
            _add(e, "V", "unique", int(vals.numel()))
            if vals.numel() <= 30:
                _add(e, "V", "counts", _counts(vals.tolist(), counts.tolist(), ctx))


_LAYER_ATTRS = (
    "in_features", "out_features", "in_channels", "out_channels", "kernel_size", "num_embeddings",
    "embedding_dim", "num_features", "normalized_shape", "input_size", "hidden_size", "num_layers", "p",
)  # fmt: skip


def _layer_facts(m: Any, e: dict[str, Any]) -> None:
    d = _inst_dict(m)
    for key in _LAYER_ATTRS:
        v = d.get(key, _MISSING)
        if v is not _MISSING and (type(v) in (int, float, bool) or type(v) is tuple):
            _add(e, "S", key, list(v) if isinstance(v, tuple) else v)
    params = d.get("_parameters")
    w = params.get("weight") if isinstance(params, dict) else None
    if w is not None:
        _add(e, "R", "weight_dtype", str(w.dtype).replace("torch.", ""))


@_summarizer(lambda o: _is(o, "torch", "Module"))
def _sum_module_nn(m: Any, e: dict[str, Any], ctx: _Ctx, hints: dict[str, Any]) -> None:
    _add(e, "R", "class", type(m).__name__)
    d = _inst_dict(m)
    _add(e, "V", "training", bool(d.get("training", True)))
    dtypes: list[str] = []
    devices: list[str] = []
    n_params = 0
    grad = False
    for i, p in enumerate(m.parameters()):
        if i > 5000:
            break
        n_params += int(p.numel())
        grad = grad or bool(p.requires_grad)
        dt, dev = str(p.dtype).replace("torch.", ""), str(p.device)
        if dt not in dtypes:
            dtypes.append(dt)
        if dev not in devices:
            devices.append(dev)
    if dtypes:
        _add(e, "R", "param_dtype", dtypes[0] if len(dtypes) == 1 else dtypes)
        _add(e, "R", "param_device", devices[0] if len(devices) == 1 else devices)
        _add(e, "R", "param_requires_grad", grad)
    _add(e, "S", "n_params", n_params)
    _layer_facts(m, e)
    leaves: list[tuple[str, Any]] = []
    for i, (name, sub) in enumerate(m.named_modules()):
        if i > 500:
            break
        if name and not _inst_dict(sub).get("_modules"):
            leaves.append((name, sub))
    last_out = None
    for _, sub in leaves:
        v = _inst_dict(sub).get("out_features")
        if type(v) is int:
            last_out = v
    if last_out is not None:
        _add(e, "S", "last_out_features", last_out)
    shown = leaves if len(leaves) <= 12 else leaves[:8] + leaves[-4:]
    base = e["expr"]
    for name, sub in shown:
        path = "".join(f"[{p}]" if p.isdigit() else f".{p}" for p in name.split("."))
        child = _entry(base + path, _type_name(sub))
        _layer_facts(sub, child)
        e["children"].append(child)
    if len(leaves) > len(shown):
        _add(e, "S", "layers_left_out", len(leaves) - len(shown))


@_summarizer(lambda o: _is(o, "torch", "Optimizer"))
def _sum_optimizer(opt: Any, e: dict[str, Any], ctx: _Ctx, hints: dict[str, Any]) -> None:
    _add(e, "R", "class", type(opt).__name__)
    groups = _inst_dict(opt).get("param_groups")
    if isinstance(groups, list) and groups and isinstance(groups[0], dict):
        lr = groups[0].get("lr")
        if type(lr) in (int, float):
            _add(e, "V", "lr", lr)
        _add(e, "S", "param_groups", len(groups))
        params = groups[0].get("params")
        if isinstance(params, list):
            _add(e, "S", "n_tensors", sum(len(g.get("params", [])) for g in groups if isinstance(g, dict)))


@_summarizer(lambda o: _is(o, "torch", "DataLoader"))
def _sum_loader(dl: Any, e: dict[str, Any], ctx: _Ctx, hints: dict[str, Any]) -> None:
    d = _inst_dict(dl)
    _add(e, "S", "batch_size", d.get("batch_size"))
    _add(e, "S", "drop_last", bool(d.get("drop_last")))
    _add(e, "S", "num_workers", d.get("num_workers"))
    sampler = d.get("sampler")
    if sampler is not None:
        _add(e, "V", "shuffle", type(sampler).__name__ == "RandomSampler")
    collate = d.get("collate_fn")
    if (collate is not None and not _trusted(type(collate))) or (
        _isfunction(collate) and _root_of_function(collate) not in TRUSTED_ROOTS
    ):
        _add(e, "R", "collate_fn", _callable_name(collate))
    ds = d.get("dataset")
    if ds is not None:
        e["children"].append(summarize(ds, e["expr"] + ".dataset", ctx))


@_summarizer(lambda o: _is(o, "torch", "TensorDataset"))
def _sum_tensor_dataset(ds: Any, e: dict[str, Any], ctx: _Ctx, hints: dict[str, Any]) -> None:
    tensors = _inst_dict(ds).get("tensors", ())
    _add(e, "S", "len", int(tensors[0].shape[0]) if tensors else 0)
    for i, t in enumerate(tensors[:4]):
        e["children"].append(summarize(t, f"{e['expr']}.tensors[{i}]", ctx))


@_summarizer(lambda o: _is(o, "torch", "IterableDataset"))
def _sum_iterable_dataset(ds: Any, e: dict[str, Any], ctx: _Ctx, hints: dict[str, Any]) -> None:
    _add(e, "R", "note", "iterable dataset (not iterated)")


@_summarizer(lambda o: _is(o, "torch", "Dataset"))
def _sum_map_dataset(ds: Any, e: dict[str, Any], ctx: _Ctx, hints: dict[str, Any]) -> None:
    """Map-style dataset: len and up to `probe_samples` samples (this is the one place user code runs)."""
    n = len(ds)
    _add(e, "S", "len", n)
    shapes: list[Any] = []
    labels: list[Any] = []
    for i in range(min(n, ctx.probe_samples)):
        if ctx.over():
            break
        sample = ds[i]
        parts = sample if type(sample) in (tuple, list) else (sample,)
        shapes.append([_shape_of(p) for p in parts])
        if len(parts) >= 2:
            lab = _py_scalar(parts[-1])
            lab = lab if lab is not _MISSING else parts[-1]
            if type(lab) in (int, float, bool, str):
                labels.append(lab)
    if shapes:
        distinct = []
        for s in shapes:
            if s not in distinct:
                distinct.append(s)
        _add(e, "S", "sample_shapes", distinct[:4])
        if len(distinct) == 1:
            _add(
                e,
                "S",
                "batch_shape",
                [[len(shapes), *s] if isinstance(s, list) else len(shapes) for s in distinct[0]],
            )
    if labels:
        _add(e, "V", "labels", sorted(set(labels), key=repr)[:MAX_ITEMS])
    attrs = _attrs(ds, ctx)
    if attrs:
        _add(e, "V", "attrs", attrs)


def _shape_of(v: Any) -> Any:
    if _is(v, "torch", "Tensor") or _is(v, "numpy", "ndarray"):
        return list(v.shape)
    if _is(v, "PIL", "Image"):
        return ["PIL", *list(v.size)]
    if type(v) in SAFE_SCALARS:
        return type(v).__name__
    return _short_type(v)
