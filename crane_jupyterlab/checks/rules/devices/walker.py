"""The device walker: the cell followed statement by statement (assignments, loops for their first
iteration, `with` blocks that turn autograd off or autocast on), its expressions evaluated operands
first, each operation judged as it is met."""

from __future__ import annotations

import ast
from dataclasses import replace

from ...context import has_star_args
from ...flow import PURE_BUILTINS, PURE_METHODS, _context_is_plain, _may_jump, root_name
from .evaluation import Evaluator
from .syntax import callee_name, const_bool, const_int, has_call, number_literal, walk_scope
from .values import (
    AUTOCAST,
    DEVICE_NAME,
    ELEMENTWISE_OPS,
    GRAD_OFF,
    MODULE_MUTATING,
    MODULE_READS,
    SKLEARN_METHODS,
    Device,
    Dtype,
    Items,
    Library,
    Loader,
    Module,
    Tensor,
    Value,
    device_type,
    dtype_name,
    is_floating,
    renamed,
)


class Walker(Evaluator):
    """Statements and expressions in the order they run; `check` starts it on the cell's body."""

    # ----- statements -----------------------------------------------------------------------------
    def block(self, body: list[ast.stmt], certain: bool) -> None:
        for stmt in body:
            self.stmt(stmt, certain)

    def stmt(self, node: ast.stmt, certain: bool) -> None:
        if not certain:
            self.forget(node)
            return
        if isinstance(node, ast.Assign):
            value = self.ev(node.value)
            for target in node.targets:
                self.store(target, value)
        elif isinstance(node, ast.AugAssign):
            left: Value = None
            if isinstance(node.target, ast.Name):
                name = node.target.id
                left = self.env[name] if name in self.env else self.kernel_name(name, node.value)
            right = self.ev(node.value)
            if (
                isinstance(left, Tensor)
                and isinstance(right, Tensor)
                and isinstance(node.op, ELEMENTWISE_OPS)
            ):
                self.elementwise(node.value, left, right)
            if isinstance(left, Tensor) and isinstance(node.target, ast.Name):
                self.env[node.target.id] = replace(left, max=None)  # in place: device and dtype stay
            else:
                self.store(node.target, None)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            self.store(node.target, self.ev(node.value))
        elif isinstance(node, ast.Expr | ast.Return) and node.value is not None:
            self.ev(node.value)
        elif isinstance(node, ast.If | ast.While):
            self.ev(node.test)
            site = self.site(node.test)
            truth = self.ctx.values.truth(node.test, site) if site is not None else None
            if isinstance(node, ast.If) and truth is not None:
                self.block(node.body if truth else node.orelse, True)  # a branch the runtime decides
            elif isinstance(node, ast.While) and truth is True:
                self.first_pass(node.body)
                self.forget(node)
            else:
                self.forget(node)
        elif isinstance(node, ast.For):
            self.loop(node)
        elif isinstance(node, ast.With):
            self.with_(node)
        elif isinstance(node, ast.Try):
            self.block(node.body, True)
            for part in (*node.handlers, *node.orelse, *node.finalbody):
                self.forget(part)
        else:
            self.forget(node)

    def forget(self, node: ast.AST) -> None:
        """Names a statement that may or may not run could bind or change: unknown from here on."""
        if any(isinstance(sub, ast.Call) and not self.library_callee(sub) for sub in walk_scope(node)):
            self.barrier = True
        for sub in walk_scope(node):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store | ast.Del):
                self.env[sub.id] = None
            elif isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                self.env[sub.name] = None
            elif isinstance(sub, ast.Import | ast.ImportFrom):
                for alias in sub.names:
                    self.env[alias.asname or alias.name.split(".")[0]] = None
            elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute):
                name = root_name(sub.func.value)
                if sub.func.attr in MODULE_MUTATING:
                    self.modules_moved()  # a module's .to()/.half() in a branch: every module is open
                elif (
                    name is not None
                    and sub.func.attr not in MODULE_READS | PURE_METHODS
                    and not isinstance(self.lookup_name(name), Tensor)
                ):
                    self.spoil(name)
            elif isinstance(sub, ast.Attribute | ast.Subscript) and isinstance(sub.ctx, ast.Store):
                name = root_name(sub)
                if name is not None:
                    self.spoil(name)

    def store(self, target: ast.expr, value: Value) -> None:
        if isinstance(target, ast.Name):
            self.env[target.id] = renamed(value, target.id)
        elif isinstance(target, ast.Tuple | ast.List):
            items = value.values if isinstance(value, Items) else ()
            if len(items) != len(target.elts) or any(isinstance(e, ast.Starred) for e in target.elts):
                items = (None,) * len(target.elts)
            for elt, item in zip(target.elts, items, strict=True):
                self.store(elt, item)
        elif isinstance(target, ast.Starred):
            self.store(target.value, None)
        else:  # x[i] = v keeps a tensor's device and dtype; model.fc = ... changes a model
            name = root_name(target)
            if isinstance(target, ast.Subscript):
                self.ev(target.value)
                self.ev(target.slice)
            held = self.lookup_name(name) if name is not None else None
            if name is not None and isinstance(target, ast.Subscript) and isinstance(held, Tensor):
                self.env[name] = replace(held, max=None)  # x[i] = v: same device and dtype, other values
            elif name is not None:
                self.spoil(name)  # a kernel tensor's values changed, or a model's parts

    def loop(self, node: ast.For) -> None:
        site = self.site(node.iter)
        plain = isinstance(node.iter, ast.Name | ast.List | ast.Tuple)  # iterating runs no notebook code
        elements = self.elements(node.iter)
        if elements is None and plain and site is not None and self.ctx.values.nonempty(node.iter, site):
            elements = (None, False)  # a kernel list or literal with a first element the rules do not model
        if elements is None:
            self.barrier = True  # iterating it may run the notebook's code (a generator, a Dataset)
            self.forget(node)
            return
        first, full_pass = elements
        self.store(node.target, first)
        saved = self.full_pass
        self.full_pass = full_pass and not any(_may_jump(stmt) for stmt in node.body) and not node.orelse
        self.first_pass(node.body)
        self.full_pass = saved
        self.forget(node)  # later iterations and the names they leave are not followed

    def first_pass(self, body: list[ast.stmt]) -> None:
        """The first run of a loop body, up to anything that may leave it early."""
        certain = True
        for stmt in body:
            self.stmt(stmt, certain)
            if _may_jump(stmt):
                certain = False

    def elements(self, node: ast.expr) -> tuple[Value, bool] | None:
        """(the first element, whether the loop visits every batch of a loader) when there certainly is
        a first element; None otherwise. Evaluates `node`."""
        func = node.func if isinstance(node, ast.Call) else None
        if isinstance(func, ast.Name) and func.id in ("enumerate", "range") and func.id not in self.env:
            assert isinstance(node, ast.Call)
            if func.id == "enumerate" and len(node.args) == 1 and not node.keywords:
                found = self.elements(node.args[0])
                return (Items((None, found[0])), found[1]) if found is not None else None
            for arg in node.args:
                self.ev(arg)
            bounds = [const_int(a) for a in node.args]
            if func.id != "range" or node.keywords or not 1 <= len(bounds) <= 2 or None in bounds:
                return None
            lo, hi = (0, bounds[0]) if len(bounds) == 1 else (bounds[0], bounds[1])
            return (None, False) if isinstance(lo, int) and isinstance(hi, int) and hi > lo else None
        it = self.ev(node)
        if isinstance(it, Loader) and it.nonempty:
            return Items(it.batch), it.full_pass
        if isinstance(node, ast.List | ast.Tuple) and node.elts and isinstance(it, Items):
            return (it.values[0] if not any(isinstance(e, ast.Starred) for e in node.elts) else None), False
        return None

    def with_(self, node: ast.With) -> None:
        grad, autocast = self.grad, self.autocast
        plain = True
        for item in node.items:
            self.ev(item.context_expr)
            name = callee_name(item.context_expr)
            if name in GRAD_OFF:
                self.grad = False
            elif name == "enable_grad":
                self.grad = True
            elif name == "set_grad_enabled":
                self.grad = const_bool(item.context_expr)
            elif name in AUTOCAST:
                if const_bool(item.context_expr, "enabled") is not False:
                    self.autocast = True
            elif not _context_is_plain(item.context_expr):
                plain = False
            if item.optional_vars is not None:
                self.store(item.optional_vars, None)
        self.block(node.body, plain)
        self.grad, self.autocast = grad, autocast

    # ----- expressions ----------------------------------------------------------------------------
    def ev(self, node: ast.expr) -> Value:
        """Evaluate `node` (a certain site): its operands first, then the checks, then its value."""
        if isinstance(node, ast.Name | ast.Attribute) and not has_call(node):
            value = self.lookup(node)
            if value is not None or isinstance(node, ast.Name):
                return value
        if isinstance(node, ast.Attribute):
            base = self.ev(node.value)
            if isinstance(base, Tensor):
                if node.attr in ("T", "mT", "H"):
                    return replace(base, name=ast.unparse(node))
                if node.attr == "data":
                    return replace(base, name=ast.unparse(node), requires_grad=False)
                if node.attr == "device" and base.device is not None:
                    return Device(base.device)
                return None
            if isinstance(node.value, ast.Name) and node.value.id not in self.env:
                dtype = self.torch_attr(node)
                if dtype is not None:
                    return dtype
            return None
        if isinstance(node, ast.Subscript):
            return self.subscript(node)
        if isinstance(node, ast.BinOp):
            return self.binop(node)
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.Tuple | ast.List):
            return Items(tuple(self.ev(e) for e in node.elts))
        if isinstance(node, ast.Constant):
            if isinstance(node.value, str) and DEVICE_NAME.match(node.value):
                return Device(node.value)
            return None
        if isinstance(node, ast.IfExp):
            self.ev(node.test)
            return None
        if isinstance(node, ast.BoolOp):
            self.ev(node.values[0])
            return None
        if isinstance(node, ast.Compare):
            left = self.ev(node.left)
            right = self.ev(node.comparators[0])
            for side in (left, right):
                if isinstance(side, Tensor) and len(node.ops) == 1:
                    if isinstance(left, Tensor) and isinstance(right, Tensor):
                        self.elementwise(node, left, right)
                    return Tensor(name=ast.unparse(node), device=side.device, dtype="bool", ndim=side.ndim)
            return None
        if isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
            self.ev(node.generators[0].iter)
            return None
        if isinstance(node, ast.Lambda):
            return None
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self.ev(child)
        return None

    def torch_attr(self, node: ast.Attribute) -> Value:
        """`torch.float16` and friends."""
        site = self.site(node)
        path = self.ctx.class_path(node, site) if site is not None else None
        if path is not None and path.startswith("torch.") and path.count(".") == 1:
            dtype = dtype_name(path)
            return Dtype(dtype) if dtype else None
        return None

    def subscript(self, node: ast.Subscript) -> Value:
        if not has_call(node):
            value = self.lookup(node)
            if value is not None:
                return value
        base = self.ev(node.value)
        index = self.ev(node.slice)
        if not isinstance(base, Tensor):
            return None
        indices = index.values if isinstance(index, Items) else (index,)
        if any(self.index_error(node, base, idx) for idx in indices):
            return None
        return replace(base, name=ast.unparse(node), ndim=None, max=None, classes=None)

    def binop(self, node: ast.BinOp) -> Value:
        left, right = self.ev(node.left), self.ev(node.right)
        number = number_literal(node.right) if isinstance(left, Tensor) else number_literal(node.left)
        tensor = left if isinstance(left, Tensor) else right
        if isinstance(tensor, Tensor) and number is not None and isinstance(node.op, ELEMENTWISE_OPS):
            # with a Python number: same device; an int tensor meeting a float becomes float
            promotes = isinstance(number, float) or isinstance(node.op, ast.Div)
            dtype = tensor.dtype if not promotes or is_floating(tensor.dtype) else None
            return replace(
                tensor, name=ast.unparse(node), dtype=dtype, max=None, classes=None, every_batch=False,
                requires_grad=self.grad_of(tensor.requires_grad),
            )  # fmt: skip
        if not (isinstance(left, Tensor) and isinstance(right, Tensor)):
            return None
        if isinstance(node.op, ast.MatMult):
            return self.matmul(node, left, right)
        if isinstance(node.op, ELEMENTWISE_OPS):
            return self.elementwise(node, left, right)
        return None

    def call(self, node: ast.Call) -> Value:
        func = node.func
        receiver: Value = None
        callee: Value = None
        if isinstance(func, ast.Attribute):
            callee = self.lookup(func) if not has_call(func) else None  # model.fc: a kernel submodule
            if not isinstance(callee, Module):
                receiver = self.ev(func.value)
        else:  # a name, or `model[0]`
            callee = self.ev(func)
        args = [self.ev(a.value if isinstance(a, ast.Starred) else a) for a in node.args]
        kwargs = {kw.arg: self.ev(kw.value) for kw in node.keywords if kw.arg is not None}
        if has_star_args(node):
            self.after_unknown_call(node)
            return None
        if isinstance(callee, Module):
            return self.module_call(node, callee, args, kwargs)
        if isinstance(func, ast.Attribute) and isinstance(receiver, Tensor):
            return self.tensor_method(node, func.attr, receiver, args, kwargs)
        if isinstance(func, ast.Attribute) and isinstance(receiver, Module):
            return self.module_method(node, func, receiver, args, kwargs)
        if isinstance(func, ast.Attribute) and isinstance(receiver, Library):
            return self.library_call(node, f"{receiver.path}().{func.attr}", args, kwargs)
        path = self.path(func)
        if path is not None:
            return self.library_call(node, path, args, kwargs)
        if isinstance(func, ast.Name) and func.id not in self.env and func.id in PURE_BUILTINS:
            if func.id in ("float", "int", "bool", "print") and any(
                isinstance(a, Tensor) and device_type(a.device or "") == "cuda" for a in args
            ):
                self.sync(node)
            return None
        if isinstance(func, ast.Attribute) and func.attr in SKLEARN_METHODS and self.sklearn_converts:
            estimator = self.sklearn_estimator(func.value)
            tensors = [a for a in args if isinstance(a, Tensor)]
            if estimator is not None and tensors:
                self.to_numpy(node, tensors, f"{estimator}.{func.attr}")
                return None
        self.after_unknown_call(node)
        return None
