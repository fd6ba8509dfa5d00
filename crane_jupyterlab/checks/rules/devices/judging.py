"""The device rules' judgements: the preconditions torch checks (one device per kernel, one dtype per
matrix product or layer, NumPy conversion off the CPU or with grad, class indices in range) and the
findings' messages. The evaluating half (evaluation.py) calls these where an operation meets tensors."""

from __future__ import annotations

import ast

from ... import torch_forward
from ...context import line_of
from ...view import type_class
from ..losses import LOSS_MODULES, RULE_LOSS, judge_ranks
from .state import Found, WalkerState
from .values import (
    CE_FUNCTIONS,
    CE_LOSSES,
    DEVICE_CHECKED,
    DTYPE_KEEPING,
    MATMUL_LAYERS,
    RNN_LAYERS,
    RULE_DEVICE,
    RULE_DTYPE,
    RULE_LABELS,
    RULE_NUMPY,
    Kwargs,
    Module,
    Tensor,
    Value,
    common_device,
    device_type,
    differ,
    either,
    evidence_of,
    is_floating,
    off_cpu,
)


class Judge(WalkerState):
    """Operations judged against torch's preconditions: each reports a Found or returns the result."""

    def device_error(self, node: ast.AST, tensors: list[Tensor], what: str) -> None:
        devices = ", ".join(f"{t.name} on {t.device}" for t in tensors)
        self.report(
            node,
            Found(
                RULE_DEVICE,
                f"RuntimeError: Expected all tensors to be on the same device: {what} are on different "
                f"devices ({devices}; line {line_of(node)}).",
                evidence_of(*tensors),
                line_of(node),
                "RuntimeError",
            ),
        )

    def index_error(self, node: ast.Subscript, base: Tensor, idx: Value) -> bool:
        """A CPU tensor indexed by a tensor on another device (CUDA indices may index only a CUDA tensor;
        CPU indices may index any). True when the precondition is broken: the subscript has no value."""
        if (
            isinstance(idx, Tensor)
            and base.device is not None
            and device_type(base.device) == "cpu"
            and differ(base.device, idx.device)
            and (idx.ndim or 0) >= 1
        ):
            self.report(
                node,
                Found(
                    RULE_DEVICE,
                    f"RuntimeError: indices should be either on cpu or on the same device as the "
                    f"indexed tensor (cpu): {base.name} is on the CPU, {idx.name} on {idx.device} "
                    f"(line {line_of(node)}).",
                    evidence_of(base, idx),
                    line_of(node),
                    "RuntimeError",
                ),
            )
            return True
        return False

    def elementwise(self, node: ast.AST, a: Tensor, b: Tensor) -> Value:
        # A 0-dim CPU tensor is a "CPU scalar" that TensorIterator lets through with any device.
        if differ(a.device, b.device) and (a.ndim or 0) >= 1 and (b.ndim or 0) >= 1:
            self.device_error(node, [a, b], "the operands of an elementwise operation")
            return None
        return Tensor(
            name=ast.unparse(node) if isinstance(node, ast.expr) else a.name,
            device=common_device(a.device, b.device),
            dtype=a.dtype if a.dtype == b.dtype else None,
            ndim=max(a.ndim, b.ndim) if a.ndim is not None and b.ndim is not None else None,
            requires_grad=either(a.requires_grad, b.requires_grad) if self.grad else self.grad_of(None),
        )

    def matmul(self, node: ast.AST, a: Tensor, b: Tensor) -> Value:
        if differ(a.device, b.device):
            self.device_error(node, [a, b], "the operands of a matrix product")
            return None
        if (
            self.autocast is False
            and a.dtype is not None
            and b.dtype is not None
            and a.dtype != b.dtype
            and (is_floating(a.dtype) or is_floating(b.dtype))
        ):
            self.report(
                node,
                Found(
                    RULE_DTYPE,
                    f"RuntimeError: a matrix product needs operands of one dtype: {a.name} is {a.dtype}, "
                    f"{b.name} is {b.dtype} (matmul does not promote; line {line_of(node)}).",
                    evidence_of(a, b),
                    line_of(node),
                    "RuntimeError",
                ),
            )
            return None
        return Tensor(
            name=ast.unparse(node) if isinstance(node, ast.expr) else a.name,
            device=common_device(a.device, b.device),
            dtype=a.dtype if a.dtype == b.dtype else None,
            requires_grad=either(a.requires_grad, b.requires_grad) if self.grad else self.grad_of(None),
        )

    def module_call(self, node: ast.Call, m: Module, args: list[Value], kwargs: Kwargs) -> Value:
        if m.loss:
            return self.loss(node, m.cls, m, args, kwargs)
        if not m.trusted:
            self.barrier = True  # its forward is the notebook's code
            return None
        if len(args) != 1 or kwargs or not isinstance(args[0], Tensor):
            return None
        x = args[0]
        cls, weight_dtype, before = m.first if m.first is not None else ("", None, ())
        # Embedding is judged one way only, weights on the GPU and indices on the CPU (seen to crash).
        checked = cls in DEVICE_CHECKED or (cls == "Embedding" and device_type(x.device or "") == "cpu")
        if m.device is not None and checked and differ(m.device, x.device):
            self.report(
                node,
                Found(
                    RULE_DEVICE,
                    f"RuntimeError: {m.name}'s parameters are on {m.device} but its input {x.name} is on "
                    f"{x.device}; its first layer ({cls}) needs both on one device (line {line_of(node)}).",
                    [f"{m.name} parameters are on {m.device}", *evidence_of(x)],
                    line_of(node),
                    "RuntimeError",
                ),
            )
            return None
        keeps = all(b in DTYPE_KEEPING for b in before)
        if self.autocast is False and keeps and x.dtype is not None:
            message: str | None = None
            exc = "RuntimeError"
            if cls in MATMUL_LAYERS and weight_dtype is not None and x.dtype != weight_dtype:
                message = (
                    f"RuntimeError: {x.name} is {x.dtype} but the weights of {m.name}'s first layer "
                    f"({cls}) are {weight_dtype}; {cls} needs its input in its weights' dtype"
                )
            elif cls in RNN_LAYERS and weight_dtype is not None and x.dtype != weight_dtype:
                message = (
                    f"ValueError: RNN input dtype ({x.dtype}) does not match weight dtype ({weight_dtype}) "
                    f"of {m.name}"
                )
                exc = "ValueError"
            elif cls == "Embedding" and not before and x.dtype not in ("int64", "int32"):
                message = (
                    f"RuntimeError: {m.name} is an Embedding: its indices must be int64 or int32, "
                    f"{x.name} is {x.dtype}"
                )
            if message is not None:
                self.report(
                    node,
                    Found(
                        RULE_DTYPE,
                        f"{message} (line {line_of(node)}).",
                        [f"{m.name} first layer {cls} weight dtype {weight_dtype}", *evidence_of(x)],
                        line_of(node),
                        exc,
                    ),
                )
                return None
        info = self.ctx.view.get(m.name)
        layers = torch_forward.leaves(self.ctx.view, info) if info is not None else None
        return Tensor(
            name=ast.unparse(node),
            device=m.device,
            dtype=m.dtype if cls in MATMUL_LAYERS | RNN_LAYERS else None,
            ndim=x.ndim,
            ndim_exact=x.ndim_exact
            and info is not None
            and torch_forward.trusted(info)
            and bool(layers)
            and all(
                type_class(layer.type) in torch_forward.SAME_SHAPE | {"Linear"} for layer in layers or []
            ),
            requires_grad=self.grad_of(True if m.requires_grad else None),
            classes=m.classes,
            origin=f"{ast.unparse(node)} is on {m.device} (the parameters of {m.name})",
        )

    def loss(self, node: ast.Call, cls: str, m: Module | None, args: list[Value], kwargs: Kwargs) -> Value:
        out, target = (args[0], args[1]) if len(args) == 2 else (None, None)
        if not isinstance(out, Tensor) or not isinstance(target, Tensor):
            return None
        if differ(out.device, target.device) and (out.ndim or 0) >= 1 and (target.ndim or 0) >= 1:
            self.device_error(node, [out, target], f"the input and target of {cls}")
            return None
        if out.ndim is not None and target.ndim is not None and out.ndim_exact and target.ndim_exact:
            judged = judge_ranks(LOSS_MODULES.get(cls, cls), out.ndim, target.ndim, target.dtype)
            if judged is not None:
                exc, text = judged
                self.report(
                    node,
                    Found(
                        RULE_LOSS,
                        f"{exc}: {text}: {cls} gets {out.name} ({out.ndim} axes) and target {target.name} "
                        f"({target.ndim} axes, {target.dtype}) (line {line_of(node)}).",
                        [
                            f"{out.name} has {out.ndim} axes",
                            f"{target.name} has {target.ndim} axes, dtype {target.dtype}",
                            *([target.origin] if target.origin else []),
                        ],
                        line_of(node),
                        exc,
                    ),
                )
                return None
        ignore = m.ignore_index if m is not None else None
        if "ignore_index" in {kw.arg for kw in node.keywords}:
            return None
        ignore = -100 if ignore is None and m is None else ignore
        if (
            cls in CE_LOSSES | CE_FUNCTIONS
            and out.classes is not None
            and target.max is not None
            and target.dtype == "int64"
            and target.max >= out.classes
            and target.max != ignore
            and (not target.every_batch or self.full_pass)
            and out.device is not None
            and target.device is not None
            and device_type(out.device) == device_type(target.device)
            and not differ(out.device, target.device)
        ):
            evidence = [
                f"{target.name} holds the label {int(target.max)}",
                f"{out.name} has {out.classes} classes (the last Linear of the model)",
            ]
            if device_type(out.device) == "cpu":
                self.report(
                    node,
                    Found(
                        RULE_LABELS,
                        f"IndexError: Target {int(target.max)} is out of bounds: the model has "
                        f"{out.classes} outputs, so {cls} accepts class indices 0..{out.classes - 1} "
                        f"(line {line_of(node)}).",
                        evidence,
                        line_of(node),
                        "IndexError",
                    ),
                )
            elif device_type(out.device) == "cuda":
                self.pending.append((f"{cls} at line {line_of(node)}", evidence))
        return Tensor(
            name=ast.unparse(node),
            device=common_device(out.device, target.device),
            dtype=out.dtype,
            ndim=0,
            requires_grad=self.grad_of(out.requires_grad),
        )

    def sync(self, node: ast.AST) -> None:
        """A call that waits for the GPU: a device-side assert queued before it raises here."""
        if not self.pending:
            return
        where, evidence = self.pending[0]
        self.pending.clear()
        self.report(
            node,
            Found(
                RULE_LABELS,
                f"AcceleratorError: CUDA error: device-side assert triggered: a class index is out of range "
                f"in {where}; the GPU reports it when this line waits for it (line {line_of(node)}).",
                evidence,
                line_of(node),
                "RuntimeError",
            ),
        )

    def to_numpy(self, node: ast.AST, tensors: list[Tensor], what: str) -> None:
        for t in tensors:
            if off_cpu(t.device):
                self.report(
                    node,
                    Found(
                        RULE_NUMPY,
                        f"TypeError: can't convert {t.device} device type tensor to numpy: {what} needs "
                        f"{t.name} on the CPU (.cpu() first; line {line_of(node)}).",
                        evidence_of(t),
                        line_of(node),
                        "TypeError",
                    ),
                )
                return
        for t in tensors:
            if t.requires_grad is True and self.grad is True and device_type(t.device or "") == "cpu":
                self.report(
                    node,
                    Found(
                        RULE_NUMPY,
                        f"RuntimeError: Can't call numpy() on Tensor that requires grad: {what} converts "
                        f"{t.name}, which tracks gradients (.detach() first; line {line_of(node)}).",
                        [f"{t.name} requires grad", "torch.is_grad_enabled() = True"],
                        line_of(node),
                        "RuntimeError",
                    ),
                )
                return
