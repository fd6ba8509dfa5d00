"""torch losses given targets they refuse, and embeddings given indices past their table.

loss-target, each from the check torch makes on the loss's code path:
- cross-entropy (`nn.CrossEntropyLoss`, `F.cross_entropy`): `cross_entropy_loss` in
  aten/src/ATen/native/LossNLL.cpp takes a target of the input's exact shape as class probabilities,
  which must be floating ("Expected floating point type for target with class probabilities, got
  Long"); any other target is class indices for `nll_loss`, whose `nll_loss_forward` meta function
  requires int64 or uint8 ("expected target dtype to be Long or Byte, but got Double"). So a target of
  one axis fewer than the input (the class-index form) that is floating, int32 or bool is refused, and
  an integer target of the input's shape is refused. RuntimeError.
- `nn.NLLLoss` / `F.nll_loss`: the same dtype check on a target of one axis fewer.
- `nn.BCELoss` / `F.binary_cross_entropy`: "Using a target size (...) that is different to the input
  size (...) is deprecated" (ValueError, checked in Python before anything else); with equal sizes the
  kernel needs the target in the input's dtype ("Found dtype Long but expected Float", RuntimeError).
- `nn.BCEWithLogitsLoss` / `F.binary_cross_entropy_with_logits`: "Target size (...) must be the same as
  input size (...)" (ValueError); with equal sizes a non-floating target cannot receive the float result
  (RuntimeError). MSELoss/L1Loss only warn and broadcast: not judged.
The input is a tensor the kernel holds, one the cell derives exactly, or `model(X)` of a trusted torch
model (checks/torch_forward.py); the loss a kernel module, one the cell builds (`criterion =
nn.CrossEntropyLoss()`), or the functional form.

embedding-index: `nn.Embedding` (a kernel module, or the first layer of a trusted Sequential) called on
integer indices whose largest value is >= num_embeddings or whose smallest is < 0: `embedding` ->
`index_select` checks every index on the CPU ("index out of range in self", IndexError). Presence
proves it: the probe's min/max are values it saw (on a sample for a big tensor), so only a value seen out
of range is claimed. On CUDA the check is a device-side assert that surfaces later: not judged here.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ...models import Finding
from .. import torch_forward
from ..context import CellContext, argument, has_star_args, line_of
from ..flow import Site
from ..view import ObjInfo, type_class, type_root

RULE = "loss-target"
RULE_LOSS = RULE
RULE_EMBEDDING = "embedding-index"

LOSS_MODULES = {
    "CrossEntropyLoss": "cross_entropy", "NLLLoss": "nll_loss", "BCELoss": "binary_cross_entropy",
    "BCEWithLogitsLoss": "binary_cross_entropy_with_logits",
}  # fmt: skip
FLOATING = frozenset({"float16", "bfloat16", "float32", "float64"})
CLASS_INDEX_DTYPES = frozenset({"int64", "uint8"})
TORCH_DTYPE_NAMES = {"float64": "Double", "float32": "Float", "float16": "Half", "bfloat16": "BFloat16",
                     "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
                     "bool": "Bool"}  # fmt: skip


def _shape_text(shape: list[int | None]) -> str:
    return "torch.Size([" + ", ".join(str(d) for d in shape) + "])"


def _loss_of(ctx: CellContext, site: Site, func: ast.expr) -> tuple[str, str] | None:
    """(functional name, how the cell names it) for a torch loss call."""
    if isinstance(func, (ast.Name, ast.Attribute)):
        path = ctx.class_path(func, site)
        if path is not None and path.split(".", 1)[0] == "torch":
            last = path.rsplit(".", 1)[-1]
            if last in LOSS_MODULES.values():
                return last, ast.unparse(func)
    loss = ctx.value_of(func, site)
    if loss is None or type_root(loss.type) != "torch" or type_class(loss.type) not in LOSS_MODULES:
        return None
    return LOSS_MODULES[type_class(loss.type)], f"{ast.unparse(func)} ({type_class(loss.type)})"


def _tensor(ctx: CellContext, site: Site, node: ast.expr | None) -> ObjInfo | None:
    info = ctx.value_of(node, site) if node is not None else None
    if info is None or not info.is_tensor or info.shape is None or info.dtype is None:
        return None
    if not all(isinstance(d, int) for d in info.shape):
        return None
    return info


def _judge(kind: str, x: ObjInfo, y: ObjInfo) -> tuple[str, str] | None:
    """(exception, message) when `kind` refuses target y for input x."""
    assert x.shape is not None and y.shape is not None and x.dtype is not None and y.dtype is not None
    got = TORCH_DTYPE_NAMES.get(y.dtype, y.dtype)
    if kind in ("cross_entropy", "nll_loss"):
        if len(y.shape) == len(x.shape) - 1 and len(x.shape) >= 1 and y.dtype not in CLASS_INDEX_DTYPES:
            return "RuntimeError", f"expected target dtype to be Long or Byte, but got {got}"
        if kind == "cross_entropy" and y.shape == x.shape and y.dtype not in FLOATING:
            return "RuntimeError", (
                f"Expected floating point type for target with class probabilities, got {got}"
            )
        return None
    if y.shape != x.shape:
        if kind == "binary_cross_entropy":
            return "ValueError", (
                f"Using a target size ({_shape_text(y.shape)}) that is different to the input size "
                f"({_shape_text(x.shape)}) is deprecated. Please ensure they have the same size."
            )
        return "ValueError", (
            f"Target size ({_shape_text(y.shape)}) must be the same as input size ({_shape_text(x.shape)})"
        )
    if kind == "binary_cross_entropy" and y.dtype != x.dtype and x.dtype in FLOATING:
        return "RuntimeError", f"Found dtype {got} but expected {TORCH_DTYPE_NAMES[x.dtype]}"
    if kind == "binary_cross_entropy_with_logits" and y.dtype not in FLOATING and x.dtype in FLOATING:
        return "RuntimeError", (
            f"result type {TORCH_DTYPE_NAMES[x.dtype]} can't be cast to the desired output type {got}"
        )
    return None


def judge_ranks(kind: str, x_ndim: int, y_ndim: int, y_dtype: str | None) -> tuple[str, str] | None:
    """(exception, message) when `kind` certainly refuses a target of y_ndim axes (dtype y_dtype) for an
    input of x_ndim axes: what the batches of a DataLoader tell (their sizes vary, their ranks do not);
    the walker of rules/devices asks."""
    if kind in ("cross_entropy", "nll_loss"):
        if y_ndim == x_ndim - 1 and x_ndim >= 1 and y_dtype is not None and y_dtype not in CLASS_INDEX_DTYPES:
            got = TORCH_DTYPE_NAMES.get(y_dtype, y_dtype)
            return "RuntimeError", f"expected target dtype to be Long or Byte, but got {got}"
        return None
    if kind in ("binary_cross_entropy", "binary_cross_entropy_with_logits") and y_ndim != x_ndim:
        return "ValueError", (
            "the target's size differs from the input's (BCE losses require the same size: "
            f"{y_ndim} axes against {x_ndim})"
        )
    return None


def _loss_target(ctx: CellContext, site: Site, call: ast.Call) -> Finding | None:
    if has_star_args(call):
        return None
    found = _loss_of(ctx, site, call.func)
    if found is None:
        return None
    kind, name = found
    x_node = argument(call, 0, "input")
    y_node = argument(call, 1, "target")
    x, y = _tensor(ctx, site, x_node), _tensor(ctx, site, y_node)
    if x is None or y is None or x.dtype not in FLOATING:
        return None
    judged = _judge(kind, x, y)
    if judged is None or site.caught((judged[0],)):
        return None
    exc, text = judged
    assert x.shape is not None and y.shape is not None
    form = {
        "cross_entropy": "class indices (one axis fewer than the input) must be int64; class "
        "probabilities (the input's shape) must be floating",
        "nll_loss": "class indices must be int64",
        "binary_cross_entropy": "the target must have the input's size and dtype",
        "binary_cross_entropy_with_logits": "the target must have the input's size and be floating",
    }[kind]
    return Finding(
        rule=RULE,
        message=f"{exc}: {text}: {name} gets {x.expr} and target {y.expr}; {form} (line {line_of(call)}).",
        evidence=[
            f"{x.expr}.shape = {tuple(x.shape)}, dtype {x.dtype}" + (f" ({x.derived})" if x.derived else ""),
            f"{y.expr}.shape = {tuple(y.shape)}, dtype {y.dtype}",
        ],
        line=line_of(call),
    )


def _embedding(ctx: CellContext, site: Site, call: ast.Call) -> Finding | None:
    if len(call.args) != 1 or call.keywords or not isinstance(call.func, (ast.Name, ast.Attribute)):
        return None
    model = ctx.value_of(call.func, site)
    if model is None or not torch_forward.trusted(model) or model.raw.get("param_device") != "cpu":
        return None
    layers = torch_forward.leaves(ctx.view, model)
    if not layers or type_class(layers[0].type) != "Embedding" or type_root(layers[0].type) != "torch":
        return None
    table = layers[0]
    n = table.raw.get("num_embeddings")
    idx = ctx.value_of(call.args[0], site)
    if not isinstance(n, int) or idx is None or not idx.is_tensor or idx.device != "cpu":
        return None
    if idx.dtype not in ("int64", "int32"):
        return None  # float indices: rule dtype-mismatch
    bad = (
        idx.max
        if idx.max is not None and idx.max >= n
        else idx.min
        if idx.min is not None and idx.min < 0
        else None
    )
    if bad is None or site.caught(("IndexError",)):
        return None
    where = "" if table is model else f" (its first layer, {table.expr})"
    return Finding(
        rule=RULE_EMBEDDING,
        message=(
            f"IndexError: index out of range in self: {model.expr}{where} is an Embedding of "
            f"{n} rows (indices 0..{n - 1}) but {idx.expr} holds {int(bad)} (line {line_of(call)})."
        ),
        evidence=[
            f"{table.expr}.num_embeddings = {n}",
            f"{idx.expr}.{'max' if bad >= n else 'min'}() = {int(bad)}",
        ],
        line=line_of(call),
    )


def check(ctx: CellContext) -> Iterator[Finding]:
    if not any(m.module.split(".", 1)[0] == "torch" for m in ctx.view.modules.values()):
        return
    for site in ctx.certain(ast.Call):
        call = site.node
        assert isinstance(call, ast.Call)
        finding = _loss_target(ctx, site, call) or _embedding(ctx, site, call)
        if finding is not None:
            yield finding
