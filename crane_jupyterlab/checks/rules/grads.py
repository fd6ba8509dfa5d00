"""RuntimeError: NumPy conversion of a torch model's output while autograd tracks it.

`model(X).numpy()` with autograd on and the model's parameters requiring grad: torch refuses
("Can't call numpy() on Tensor that requires grad"). Not judged when the cell switches autograd anywhere
(`torch.no_grad`, `inference_mode`, ...) or the call sits in a `with` block that may change it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ...models import Finding
from ..context import CellContext, line_of
from ..flow import Site
from ..view import ObjInfo, type_root

RULE = "shape-mismatch"


# Differentiable functions: their result requires grad when their input does.
GRAD_KEEPING = frozenset(
    {"softmax", "log_softmax", "sigmoid", "tanh", "relu", "exp", "log", "squeeze", "flatten"}
)
GRAD_SWITCHES = frozenset({"no_grad", "inference_mode", "set_grad_enabled", "enable_grad"})


def _grad_source(ctx: CellContext, site: Site, node: ast.expr) -> ObjInfo | None:
    """The library torch model whose output `node` is (directly or through differentiable functions)."""
    while isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, (ast.Name, ast.Attribute)) and len(node.args) >= 1:
            model = ctx.value_of(func, site)
            if (
                model is not None
                and type_root(model.type) == "torch"
                and "param_requires_grad" in model.layer
            ):
                return model if len(node.args) == 1 and not node.keywords else None
        if isinstance(func, ast.Attribute) and func.attr in GRAD_KEEPING:
            path = ctx.class_path(func, site)
            if path is not None and path.split(".")[0] == "torch" and node.args:
                node = node.args[0]  # torch.softmax(x, dim=1)
                continue
            if path is None and not node.args:
                node = func.value  # x.softmax(1) has args; x.sigmoid() has none
                continue
        return None
    return None


def _numpy_of_grad(ctx: CellContext, site: Site, call: ast.Call) -> Finding | None:
    """`model(X).numpy()` while autograd is on: the output requires grad."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr == "numpy") or call.args or call.keywords:
        return None
    torch = next((m for m in ctx.view.modules.values() if m.module == "torch"), None)
    if torch is None or torch.grad_enabled is not True:
        return None
    if any(
        (isinstance(n, ast.Name) and n.id in GRAD_SWITCHES)
        or (isinstance(n, ast.Attribute) and n.attr in GRAD_SWITCHES)
        for n in ast.walk(ctx.tree)
    ):
        return None  # the cell switches autograd somewhere: leave it
    if _inside_with(ctx.tree, call):
        return None
    model = _grad_source(ctx, site, func.value)
    if model is None or model.layer.get("param_requires_grad") is not True or site.caught(("RuntimeError",)):
        return None
    return Finding(
        rule=RULE,
        message=(
            f"RuntimeError: Can't call numpy() on Tensor that requires grad: the output of {model.expr} "
            f"tracks gradients (use .detach() or torch.no_grad(); line {line_of(call)})."
        ),
        evidence=[f"{model.expr} parameters require grad", "torch.is_grad_enabled() = True"],
        line=line_of(call),
    )


def _inside_with(tree: ast.Module, target: ast.AST) -> bool:
    """Whether a `with` block that may change autograd or dtypes (anything but the contexts known to
    leave computation alone, such as warnings.catch_warnings) encloses `target`."""
    for node in ast.walk(tree):
        if (
            isinstance(node, (ast.With, ast.AsyncWith))
            and any(sub is target for stmt in node.body for sub in ast.walk(stmt))
            and not all(_leaves_computation(item.context_expr) for item in node.items)
        ):
            return True
    return False


def _leaves_computation(expr: ast.expr) -> bool:
    func = expr.func if isinstance(expr, ast.Call) else expr
    last = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return last in (
        "catch_warnings",
        "open",
        "tqdm",
        "redirect_stdout",
        "redirect_stderr",
        "TemporaryDirectory",
    )


def check(ctx: CellContext) -> Iterator[Finding]:
    for site in ctx.certain(ast.Call):
        call = site.node
        assert isinstance(call, ast.Call)
        finding = _numpy_of_grad(ctx, site, call)
        if finding is not None:
            yield finding
