"""How names and calls become abstract values: kernel names read while the cell cannot have changed
them, tensor methods that keep, move or cast, module methods, library calls (torch functions and
factories, NumPy and scikit-learn conversions), and when a call may run the notebook's own code."""

from __future__ import annotations

import ast
import builtins
from dataclasses import replace

from ....kernel.probe.safe import TRUSTED_ROOTS
from ...context import kwarg
from ...flow import DYNAMIC_BUILTINS, root_name
from ...view import BUILTIN_VALUE_TYPES, type_root
from .judging import Judge
from .kernel import from_kernel
from .syntax import const_bool, const_int, has_call
from .values import (
    CAST_METHODS,
    CAT_FUNCTIONS,
    ELEMENTWISE_METHODS,
    FACTORIES,
    INDEX_RESULT_METHODS,
    KEEPING_FUNCTIONS,
    KEEPING_METHODS,
    MATMUL_METHODS,
    MODULE_MUTATING,
    MODULE_READS,
    NUMPY_CONVERTING,
    NUMPY_TO_TORCH,
    PAIR_LOSS_FUNCTIONS,
    PAIR_LOSSES,
    SAME_VALUES,
    SKLEARN_METRICS,
    SYNC_METHODS,
    Device,
    Dtype,
    Items,
    Kwargs,
    Library,
    Loader,
    Module,
    Tensor,
    Value,
    common_device,
    device_type,
    differ,
    is_floating,
)


class Evaluator(Judge):
    """Names and calls to abstract values, judging through Judge where a call meets its precondition."""

    def lookup(self, node: ast.expr) -> Value:
        """The value of a name or a constant attribute/subscript chain, from the cell or the kernel."""
        name = root_name(node)
        if name is None:
            return None
        if name in self.env:
            return self.env[name] if isinstance(node, ast.Name) else None
        site = self.site(node)
        if site is None or self.barrier or name in self.spoiled or name in self.ctx.view.undefined:
            return None
        if any(isinstance(sub, ast.Call) for sub in ast.walk(node)):
            return None
        info = self.ctx.view.get(ast.unparse(node))
        value = from_kernel(self.ctx.view, info) if info is not None and not info.missing else None
        return None if isinstance(value, Module) and self.modules_open else value

    def kernel_name(self, name: str, near: ast.AST) -> Value:
        """A kernel name read where `near` is evaluated (for nodes the flow has no site of)."""
        site = self.site(near)
        if site is None or self.barrier or name in self.spoiled or name in self.ctx.view.undefined:
            return None
        info = self.ctx.view.get(name)
        value = from_kernel(self.ctx.view, info) if info is not None and not info.missing else None
        return None if isinstance(value, Module) and self.modules_open else value

    def path(self, func: ast.expr) -> str | None:
        site = self.site(func)
        if site is None or has_call(func):
            return None
        name = root_name(func)
        if name is None or (name in self.env and site.imported(name) is None):
            return None
        path = self.ctx.class_path(func, site)
        if path is None:
            info = self.ctx.view.get(ast.unparse(func))
            path = info.path if info is not None else None
        return path

    def sklearn_estimator(self, node: ast.expr) -> str | None:
        """The name of a scikit-learn estimator `node` denotes (the kernel's, or built in this cell)."""
        site = self.site(node)
        if site is None or (has_call(node) and not isinstance(node, ast.Call)):
            return None
        if isinstance(node, ast.Name) and node.id not in self.env:
            info = self.ctx.view.get(node.id)
            if info is not None and info.is_sklearn and not self.barrier and node.id not in self.spoiled:
                return node.id
            return None
        made = self.ctx.made_here(node, site)
        if made is not None and type_root(made[0].type) == "sklearn":
            return ast.unparse(node)
        return None

    def after_unknown_call(self, node: ast.Call) -> None:
        """A call we cannot follow may move a module passed to it (or run code that moves any)."""
        if not self.library_callee(node):
            self.barrier = True
        for arg in [*node.args, *(kw.value for kw in node.keywords)]:
            value = arg.value if isinstance(arg, ast.Starred) else arg
            if isinstance(value, ast.Name) and not isinstance(self.lookup_name(value.id), Tensor):
                self.spoil(value.id)
        func = node.func
        if isinstance(func, ast.Attribute):
            name = root_name(func.value)
            held = self.lookup(func.value) if name is not None and not has_call(func.value) else None
            if name is not None and not isinstance(held, Tensor):
                self.spoil(name)

    def library_callee(self, node: ast.Call) -> bool:
        """The call runs library code only: its callee is a library's (a kernel module alias, an import of
        this cell, a kernel object of a trusted library) and no argument may be a callable of the user's."""
        func = node.func
        name = root_name(func)
        site = self.site(node)
        if name is None or site is None:
            return False
        if name in self.env:
            if site.imported(name) is None and not isinstance(
                self.env[name], Tensor | Module | Loader | Library
            ):
                return False
            if isinstance(self.env[name], Module) and not self.env[name].trusted:  # type: ignore[union-attr]
                return False
        elif name in DYNAMIC_BUILTINS or not (hasattr(builtins, name) or self.ctx.view.is_library(name)):
            return False
        for arg in [*node.args, *(kw.value for kw in node.keywords)]:
            value = arg.value if isinstance(arg, ast.Starred) else arg
            if isinstance(value, ast.Lambda):
                return False
            if isinstance(value, ast.Name):
                known = self.env.get(value.id) if value.id in self.env else None
                if value.id in self.env and known is None and site.imported(value.id) is None:
                    return False  # bound in this cell to something we cannot name: maybe a function
                if value.id not in self.env and not self._plain_kernel_value(value.id):
                    return False
        return True

    def _plain_kernel_value(self, name: str) -> bool:
        """A kernel name that is certainly no callable of the user's (data, a library object, a builtin)."""
        if hasattr(builtins, name) or self.ctx.view.is_library(name):
            return True
        info = self.ctx.view.get(name)
        return info is not None and info.type in BUILTIN_VALUE_TYPES

    def tensor_method(
        self, node: ast.Call, method: str, t: Tensor, args: list[Value], kwargs: Kwargs
    ) -> Value:
        name = ast.unparse(node)
        if method in SYNC_METHODS and method != "numpy" and device_type(t.device or "") == "cuda":
            self.sync(node)
        if method == "numpy":
            if not args and not kwargs:
                self.to_numpy(node, [t], f"{t.name}.numpy()")
            return None
        if method == "to" or method in ("cuda", "cpu", "type"):
            return self.moved(node, t, method, args, kwargs)
        if method in CAST_METHODS and not args and not kwargs:
            dtype = CAST_METHODS[method]
            return replace(t, name=name, dtype=dtype, origin=f"{name} is {dtype}")
        if method in ("detach", "detach_"):
            return replace(t, name=name, requires_grad=False)
        if method == "requires_grad_":
            return replace(t, name=name, requires_grad=None)
        if method in MATMUL_METHODS and len(args) == 1 and isinstance(args[0], Tensor):
            return self.matmul(node, t, args[0])
        if method in ELEMENTWISE_METHODS and len(args) == 1 and isinstance(args[0], Tensor):
            return self.elementwise(node, t, args[0])
        if method in INDEX_RESULT_METHODS:
            return Tensor(name=name, device=t.device, dtype="int64", requires_grad=False)
        if method.endswith("_") and isinstance(node.func, ast.Attribute):
            target = node.func.value  # in place: same device and dtype, other values
            if isinstance(target, ast.Name):
                self.env[target.id] = replace(t, name=target.id, max=None)
            return replace(t, name=name, max=None)
        if method in KEEPING_METHODS:
            ndim = t.ndim if method in ("clone", "contiguous", "pin_memory", "abs", "neg", "relu") else None
            values = t.max if method in SAME_VALUES else None
            return replace(
                t, name=name, ndim=ndim, max=values, requires_grad=self.grad_of(t.requires_grad),
                every_batch=t.every_batch if values is not None else False,
            )  # fmt: skip
        return None

    def moved(self, node: ast.Call, t: Tensor, method: str, args: list[Value], kwargs: Kwargs) -> Value:
        name = ast.unparse(node)
        device: str | None = t.device
        dtype: str | None = t.dtype
        if method == "cpu":
            device = "cpu"
        elif method == "cuda":
            device = "cuda"
            if node.args:
                index = node.args[0]
                device = f"cuda:{const_int(index)}" if const_int(index) is not None else None
        elif method == "type":
            return None
        else:
            targets = [*args, kwargs.get("device"), kwargs.get("dtype")]
            if not node.args and not node.keywords:
                return None
            known = False
            for v in targets:
                if isinstance(v, Device):
                    device, known = v.value, True
                elif isinstance(v, Dtype):
                    dtype, known = v.value, True
                elif isinstance(v, Tensor):
                    device, dtype, known = v.device, v.dtype, True
            readable = all(isinstance(a, Device | Dtype | Tensor) for a in args)
            if not known or len(node.args) > 2 or not readable:
                return None
        return replace(t, name=name, device=device, dtype=dtype, origin=f"{name} is on {device} ({dtype})")

    def module_method(
        self, node: ast.Call, func: ast.Attribute, m: Module, args: list[Value], kwargs: Kwargs
    ) -> Value:
        name = func.value.id if isinstance(func.value, ast.Name) else None
        method = func.attr
        if method in MODULE_READS:
            return m if method in ("train", "eval") else None
        if method not in ("to", "cuda", "cpu") and method not in CAST_METHODS:
            if method in MODULE_MUTATING or name is None:
                self.modules_moved()
            elif name is not None:
                self.spoil(name)
            return None
        device, dtype = m.device, m.dtype
        if method == "cpu":
            device = "cpu"
        elif method == "cuda":
            device = "cuda" if not node.args else None
        elif method in CAST_METHODS:
            dtype = CAST_METHODS[method] if is_floating(CAST_METHODS[method]) else None
        else:  # .to(device), .to(dtype), .to(device, dtype), .to(tensor)
            if not node.args and not kwargs:
                device = dtype = None
            for v in [*args, kwargs.get("device", m), kwargs.get("dtype", m)]:
                if isinstance(v, Device):
                    device = v.value
                elif isinstance(v, Dtype):
                    dtype = v.value if is_floating(v.value) else None
                elif isinstance(v, Tensor):
                    device, dtype = v.device, v.dtype if is_floating(v.dtype) else None
                elif v is not m:  # an argument we cannot read
                    device = dtype = None
        first = m.first
        if first is not None and dtype != m.dtype:
            first = (first[0], dtype, first[2])
        new = replace(m, device=device, dtype=dtype, first=first)
        self.modules_moved(keep=name)
        if name is not None:
            self.env[name] = new  # moved in place: from here on the cell holds its new state
        return new

    def library_call(self, node: ast.Call, path: str, args: list[Value], kwargs: Kwargs) -> Value:
        if not self.library_callee(node):
            self.barrier = True  # a library call handed a callable of the notebook's may run it
            return self.library_value(node, path, args, kwargs)
        value = self.library_value(node, path, args, kwargs)
        if value is None and path.partition(".")[0] in TRUSTED_ROOTS:
            return Library(path)
        return value

    def library_value(self, node: ast.Call, path: str, args: list[Value], kwargs: Kwargs) -> Value:
        top = path.partition(".")[0]
        last = path.rsplit(".", 1)[-1]
        tensors = [a for a in args if isinstance(a, Tensor)]
        for a in args:
            if isinstance(a, Items):
                tensors.extend(v for v in a.values if isinstance(v, Tensor))
        if top == "numpy":
            if last in NUMPY_CONVERTING and tensors:
                self.to_numpy(node, tensors, f"np.{last}")
            return None
        if top == "sklearn":
            if last in ("set_config", "config_context"):
                self.sklearn_converts = False  # array API dispatch may be on from here
            if self.sklearn_converts and last in SKLEARN_METRICS and tensors:
                self.to_numpy(node, tensors, last)
            return None
        if top != "torch":
            self.after_unknown_call(node)
            return None
        if path in ("torch.cuda.synchronize",):
            self.sync(node)
            return None
        if last == "set_grad_enabled":
            self.grad = const_bool(node)
            return None
        # An alias of a submodule names only its top package: `F.cross_entropy` reads `torch.cross_entropy`.
        if last in PAIR_LOSS_FUNCTIONS:
            return self.loss(node, last, None, args, kwargs)
        if last in PAIR_LOSSES:  # a loss module built here: torch's own forward, settings in the call
            ignore = kwarg(node, "ignore_index")
            if ignore is not None and const_int(ignore) is None:
                return None
            return Module(
                name=ast.unparse(node), cls=last, trusted=True, device=None, dtype=None, requires_grad=None,
                first=None, classes=None, loss=True, ignore_index=const_int(ignore) if ignore else -100,
            )  # fmt: skip
        if last in KEEPING_FUNCTIONS and args and isinstance(args[0], Tensor):
            t = args[0]
            return replace(t, name=ast.unparse(node), ndim=None, requires_grad=self.grad_of(t.requires_grad))
        if last in CAT_FUNCTIONS and args and isinstance(args[0], Items):
            items = [v for v in args[0].values if isinstance(v, Tensor)]
            if len(items) == len(args[0].values) >= 2:
                for a in items[1:]:
                    if differ(items[0].device, a.device):
                        self.device_error(node, [items[0], a], f"the tensors given to torch.{last}")
                        return None
                device = items[0].device
                for a in items[1:]:
                    device = common_device(device, a.device)
                return Tensor(
                    name=ast.unparse(node),
                    device=device,
                    dtype=items[0].dtype if all(a.dtype == items[0].dtype for a in items) else None,
                )
            return None
        a, b = (args[0], args[1]) if len(args) == 2 else (None, None)
        if isinstance(a, Tensor) and isinstance(b, Tensor) and last in MATMUL_METHODS:
            return self.matmul(node, a, b)
        if isinstance(a, Tensor) and isinstance(b, Tensor) and last in ELEMENTWISE_METHODS:
            return self.elementwise(node, a, b)
        if last == "from_numpy" and len(node.args) == 1:
            info = self.ctx.view.get(ast.unparse(node.args[0])) if not has_call(node.args[0]) else None
            dtype = (
                info.dtype if info is not None and info.is_ndarray and info.dtype in NUMPY_TO_TORCH else None
            )
            ndim = len(info.shape) if info is not None and info.shape is not None else None
            return Tensor(name=ast.unparse(node), device="cpu", dtype=dtype, ndim=ndim, requires_grad=False)
        made_on = kwargs.get("device")
        if isinstance(made_on, Device) and last in FACTORIES:
            made_as = kwargs.get("dtype")
            return Tensor(
                name=ast.unparse(node),
                device=made_on.value,
                dtype=made_as.value if isinstance(made_as, Dtype) else None,
            )
        return None
