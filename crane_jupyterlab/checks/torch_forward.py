"""What a torch model of the kernel is, and what calling it produces, read from the probe's facts.

Only torch's own forwards are followed: a leaf module of torch, or an `nn.Sequential` (its forward calls
each child in turn) whose children are all torch leaves, shown in full, with no forward hook or pre-hook
anywhere (a hook may replace the input or the output) and no class from outside torch. The output shape
is derived for stacks of `Linear` layers and layers that keep the shape of their input (activations,
dropout, softmax): `F.linear` maps (*, in_features) to (*, out_features) in the weights' dtype. Anything
else gives None. Also the torch tables derive.py reads for the tensors a cell makes (numpy-to-torch
dtypes, casts, plain losses, functions that keep shape and dtype) and the shapes `squeeze`/`unsqueeze`
give; derive.py follows the functions themselves (softmax and the like, `one_hot`).
"""

from __future__ import annotations

import ast

from .view import ObjInfo, RuntimeView, type_class, type_root

NUMPY_TO_TORCH_DTYPE = {
    "float64": "float64", "float32": "float32", "float16": "float16", "int64": "int64", "int32": "int32",
    "int16": "int16", "int8": "int8", "uint8": "uint8", "bool": "bool",
}  # fmt: skip
TORCH_CASTS = {"float": "float32", "double": "float64", "half": "float16", "long": "int64", "int": "int32",
               "bool": "bool"}  # fmt: skip
# Loss modules the cell may build, with the keywords that leave the targets they accept alone (the
# cross-entropy and BCE rules read them; `ignore_index` changes which class indices are legal).
TORCH_PLAIN_LOSSES = {
    "CrossEntropyLoss": {"weight", "reduction", "label_smoothing"}, "NLLLoss": {"weight", "reduction"},
    "BCELoss": {"weight", "reduction"}, "BCEWithLogitsLoss": {"weight", "reduction", "pos_weight"},
}  # fmt: skip
TORCH_TENSOR_TYPES = {"FloatTensor": "float32", "DoubleTensor": "float64", "LongTensor": "int64",
                      "IntTensor": "int32"}  # fmt: skip


def torch_dtype(node: ast.expr) -> str | None:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return {"float32": "float32", "float": "float32", "float64": "float64", "double": "float64",
                "int64": "int64", "long": "int64", "int32": "int32", "float16": "float16",
                "half": "float16"}.get(node.attr)  # fmt: skip
    return None


# Layers that keep the shape (and the dtype) of their input.
SAME_SHAPE = frozenset(
    {"ReLU", "ReLU6", "Softmax", "LogSoftmax", "Dropout", "Sigmoid", "Tanh", "Identity", "LeakyReLU",
     "GELU", "ELU", "SELU", "SiLU", "Mish", "Softplus", "Hardtanh", "Hardswish", "Hardsigmoid", "CELU",
     "Softsign", "AlphaDropout"}
)  # fmt: skip
# torch functions and tensor methods whose result has the shape and dtype of their floating input.
SAME_SHAPE_FUNCTIONS = frozenset({"softmax", "log_softmax", "sigmoid", "relu", "tanh", "exp", "log"})
# Layers that keep the size of the last axis (what may follow the last Linear of a classifier).
SAME_WIDTH = SAME_SHAPE | {"PReLU"}


def is_module(info: ObjInfo) -> bool:
    return type_root(info.type) == "torch" and "n_params" in info.raw


def trusted(info: ObjInfo) -> bool:
    """A torch module whose forward is torch's own from input to output."""
    raw = info.raw
    return (
        is_module(info)
        and not raw.get("custom_modules")
        and set(raw.get("containers") or []) <= {"Sequential"}
        and not raw.get("forward_pre_hooks")
        and not raw.get("forward_hooks")
        and "layers_left_out" not in raw
    )


def flat_layers(view: RuntimeView, model: ObjInfo) -> list[ObjInfo] | None:
    """The layers of a flat Sequential, all of them, in order; None when nested or not all shown."""
    expected = [f"{model.expr}[{i}]" for i in range(len(model.children))]
    layers = [info for expr in model.children if (info := view.get(expr)) is not None]
    if not model.children or model.children != expected or len(layers) != len(expected):
        return None
    return layers


def leaves(view: RuntimeView, model: ObjInfo) -> list[ObjInfo] | None:
    """The layers a call of `model` runs, in order: its own flat Sequential's, or itself for a leaf."""
    if type_class(model.type) == "Sequential":
        return flat_layers(view, model)
    return [model] if not model.children else None


def classes(view: RuntimeView, model: ObjInfo) -> int | None:
    """Number of outputs of a Sequential classifier: the last Linear's out_features."""
    layers = flat_layers(view, model)
    for layer in reversed(layers or []):
        cls = type_class(layer.type)
        if cls == "Linear":
            out = layer.layer.get("out_features")
            return out if isinstance(out, int) else None
        if cls not in SAME_WIDTH:
            return None
    return None


def output(view: RuntimeView, model: ObjInfo, x: ObjInfo) -> tuple[list[int], str] | None:
    """(shape, dtype) of `model(x)` for a trusted stack of Linear and shape-keeping layers that accepts
    x (every Linear's in_features is the last axis it meets, its weights have x's dtype); None otherwise
    (the first-layer rules report inputs that do not fit)."""
    if not trusted(model) or not x.is_tensor or x.shape is None or not x.shape or not x.dtype:
        return None
    if not all(isinstance(d, int) for d in x.shape):
        return None
    layers = leaves(view, model)
    if not layers or not any(type_class(layer.type) == "Linear" for layer in layers):
        return None
    shape = [d for d in x.shape if d is not None]
    for layer in layers:
        cls = type_class(layer.type)
        if type_root(layer.type) != "torch":
            return None
        if cls == "Linear":
            want, out = layer.layer.get("in_features"), layer.layer.get("out_features")
            if not isinstance(out, int) or want != shape[-1] or layer.layer.get("weight_dtype") != x.dtype:
                return None
            shape[-1] = out
        elif cls not in SAME_SHAPE:
            return None
    return shape, x.dtype


# ----- tensors the cell derives -------------------------------------------------------------------------


def squeezed(shape: list[int | None], method: str, dim: int | None) -> list[int | None] | None:
    """The shape after `unsqueeze(dim)` / `squeeze()` / `squeeze(dim)`; None when dim is out of range."""
    n = len(shape) + (1 if method == "unsqueeze" else 0)
    if dim is not None and not -max(n, 1) <= dim < max(n, 1):
        return None
    if method == "unsqueeze":
        if dim is None:
            return None
        at = dim % n
        return [*shape[:at], 1, *shape[at:]]
    if dim is None:
        return [d for d in shape if d != 1]
    if not shape:
        return []
    at = dim % len(shape)
    return [*shape[:at], *shape[at + 1 :]] if shape[at] == 1 else list(shape)
