"""torch tensors, nn.Modules (layer sizes, parameter dtype/device), optimizers, DataLoaders and datasets."""

from __future__ import annotations

import sys
from typing import Any

from ..access import _callable_name, _root_of_function
from ..facts import ARRAY_SAMPLE, MAX_ITEMS, SAFE_SCALARS, _add, _Ctx, _entry, _py_scalar
from ..safe import (
    _MISSING,
    TRUSTED_ROOTS,
    _inst_dict,
    _is,
    _isfunction,
    _module_dict,
    _root,
    _short_type,
    _trusted,
    _type_name,
)
from .core import _summarizer, error_line, summarize
from .numpy import _flat_sample, _np, _sample_stats, sample_plan
from .objects import _attrs


@_summarizer(lambda o: _is(o, "torch", "Tensor"))
def _sum_tensor(t: Any, e: dict[str, Any], ctx: _Ctx, hints: dict[str, Any]) -> None:
    # Shape, dtype, device and grad flag are metadata: reading them never touches the device, so they
    # survive a spent budget, a busy GPU and a CUDA context broken by a device-side assert.
    torch = sys.modules.get("torch")
    _add(e, "S", "shape", list(t.shape))
    _add(e, "R", "dtype", _dtype(t.dtype))
    _add(e, "R", "device", str(t.device))
    _add(e, "R", "requires_grad", bool(t.requires_grad))
    if not t.is_contiguous():
        _add(e, "R", "contiguous", False)  # .view() would fail
    if torch is None or _np() is None or t.numel() == 0 or t.layout != torch.strided:
        return
    kind = t.device.type
    if kind == "meta":
        return  # no data
    if ctx.over():
        _add(e, "R", "note", "stats skipped (time budget)")
        return
    found: tuple[Any, bool] | str | None
    if kind == "cpu":
        found = _cpu_sample(t)
    elif kind == "cuda":
        found = _cuda_sample(t, ctx)
    else:
        found = f"stats skipped ({kind} tensor)"
    if isinstance(found, str):
        _add(e, "R", "note", found)
    elif found is not None:
        flat, sampled = found
        _sample_stats(flat, sampled, t.dim() == 1 or (t.dim() == 2 and t.shape[1] == 1), e, ctx)


def _dtype(dtype: Any) -> str:
    return str(dtype).replace("torch.", "")


def _host_numpy(t: Any) -> tuple[Any, bool] | None:
    """A host tensor as a numpy array without a copy (bfloat16 as its int16 bits: numpy has no
    bfloat16), and whether it holds bfloat16 bits; None for dtypes numpy cannot view."""
    torch = sys.modules["torch"]
    d = t.detach()
    if d.dtype == torch.bfloat16:
        return d.view(torch.int16).numpy(), True
    try:
        return d.numpy(), False
    except (TypeError, RuntimeError):  # float8, quantized, conjugate/negative views
        return None


def _widen_bf16(sample: Any) -> Any:
    """bfloat16 bits (int16) -> float32 values: bfloat16 is the top half of a float32."""
    np = _np()
    return (sample.view(np.uint16).astype(np.uint32) << 16).view(np.float32)


def _cpu_sample(t: Any) -> tuple[Any, bool] | None:
    host = _host_numpy(t)  # a zero-copy view: torch's own first reductions cost tens of ms (op warm-up)
    if host is None:
        return None
    arr, bf16 = host
    flat, sampled = _flat_sample(arr)
    return (_widen_bf16(flat) if bf16 else flat), sampled


GPU_RUNS = 32  # one device-to-host copy each; no kernel is launched, so none has to be loaded either


def _cuda_sample(t: Any, ctx: _Ctx) -> tuple[Any, bool] | str | None:
    """A sample of a CUDA tensor copied to the host, or why there is none.

    Never waits for the GPU: the copies run only when the device's current and default streams have
    no pending work (`Stream.query()` does not block), and they are plain device-to-host copies of
    contiguous runs: no kernel is launched (the first launch of a reduction lazily loads its CUDA
    module, 100+ ms) and nothing is allocated on the device. Work the user queued on a stream of
    their own is not visible here; a copy on the default stream would wait for it (a blocking stream).
    """
    torch = sys.modules["torch"]
    cuda = _module_dict(torch).get("cuda")
    key = str(t.device)
    note = ctx.gpu_note.get(key)
    if note is None:
        note = ""
        try:
            if cuda is None or not cuda.is_initialized():
                note = "stats skipped (CUDA not initialized in this process)"  # e.g. a forked child
            elif not (cuda.current_stream(t.device).query() and cuda.default_stream(t.device).query()):
                note = "stats skipped (GPU busy)"
        except Exception as exc:  # a context broken by a device-side assert fails every call
            note = f"stats skipped ({error_line(exc, 80)})"
        ctx.gpu_note[key] = note
    if note:
        return note
    flat = _dense_flat(t.detach())
    if flat is None:
        return "stats skipped (non-contiguous GPU tensor)"
    n = int(flat.numel())
    sampled = n > ARRAY_SAMPLE
    runs = sample_plan(n, ARRAY_SAMPLE, GPU_RUNS, spread=False)[0] if sampled else [(0, n)]
    parts: list[Any] = []
    bf16 = False
    for lo, hi in runs:
        host = _host_numpy(flat[lo:hi].cpu())
        if host is None:
            return None
        parts.append(host[0])
        bf16 = host[1]
    np = _np()
    sample = np.concatenate(parts) if len(parts) > 1 else parts[0]
    return (_widen_bf16(sample) if bf16 else sample), sampled


def _dense_flat(t: Any) -> Any:
    """A 1-D view of a tensor's elements in memory order when they fill their memory without gaps or
    overlaps (contiguous, or a permutation of a contiguous tensor); None otherwise (sliced views)."""
    if t.is_contiguous():
        return t.reshape(-1)
    expected = 1
    for stride, size in sorted((st, sz) for sz, st in zip(t.shape, t.stride()) if sz != 1):
        if stride != expected:
            return None
        expected *= size
    return t.as_strided((t.numel(),), (1,), t.storage_offset())


@_summarizer(lambda o: _is(o, "torch", "device"))
def _sum_device(d: Any, e: dict[str, Any], ctx: _Ctx, hints: dict[str, Any]) -> None:
    _add(e, "R", "device", str(d))  # "cuda", "cuda:1", "cpu": as `tensor.to(d)` would read it


_LAYER_ATTRS = (
    "in_features", "out_features", "in_channels", "out_channels", "kernel_size", "num_embeddings",
    "embedding_dim", "num_features", "normalized_shape", "input_size", "hidden_size", "num_layers", "p",
)  # fmt: skip


# Constructor settings of the losses that decide which targets they accept.
_LOSS_ATTRS = ("ignore_index", "reduction", "label_smoothing")


def _layer_facts(m: Any, e: dict[str, Any], devices: bool = False) -> None:
    d = _inst_dict(m)
    for key in _LAYER_ATTRS:
        v = d.get(key, _MISSING)
        if v is not _MISSING and (type(v) in (int, float, bool) or type(v) is tuple):
            _add(e, "S", key, list(v) if isinstance(v, tuple) else v)
    params = d.get("_parameters")
    w = params.get("weight") if isinstance(params, dict) else None
    if w is None and isinstance(params, dict):  # recurrent layers: weight_ih_l0, ...
        w = next((p for k, p in params.items() if p is not None and k.startswith("weight")), None)
    if w is not None:
        _add(e, "R", "weight_dtype", _dtype(w.dtype))
        if devices:
            _add(e, "R", "weight_device", str(w.device))


@_summarizer(lambda o: _is(o, "torch", "Module"))
def _sum_module_nn(m: Any, e: dict[str, Any], ctx: _Ctx, hints: dict[str, Any]) -> None:
    # Everything here is structure (parameter metadata, the module tree): never cut by the budget.
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
        dt, dev = _dtype(p.dtype), str(p.device)
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
    for key in _LOSS_ATTRS:
        v = d.get(key, _MISSING)
        if v is not _MISSING and type(v) in (int, float, str):
            _add(e, "R", key, v)
    leaves: list[tuple[str, Any]] = []
    custom: list[str] = []  # classes from outside torch: their forward may do anything
    containers: list[str] = []
    pre_hooks = 0
    post_hooks = 0  # forward hooks may replace a module's output
    complete = True
    for i, (name, sub) in enumerate(m.named_modules()):
        if i > 500:
            complete = False
            break
        sd = _inst_dict(sub)
        hooks = sd.get("_forward_pre_hooks")
        pre_hooks += len(hooks) if isinstance(hooks, dict) else 0
        hooks = sd.get("_forward_hooks")
        post_hooks += len(hooks) if isinstance(hooks, dict) else 0
        cls_name = _short_type(sub)
        if _root(type(sub)) != "torch" and cls_name not in custom:
            custom.append(cls_name)
        if sd.get("_modules"):
            if cls_name not in containers:
                containers.append(cls_name)
        elif name:
            leaves.append((name, sub))
    module_mod = sys.modules.get("torch.nn.modules.module")
    global_hooks = _module_dict(module_mod).get("_global_forward_pre_hooks") if module_mod else None
    pre_hooks += len(global_hooks) if isinstance(global_hooks, dict) else 0
    if d.get("_modules") or not complete:
        # The forward order of these containers is torch's own (nn.Sequential: each child in turn);
        # a custom class anywhere in the tree, or a pre-hook, may move or convert the input first.
        _add(e, "R", "containers", containers)
        _add(e, "R", "custom_modules", custom if complete else [*custom, "..."])
    elif custom:
        _add(e, "R", "custom_modules", custom)
    if pre_hooks:
        _add(e, "R", "forward_pre_hooks", pre_hooks)
    global_hooks = _module_dict(module_mod).get("_global_forward_hooks") if module_mod else None
    post_hooks += len(global_hooks) if isinstance(global_hooks, dict) else 0
    if post_hooks:
        _add(e, "R", "forward_hooks", post_hooks)
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
        _layer_facts(sub, child, devices=len(devices) > 1)
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
        _add(e, "R", "sampler", _short_type(sampler))  # a custom one may skip or repeat samples
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
