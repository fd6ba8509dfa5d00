"""Abstract values of the objects the kernel holds, read from the probe's facts: tensors, devices, dtypes,
modules (trusted or not, their first parameterized layer and their classes) and DataLoaders over a
TensorDataset."""

from __future__ import annotations

from dataclasses import replace

from ...view import ObjInfo, RuntimeView, type_class, type_root
from .values import (
    DEVICE_NAME,
    PAIR_LOSSES,
    SAME_WIDTH,
    Device,
    Dtype,
    Loader,
    Module,
    Tensor,
    Value,
    as_int,
    dtype_name,
)


def from_kernel(view: RuntimeView, info: ObjInfo) -> Value:
    """What the rules know of a kernel object (None: nothing they model)."""
    raw = info.raw
    root, cls = type_root(info.type), type_class(info.type)
    if root == "torch" and cls in ("Tensor", "Parameter"):
        mx = raw.get("max")
        return Tensor(
            name=info.expr,
            device=info.device,
            dtype=dtype_name(info.dtype),
            ndim=len(info.shape) if info.shape is not None else None,
            requires_grad=info.requires_grad,
            max=float(mx) if isinstance(mx, int | float) and not isinstance(mx, bool) else None,
            origin=f"{info.expr} is on {info.device} ({info.dtype})",
        )
    if root == "torch" and cls == "device" and isinstance(info.device, str):
        return Device(info.device)
    if info.type == "str" and isinstance(raw.get("value"), str) and DEVICE_NAME.match(raw["value"]):
        return Device(raw["value"])
    if root == "torch" and cls == "DataLoader":
        return _loader(view, info)
    if "n_params" in raw:
        return _module(view, info)
    if root == "torch" and cls == "dtype":
        return Dtype(dtype_name(str(raw.get("repr", ""))) or "") if raw.get("repr") else None
    return None


def _module(view: RuntimeView, info: ObjInfo) -> Module:
    raw = info.raw
    cls = type_class(info.type)
    device = raw.get("param_device")
    dtype = raw.get("param_dtype")
    trusted = (
        type_root(info.type) == "torch"
        and not raw.get("custom_modules")
        and set(raw.get("containers") or []) <= {"Sequential"}
        and not raw.get("forward_pre_hooks")
        and not raw.get("forward_hooks")  # it may replace the output (its device, dtype, classes)
    )
    grad = raw.get("param_requires_grad")
    return Module(
        name=info.expr,
        cls=cls,
        trusted=trusted,
        device=device if isinstance(device, str) else None,
        dtype=dtype if isinstance(dtype, str) else None,
        requires_grad=grad if isinstance(grad, bool) else None,
        first=_first_layer(view, info) if trusted else None,
        classes=_classes(view, info) if trusted else None,
        loss=cls in PAIR_LOSSES and type_root(info.type) == "torch",
        ignore_index=as_int(raw.get("ignore_index")),
    )


def _leaves(view: RuntimeView, info: ObjInfo) -> list[ObjInfo] | None:
    """The leaf layers of a Sequential in forward order, when all of them are shown."""
    if not info.children:
        return [info]
    if type_class(info.type) != "Sequential" or "layers_left_out" in info.raw:
        return None
    leaves = [view.get(expr) for expr in info.children]
    return [leaf for leaf in leaves if leaf is not None] if all(leaves) else None


def _first_layer(view: RuntimeView, info: ObjInfo) -> tuple[str, str | None, tuple[str, ...]] | None:
    leaves = _leaves(view, info)
    before: list[str] = []
    for leaf in leaves or []:
        cls = type_class(leaf.type)
        if "weight_dtype" in leaf.raw:
            return cls, dtype_name(str(leaf.raw["weight_dtype"])), tuple(before)
        before.append(cls)
    return None


def _classes(view: RuntimeView, info: ObjInfo) -> int | None:
    leaves = _leaves(view, info)
    for leaf in reversed(leaves or []):
        cls = type_class(leaf.type)
        if cls == "Linear":
            return as_int(leaf.raw.get("out_features"))
        if cls not in SAME_WIDTH:
            return None
    return None


def _loader(view: RuntimeView, info: ObjInfo) -> Loader | None:
    raw = info.raw
    batch_size = as_int(raw.get("batch_size"))
    dataset = view.get(f"{info.expr}.dataset")
    if batch_size is None or raw.get("collate_fn") or dataset is None:
        return None
    if type_class(dataset.type) != "TensorDataset":
        return None
    n = as_int(dataset.raw.get("len"))
    tensors = [view.get(expr) for expr in dataset.children]
    if n is None or not tensors or not all(tensors):
        return None
    batch: list[Tensor] = []
    for t in tensors:
        assert t is not None
        value = from_kernel(view, t)
        if not isinstance(value, Tensor) or value.ndim is None:
            return None
        if value.device != "cpu" and as_int(raw.get("num_workers")):
            return None  # CUDA tensors in forked workers fail on their own
        batch.append(
            replace(
                value,
                name=f"a batch of {info.expr}",
                every_batch=True,
                requires_grad=False if value.requires_grad is False else None,
                origin=f"{info.expr} yields batches of {t.expr} ({value.device}, {value.dtype})",
            )
        )
    drop_last = raw.get("drop_last") is True
    nonempty = n >= batch_size if drop_last else n >= 1
    plain_sampler = raw.get("sampler") in ("RandomSampler", "SequentialSampler")
    return Loader(info.expr, tuple(batch), nonempty, plain_sampler and not drop_last)
