"""Shapes and sizes that a model cannot accept.

- Keras `model.fit/predict/evaluate(X, ...)`: X's last axis differs from the model's input size when the
  first layer is a Dense or recurrent layer (its kernel is sized by that axis) — ValueError.
- Keras `model.fit(generator)`: a categorical image iterator yields one-hot targets of width
  `num_classes`, the model's output has another width and the loss is a (non-sparse) cross-entropy —
  ValueError.
- torch `model(X)` for an `nn.Sequential` whose first layer is `Linear`/`Conv*d`: X's feature/channel
  size differs from `in_features`/`in_channels`, or X's dtype differs from the layer's weights —
  RuntimeError.
- torch cross-entropy `criterion(model(X), y)` / `F.cross_entropy(...)`: an integer target >= the
  number of outputs of the `nn.Sequential` model — IndexError.

Only library models are judged (a user `forward` can do anything), and every object must still be the
kernel's at the call.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ...models import Finding
from .. import torch_forward
from ..context import CellContext, argument, has_star_args, kwarg, line_of
from ..flow import Site
from ..view import ObjInfo, type_class, type_root

RULE = "shape-mismatch"

KERAS_SIZED_FIRST = frozenset({"Dense", "LSTM", "GRU", "SimpleRNN", "EinsumDense"})
KERAS_DATA_METHODS = frozenset({"fit", "predict", "evaluate", "predict_on_batch", "train_on_batch"})
ONE_HOT_LOSSES = frozenset({"categorical_crossentropy", "CategoricalCrossentropy", "binary_crossentropy",
                            "BinaryCrossentropy", "categorical_focal_crossentropy"})  # fmt: skip
# Keras 3 sparse cross-entropy (every backend's `sparse_categorical_crossentropy`): a target whose rank
# equals the output's is squeezed only when its last axis is 1; then its rank must be the output's - 1
# ("Argument `output` must have rank (ndim) `target.ndim - 1`").
SPARSE_LOSSES = frozenset({"sparse_categorical_crossentropy", "SparseCategoricalCrossentropy"})
# Convolutions check the channel axis (channels_last) of their input against the kernel they were built
# with: InputSpec(axes={-1: channels}).
KERAS_CONV = frozenset(
    {"Conv1D", "Conv2D", "Conv3D", "SeparableConv2D", "DepthwiseConv2D", "Conv2DTranspose"}
)
TORCH_CE_LOSSES = frozenset({"CrossEntropyLoss", "NLLLoss"})
TORCH_LAYERS = frozenset({"Linear", "Conv1d", "Conv2d", "Conv3d"})
TORCH_CE_FUNCTIONS = frozenset({"cross_entropy", "nll_loss"})


def _is_keras_model(info: ObjInfo) -> bool:
    return type_root(info.type) in ("keras", "tf_keras", "tensorflow") and type_class(info.type) in (
        "Sequential",
        "Functional",
        "Model",
    )


def _is_torch_sequential(info: ObjInfo) -> bool:
    return type_root(info.type) == "torch" and type_class(info.type) == "Sequential"


def _layers(ctx: CellContext, model: ObjInfo) -> list[ObjInfo]:
    return [info for expr in model.children if (info := ctx.view.get(expr)) is not None]


def _shape_text(shape: list[int | None] | list[object]) -> str:
    return (
        "("
        + ", ".join("None" if v is None else str(v) for v in shape)
        + ("," if len(shape) == 1 else "")
        + ")"
    )


# ----- Keras --------------------------------------------------------------------------------------------


def _keras_input(ctx: CellContext, site: Site, call: ast.Call, model: ObjInfo) -> Finding | None:
    shape = model.input_shape
    if shape is None or not shape or not all(v is None or isinstance(v, int) for v in shape):
        return None  # unknown, or several inputs
    if type_class(model.type) != "Sequential":
        return None  # in a functional model the first listed layer need not read the input
    layers = [layer for layer in _layers(ctx, model) if type_class(layer.type) != "InputLayer"]
    if not layers or type_class(layers[0].type) not in KERAS_SIZED_FIRST | KERAS_CONV:
        return None
    if type_class(layers[0].type) in KERAS_CONV and layers[0].raw.get("data_format") != "channels_last":
        return None
    x_node = argument(call, 0, "x")
    x = ctx.value_of(x_node, site) if x_node is not None else None
    if x is None or x.shape is None or not (x.is_ndarray or type_root(x.type) in ("tensorflow", "torch")):
        return None
    want, got = shape[-1], x.shape[-1]
    if len(x.shape) != len(shape) or not isinstance(want, int) or not isinstance(got, int) or want == got:
        return None
    return Finding(
        rule=RULE,
        message=(
            f"ValueError: {model.expr} expects inputs of shape {_shape_text(shape)} but {x.expr} has shape "
            f"{_shape_text(x.shape)}: its first layer ({type_class(layers[0].type)}) needs {want} values on "
            f"the last axis, not {got} (line {line_of(call)})."
        ),
        evidence=[
            f"{model.expr}.input_shape = {_shape_text(shape)}",
            f"{x.expr}.shape = {_shape_text(x.shape)}",
            f"first layer: {type_class(layers[0].type)}",
        ],
        line=line_of(call),
    )


def _keras_generator(ctx: CellContext, site: Site, call: ast.Call, model: ObjInfo) -> Finding | None:
    gen_node = argument(call, 0, "x")
    gen = ctx.value_of(gen_node, site) if gen_node is not None else None
    if gen is None or gen.num_classes is None or gen.class_mode != "categorical":
        return None
    out = model.output_shape
    if out is None or len(out) != 2 or not isinstance(out[-1], int) or model.loss not in ONE_HOT_LOSSES:
        return None
    if out[-1] == gen.num_classes:
        return None
    return Finding(
        rule=RULE,
        message=(
            f"ValueError: {gen.expr} yields one-hot targets of width {gen.num_classes} but {model.expr} "
            f"outputs {out[-1]} values per sample ({model.loss} needs equal shapes; line {line_of(call)})."
        ),
        evidence=[
            f"{gen.expr}.num_classes = {gen.num_classes}",
            f"{gen.expr}.class_mode = categorical",
            f"{model.expr}.output_shape = {_shape_text(out)}",
            f"{model.expr}.loss = {model.loss}",
        ],
        line=line_of(call),
    )


def _adjust_ranks(target: list[object], output: list[object]) -> tuple[list[object], list[object]]:
    """Keras' loss wrapper squeezes/expands a trailing axis of size 1 when the ranks differ by one."""
    if len(target) == len(output) + 1 and target[-1] == 1:
        return (target[:-1], output) if len(output) != 1 else (target, [*output, 1])
    if len(output) == len(target) + 1 and output[-1] == 1:
        return (target, output[:-1]) if len(target) != 1 else ([*target, 1], output)
    return target, output


def _keras_targets(ctx: CellContext, site: Site, call: ast.Call, model: ObjInfo) -> Finding | None:
    """`model.fit(X, y)`: sample counts that differ, or one-hot targets shaped unlike the output."""
    x_node = argument(call, 0, "x")
    y_node = argument(call, 1, "y")
    x = ctx.value_of(x_node, site) if x_node is not None else None
    y = ctx.value_of(y_node, site) if y_node is not None else None
    if y is None or y.shape is None or not (y.is_ndarray or y.is_("pandas", "Series", "DataFrame")):
        return None
    evidence = [f"{y.expr}.shape = {_shape_text(y.shape)}"]
    if (
        x is not None
        and x.shape
        and x.is_ndarray
        and x.shape[0] != y.shape[0]
        and "validation_split" not in [kw.arg for kw in call.keywords]
    ):
        return Finding(
            rule=RULE,
            message=(
                f"ValueError: Data cardinality is ambiguous: {x.expr} has {x.shape[0]} samples but "
                f"{y.expr} has {y.shape[0]} (line {line_of(call)})."
            ),
            evidence=[f"{x.expr}.shape = {_shape_text(x.shape)}", *evidence],
            line=line_of(call),
        )
    out = model.output_shape
    if out is None or not out or not all(v is None or isinstance(v, int) for v in out):
        return None
    if model.loss in SPARSE_LOSSES:
        return _sparse_targets(call, model, y, list(out))
    if model.loss not in ONE_HOT_LOSSES:
        return None
    target, output = _adjust_ranks(list(y.shape), list(out))
    if len(target) == len(output) and all(
        a == b for a, b in zip(target[1:], output[1:], strict=True) if a is not None and b is not None
    ):
        return None
    return Finding(
        rule=RULE,
        message=(
            f"ValueError: {model.loss} needs targets shaped like the model's output: {y.expr} is "
            f"{_shape_text(y.shape)}, {model.expr} outputs {_shape_text(out)} (line {line_of(call)})."
        ),
        evidence=[
            *evidence,
            f"{model.expr}.output_shape = {_shape_text(out)}",
            f"{model.expr}.loss = {model.loss}",
        ],
        line=line_of(call),
    )


def _sparse_targets(call: ast.Call, model: ObjInfo, y: ObjInfo, out: list[object]) -> Finding | None:
    """Sparse cross-entropy given one-hot (or otherwise wide) targets: class ids need one axis less."""
    assert y.shape is not None
    target = list(y.shape)
    if len(target) == len(out) and target[-1] == 1:
        target = target[:-1]
    if len(target) == len(out) - 1 or not isinstance(target[-1], int) or len(out) < 2:
        return None
    return Finding(
        rule=RULE,
        message=(
            f"ValueError: Argument `output` must have rank (ndim) `target.ndim - 1`: {model.loss} takes "
            f"integer class ids, but {y.expr} is {_shape_text(y.shape)} (one-hot?) and {model.expr} outputs "
            f"{_shape_text(out)} (use categorical_crossentropy, or argmax the targets; line {line_of(call)})."
        ),
        evidence=[
            f"{y.expr}.shape = {_shape_text(y.shape)}",
            f"{model.expr}.output_shape = {_shape_text(out)}",
            f"{model.expr}.loss = {model.loss}",
        ],
        line=line_of(call),
    )


# ----- torch --------------------------------------------------------------------------------------------


def _torch_first_layer(ctx: CellContext, site: Site, call: ast.Call, model: ObjInfo) -> Finding | None:
    """`model(X)` with X that the first Linear/Conv layer cannot take."""
    if len(call.args) != 1 or call.keywords:
        return None
    if type_class(model.type) in TORCH_LAYERS:
        first = model  # a layer called directly: `fc(x)`
    else:
        first_expr = f"{model.expr}[0]"
        if first_expr not in model.children:
            return None  # the first leaf must be the Sequential's own first element, not nested deeper
        found = ctx.view.get(first_expr)
        if found is None:
            return None
        first = found
    x = ctx.value_of(call.args[0], site)
    if x is None or not x.is_("torch", "Tensor") or x.shape is None:
        return None
    cls = type_class(first.type)
    evidence = [f"{x.expr}.shape = {_shape_text(x.shape)}", f"{x.expr}.dtype = {x.dtype}"]
    if (
        cls == "Linear"
        and isinstance(first.layer.get("in_features"), int)
        and x.shape
        and x.shape[-1] is not None
    ):
        want = first.layer["in_features"]
        if x.shape[-1] != want:
            return Finding(
                rule=RULE,
                message=(
                    f"RuntimeError: {first.expr} is Linear(in_features={want}) but {x.expr} has "
                    f"{x.shape[-1]} features on its last axis (line {line_of(call)})."
                ),
                evidence=[*evidence, f"{first.expr}.in_features = {want}"],
                line=line_of(call),
            )
    conv_dims = {"Conv1d": 1, "Conv2d": 2, "Conv3d": 3}.get(cls)
    if conv_dims is not None and isinstance(first.layer.get("in_channels"), int):
        want = first.layer["in_channels"]
        rank = len(x.shape)
        if rank in (conv_dims + 1, conv_dims + 2) and x.shape[-conv_dims - 1] not in (want, None):
            got = x.shape[-conv_dims - 1]
            return Finding(
                rule=RULE,
                message=(
                    f"RuntimeError: {first.expr} is {cls}(in_channels={want}) but {x.expr} of shape "
                    f"{_shape_text(x.shape)} has {got} channels (line {line_of(call)})."
                ),
                evidence=[*evidence, f"{first.expr}.in_channels = {want}"],
                line=line_of(call),
            )
    weight = first.layer.get("weight_dtype")
    if (
        cls in ("Linear", "Conv1d", "Conv2d", "Conv3d")
        and isinstance(weight, str)
        and x.dtype
        and x.dtype != weight
    ):
        return Finding(
            rule=RULE,
            message=(
                f"RuntimeError: {x.expr} is {x.dtype} but the weights of {first.expr} are {weight}; {cls} "
                f"needs both of the same dtype (line {line_of(call)})."
            ),
            evidence=[*evidence, f"{first.expr}.weight.dtype = {weight}"],
            line=line_of(call),
        )
    return None


def _is_ce(ctx: CellContext, site: Site, func: ast.expr) -> bool:
    if isinstance(func, ast.Attribute) and func.attr in TORCH_CE_FUNCTIONS:
        root = ast.unparse(func.value).split(".", 1)[0]
        module = ctx.view.modules.get(root)
        return module is not None and module.module.split(".", 1)[0] == "torch" and site.pristine(root)
    criterion = ctx.value_of(func, site)
    return (
        criterion is not None
        and type_root(criterion.type) == "torch"
        and type_class(criterion.type) in TORCH_CE_LOSSES
    )


def _torch_targets(ctx: CellContext, site: Site, call: ast.Call) -> Finding | None:
    if has_star_args(call) or len(call.args) != 2 or kwarg(call, "ignore_index") is not None:
        return None
    if not _is_ce(ctx, site, call.func):
        return None
    out, target = call.args
    if not (isinstance(out, ast.Call) and len(out.args) == 1 and not out.keywords):
        return None
    model = ctx.value_of(out.func, site)
    y = ctx.value_of(target, site)
    if model is None or y is None or not _is_torch_sequential(model) or not y.is_("torch", "Tensor"):
        return None
    if (y.device or "cpu") != "cpu" or model.raw.get("param_device", "cpu") != "cpu":
        return None  # on a GPU the assert surfaces later, as another error (rules/devices)
    n_out = torch_forward.classes(ctx.view, model)
    if (
        n_out is None
        or y.max is None
        or y.dtype not in ("int64", "long")
        or y.shape is None
        or len(y.shape) != 1
    ):
        return None
    if y.max < n_out:
        return None
    return Finding(
        rule=RULE,
        message=(
            f"IndexError: Target {int(y.max)} is out of bounds: {model.expr} has {n_out} outputs, so "
            f"cross-entropy accepts class indices 0..{n_out - 1} (line {line_of(call)})."
        ),
        evidence=[f"{y.expr}.max() = {int(y.max)}", f"{model.expr} outputs {n_out} classes (last Linear)"],
        line=line_of(call),
    )


def _not_compiled(ctx: CellContext, site: Site, call: ast.Call) -> Finding | None:
    """`model.fit(...)` on a Keras model that was never compiled: `_assert_compile_called` raises
    ValueError ("You must call `compile()` before using the model"). The model is a kernel model whose
    `compiled` fact is false, or one this cell builds and has not touched since (no compile call)."""
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr not in (
        "fit",
        "evaluate",
        "train_on_batch",
        "test_on_batch",
    ):
        return None
    model = ctx.value_of(func.value, site)
    how = ""
    if model is None:
        made = ctx.made_here(func.value, site)
        if made is None:
            return None
        model = made[0]
        how = (
            f"{ast.unparse(func.value)} is built in this cell ({ast.unparse(made[1])[:60]}) and not "
            "compiled since"
        )
        if type_root(model.type) not in ("keras", "tensorflow", "tf_keras"):
            return None
        if type_class(model.type) not in ("Sequential", "Model"):
            return None
    elif not (_is_keras_model(model) and model.compiled is False):
        return None
    else:
        how = f"{model.expr}.compiled = False"
    if site.caught(("ValueError",)):
        return None
    return Finding(
        rule="not-compiled",
        message=(
            "ValueError: You must call `compile()` before using the model: "
            f"{ast.unparse(func.value)}.{func.attr}() "
            f"on a model that was never compiled (line {line_of(call)})."
        ),
        evidence=[how],
        line=line_of(call),
    )


def check(ctx: CellContext) -> Iterator[Finding]:
    for site in ctx.certain(ast.Call):
        call = site.node
        assert isinstance(call, ast.Call)
        finding: Finding | None = _not_compiled(ctx, site, call)
        func = call.func
        if (
            finding is None
            and isinstance(func, ast.Attribute)
            and func.attr in KERAS_DATA_METHODS
            and not has_star_args(call)
        ):
            model = ctx.value_of(func.value, site)
            if model is not None and _is_keras_model(model) and not site.caught(("ValueError",)):
                finding = _keras_input(ctx, site, call, model)
                if finding is None and func.attr == "fit":
                    finding = _keras_generator(ctx, site, call, model)
                if finding is None and func.attr in ("fit", "evaluate", "train_on_batch"):
                    finding = _keras_targets(ctx, site, call, model)
        if finding is None and not site.caught(("RuntimeError",)):
            model = ctx.value_of(func, site) if isinstance(func, (ast.Name, ast.Attribute)) else None
            direct = (
                model is not None
                and type_root(model.type) == "torch"
                and type_class(model.type) in TORCH_LAYERS
            )
            if model is not None and (_is_torch_sequential(model) or direct):
                finding = _torch_first_layer(ctx, site, call, model)
        if finding is None and not site.caught(("IndexError",)):
            finding = _torch_targets(ctx, site, call)
        if finding is not None:
            yield finding
