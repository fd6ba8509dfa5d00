"""torch devices and dtypes that cannot go together, each from a check torch itself makes.

- device-mismatch (RuntimeError): the operands of a module call, an elementwise operator, `torch.cat` /
  `stack`, `@` / `matmul` / `mm` / `bmm`, a loss, on different devices (cpu vs cuda, cuda:0 vs cuda:1).
  Dispatch checks that every tensor argument of a kernel lives on one device ("Expected all tensors to be
  on the same device"); the exceptions torch makes are honoured: a 0-dim CPU tensor mixes with anything
  in elementwise ops (so every operand must be known to have a dimension), and indices may stay on the
  CPU when they index a CUDA tensor (so indexing is judged only for a CPU tensor indexed by a CUDA index
  tensor: "indices should be either on cpu or on the same device as the indexed tensor").
- dtype-mismatch: the input of a Linear/Conv/ConvTranspose/Bilinear layer whose dtype is not its weight's
  (matmul and convolution never promote: RuntimeError), of a recurrent layer (ValueError, RNN.check_input),
  float indices into an Embedding (RuntimeError: indices must be Long or Int); two operands of `@` /
  `matmul` / `mm` / `bmm` / `dot` of different dtypes (RuntimeError). Not judged under autocast, which casts.
- tensor-to-numpy: `t.numpy()`, NumPy functions (they call `Tensor.__array__` -> `numpy()`), scikit-learn
  metrics and estimator methods (they validate with NumPy) given a tensor that lives off the CPU
  (TypeError) or that requires grad while autograd is on (RuntimeError): `tensor_to_numpy` checks both.
- label-out-of-range: class indices >= the number of outputs in a cross-entropy/NLL loss: IndexError on
  the CPU; on CUDA the loss kernel's device-side assert surfaces as torch.AcceleratorError ("CUDA error:
  device-side assert triggered") at the next synchronising call, so a crash is claimed only where one
  certainly follows (`.item()`, `.cpu()`, `.tolist()`, `.numpy()`, `float()`, `print()` of a CUDA tensor,
  `torch.cuda.synchronize()`), on that line.

Which forwards are trusted: torch's own leaf modules (Linear, Conv2d, Embedding, LSTM, norms: their
forward hands the input straight to the functional op with the parameters) and `nn.Sequential`, whose
forward calls its children in order; so for a Sequential of torch modules the first parameterized layer
is certainly the first to meet the input, and every layer before it keeps the device (and, from a known
list, the dtype). A custom `forward` may move, cast or ignore its input before any layer sees it, and a
forward pre-hook may too: such models are not judged (`custom_modules`, `forward_pre_hooks` facts).

The cell is followed statement by statement: tensors and modules the kernel holds (while the cell has not
rebound them and no call could have run user code), what the cell derives from them (`x.to(device)`,
`x.half()`, `model.cuda()`, `model(x)`) and the batches a DataLoader over a TensorDataset yields. Loop
bodies are followed for their first iteration when the loop certainly runs one; a batch's label maximum
is the dataset's, so the label rule also needs the loop to visit every batch with nothing that can leave
the body early. Everything else is unknown, and unknown is silent.
"""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace

from ...kernel.safe import TRUSTED_ROOTS
from ...models import Finding
from ..context import CellContext, has_star_args, kwarg, line_of
from ..flow import (
    DYNAMIC_BUILTINS,
    PURE_BUILTINS,
    PURE_METHODS,
    Site,
    _context_is_plain,
    _may_jump,
    root_name,
)
from ..view import BUILTIN_VALUE_TYPES, ObjInfo, type_class, type_root

RULE_DEVICE = "device-mismatch"
RULE_DTYPE = "dtype-mismatch"
RULE_NUMPY = "tensor-to-numpy"
RULE_LABELS = "label-out-of-range"

# Device types whose mixing torch refuses everywhere the rules look. `meta` (shape-only tensors) is left
# out: some kernels (convolution, embedding, matmul, indexing) accept it beside CPU tensors.
JUDGED_DEVICES = frozenset({"cpu", "cuda"})

# The first parameterized layer of a trusted model checks its input's device against its weights'.
DEVICE_CHECKED = frozenset(
    {"Linear", "Bilinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
     "ConvTranspose3d", "LSTM", "GRU", "RNN", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LayerNorm",
     "GroupNorm", "PReLU"}
)  # fmt: skip
MATMUL_LAYERS = frozenset(
    {"Linear", "Bilinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
     "ConvTranspose3d"}
)  # fmt: skip
RNN_LAYERS = frozenset({"LSTM", "GRU", "RNN"})
# Parameterless layers that hand on a floating input in its dtype and on its device.
DTYPE_KEEPING = frozenset(
    {"ReLU", "ReLU6", "LeakyReLU", "GELU", "SiLU", "ELU", "SELU", "CELU", "Mish", "Tanh", "Sigmoid",
     "Hardtanh", "Hardswish", "Hardsigmoid", "Softplus", "Softsign", "Tanhshrink", "Softmax", "LogSoftmax",
     "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "Identity", "Flatten", "Unflatten",
     "MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d",
     "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
     "AdaptiveMaxPool3d", "ZeroPad1d", "ZeroPad2d", "ConstantPad1d", "ConstantPad2d", "ReflectionPad2d",
     "Upsample"}
)  # fmt: skip
# Layers that keep the size of the last axis (what may follow the last Linear of a classifier).
SAME_WIDTH = frozenset(
    {"ReLU", "Softmax", "LogSoftmax", "Dropout", "Sigmoid", "Tanh", "Identity", "LeakyReLU", "GELU", "ELU",
     "SELU", "SiLU", "Mish", "Softplus", "PReLU"}
)  # fmt: skip
CE_LOSSES = frozenset({"CrossEntropyLoss", "NLLLoss"})
CE_FUNCTIONS = frozenset({"cross_entropy", "nll_loss"})
# Losses of two tensors: TensorIterator or the loss kernel checks that both share a device.
PAIR_LOSSES = frozenset(
    {"CrossEntropyLoss", "NLLLoss", "MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "BCELoss",
     "BCEWithLogitsLoss", "KLDivLoss", "PoissonNLLLoss", "SoftMarginLoss", "MultiLabelSoftMarginLoss"}
)  # fmt: skip
PAIR_LOSS_FUNCTIONS = frozenset(
    {"cross_entropy", "nll_loss", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
     "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div", "poisson_nll_loss"}
)  # fmt: skip
ELEMENTWISE_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)
ELEMENTWISE_METHODS = frozenset({"add", "sub", "mul", "div", "true_divide", "pow", "maximum", "minimum"})
MATMUL_METHODS = frozenset({"matmul", "mm", "bmm", "mv", "dot"})
CAT_FUNCTIONS = frozenset({"cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack"})
# NumPy functions that convert tensor arguments through Tensor.__array__ (executed on CPU: each raises
# numpy()'s own errors for a meta tensor and for one that requires grad; a method of the tensor that
# NumPy tries first, as for np.mean, fails differently and is left out).
NUMPY_CONVERTING = frozenset(
    {"asarray", "array", "asanyarray", "ascontiguousarray", "asarray_chkfinite", "argmax", "argmin",
     "unique", "concatenate", "stack", "vstack", "hstack", "column_stack", "histogram", "bincount", "isnan",
     "isfinite", "sqrt", "exp", "log", "abs", "absolute", "round", "around", "where", "sort", "argsort",
     "percentile", "quantile", "median", "cumsum", "dot", "matmul", "inner", "outer", "allclose", "clip",
     "corrcoef", "cov", "digitize", "nanmean", "nanmax", "nanmin", "nansum", "count_nonzero", "ptp",
     "diff", "log1p", "square", "sign", "floor", "ceil", "maximum", "minimum", "add", "multiply",
     "subtract", "divide", "equal", "isclose", "searchsorted", "ravel", "reshape", "transpose",
     "atleast_1d", "atleast_2d", "copy", "take", "argpartition", "average", "einsum", "tile", "repeat"}
)  # fmt: skip
SKLEARN_METRICS = frozenset(
    {"accuracy_score", "f1_score", "precision_score", "recall_score", "confusion_matrix",
     "classification_report", "balanced_accuracy_score", "matthews_corrcoef", "cohen_kappa_score",
     "jaccard_score", "hamming_loss", "zero_one_loss", "roc_auc_score", "log_loss",
     "average_precision_score", "brier_score_loss", "mean_squared_error", "mean_absolute_error",
     "r2_score", "explained_variance_score", "median_absolute_error", "max_error",
     "mean_absolute_percentage_error", "root_mean_squared_error", "precision_recall_fscore_support",
     "roc_curve", "precision_recall_curve"}
)  # fmt: skip
SKLEARN_METHODS = frozenset(
    {"fit", "fit_transform", "transform", "predict", "predict_proba", "predict_log_proba",
     "decision_function", "score", "partial_fit", "fit_predict", "inverse_transform"}
)  # fmt: skip
# Tensor methods whose result keeps the receiver's device and dtype (views, copies, reshapes).
KEEPING_METHODS = frozenset(
    {"clone", "contiguous", "view", "reshape", "flatten", "unsqueeze", "squeeze", "permute", "transpose",
     "t", "expand", "expand_as", "repeat", "narrow", "select", "index_select", "roll", "flip", "abs", "neg",
     "relu", "sigmoid", "tanh", "exp", "log", "softmax", "log_softmax", "pin_memory", "sum", "mean",
     "cumsum", "clamp", "clip", "sqrt", "square", "pow", "__getitem__"}
)  # fmt: skip
CAST_METHODS = {
    "half": "float16", "float": "float32", "double": "float64", "bfloat16": "bfloat16", "long": "int64",
    "int": "int32", "short": "int16", "bool": "bool", "byte": "uint8", "char": "int8",
}  # fmt: skip
INDEX_RESULT_METHODS = frozenset({"argmax", "argmin", "argsort"})  # int64 results on the same device
DTYPE_NAMES = frozenset(
    {"float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool",
     "complex64", "complex128"}
)  # fmt: skip
DTYPE_ALIASES = {
    "half": "float16", "float": "float32", "double": "float64", "long": "int64", "int": "int32",
    "short": "int16", "cfloat": "complex64", "cdouble": "complex128",
}  # fmt: skip
NUMPY_TO_TORCH = frozenset(
    {"float64", "float32", "float16", "int64", "int32", "int16", "int8", "uint8", "bool"}
)
SYNC_METHODS = frozenset({"item", "cpu", "tolist", "numpy"})
# Methods whose result holds the receiver's values (rearranged at most): its largest value stays.
SAME_VALUES = frozenset(
    {"clone", "contiguous", "view", "reshape", "flatten", "unsqueeze", "squeeze", "permute", "transpose", "t",
     "expand", "expand_as", "pin_memory"}
)  # fmt: skip
# torch functions that make a tensor where their `device=` says.
FACTORIES = frozenset(
    {"tensor", "zeros", "ones", "randn", "rand", "empty", "full", "arange", "randint", "as_tensor",
     "zeros_like", "ones_like", "randn_like", "eye", "linspace"}
)  # fmt: skip
# torch functions whose result keeps the device and dtype of their first argument.
KEEPING_FUNCTIONS = frozenset(
    {"relu", "sigmoid", "tanh", "softmax", "log_softmax", "dropout", "flatten", "squeeze", "unsqueeze",
     "reshape", "gelu", "leaky_relu", "elu", "silu", "max_pool2d", "avg_pool2d", "normalize", "clone",
     "abs", "exp", "log", "clamp"}
)  # fmt: skip
# Module methods that leave its parameters where they are (and return the module or nothing).
MODULE_READS = frozenset(
    {"train", "eval", "zero_grad", "parameters", "named_parameters", "state_dict", "children", "modules",
     "named_modules", "named_children", "buffers", "named_buffers", "extra_repr", "__repr__"}
)  # fmt: skip
# Module methods that may move, cast or replace parameters in place.
MODULE_MUTATING = frozenset(
    {"to", "cuda", "cpu", "half", "float", "double", "bfloat16", "type", "apply", "to_empty",
     "load_state_dict", "register_forward_pre_hook", "register_forward_hook", "add_module",
     "register_module", "register_parameter", "register_buffer", "set_submodule", "requires_grad_",
     "share_memory", "xpu", "mps", "ipu"}
)  # fmt: skip
GRAD_OFF = frozenset({"no_grad", "inference_mode"})
AUTOCAST = frozenset({"autocast"})
_DEVICE = re.compile(r"^(cpu|cuda|meta|mps|xpu)(:\d+)?$")


# ----- abstract values -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Tensor:
    name: str  # how messages name it
    device: str | None = None
    dtype: str | None = None
    ndim: int | None = None
    requires_grad: bool | None = None
    max: float | None = None  # largest value known to be in it (a sample's: a lower bound)
    every_batch: bool = False  # a batch of a loader: `max` is somewhere in the dataset, not in each batch
    classes: int | None = None  # logits of a classifier: how many classes the last axis holds
    origin: str | None = None  # evidence: where its device/dtype come from


@dataclass(frozen=True)
class Module:
    name: str
    cls: str
    trusted: bool  # forward known: torch classes only, Sequential containers, no forward pre-hooks
    device: str | None  # the one device of all parameters (None: several, none, or unknown)
    dtype: str | None  # the one dtype of all parameters
    requires_grad: bool | None
    first: tuple[str, str | None, tuple[str, ...]] | None  # first param layer: class, weight dtype, before
    classes: int | None  # outputs of a classifier: the last Linear's out_features
    loss: bool = False  # a torch loss module
    ignore_index: int | None = None


@dataclass(frozen=True)
class Device:
    value: str


@dataclass(frozen=True)
class Dtype:
    value: str


@dataclass(frozen=True)
class Items:
    values: tuple[Value, ...]


@dataclass(frozen=True)
class Library:
    """Something a library call made that the rules do not model (an optimizer, an array): its methods
    run library code."""

    path: str


@dataclass(frozen=True)
class Loader:
    name: str
    batch: tuple[Tensor, ...]
    nonempty: bool
    full_pass: bool  # iterating it visits every sample once (no dropped remainder, a plain sampler)


Value = Tensor | Module | Device | Dtype | Items | Loader | Library | None
Kwargs = dict[str, Value]


# ----- helpers ---------------------------------------------------------------------------------------


def _device_type(device: str) -> str:
    return device.split(":", 1)[0]


def _common(a: str | None, b: str | None) -> str | None:
    """The device of a result computed from tensors on `a` and `b` (when they are the same one)."""
    if a is None or b is None or _device_type(a) != _device_type(b) or differ(a, b):
        return None
    return a if ":" in a else b


def differ(a: str | None, b: str | None) -> bool:
    """True when two devices are certainly different ones; "cuda" alone is the current CUDA device."""
    if a is None or b is None:
        return False
    ta, _, ia = a.partition(":")
    tb, _, ib = b.partition(":")
    if ta not in JUDGED_DEVICES or tb not in JUDGED_DEVICES:
        return False
    if ta != tb:
        return True
    return bool(ia and ib and ia != ib)


def _dtype_name(text: str | None) -> str | None:
    if text is None:
        return None
    name = text.replace("torch.", "")
    name = DTYPE_ALIASES.get(name, name)
    return name if name in DTYPE_NAMES else None


def _floating(dtype: str | None) -> bool:
    return dtype in ("float16", "bfloat16", "float32", "float64")


def _int(v: object) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


@dataclass
class _Found:
    rule: str
    message: str
    evidence: list[str]
    line: int | None
    exc: str  # builtin base class an `except` must name to swallow it


# ----- the walker ------------------------------------------------------------------------------------


class _Walker:
    def __init__(self, ctx: CellContext) -> None:
        self.ctx = ctx
        self.sites = {id(s.node): s for s in ctx.sites}
        self.env: dict[str, Value] = {}  # names the cell bound (None: unknown)
        self.spoiled: set[str] = set()  # kernel names whose object the cell may have changed
        self.found: list[_Found] = []
        torch = next((m for m in ctx.view.modules.values() if m.module == "torch"), None)
        self.grad: bool | None = torch.grad_enabled if torch is not None else None
        autocast = torch.facts.get("autocast") if torch is not None else None
        self.autocast: bool | None = autocast if isinstance(autocast, bool) else None
        sklearn = next((m for m in ctx.view.modules.values() if m.module == "sklearn"), None)
        dispatch = sklearn.facts.get("array_api_dispatch") if sklearn is not None else None
        self.sklearn_converts = dispatch is False
        self.pending: list[tuple[str, list[str]]] = []  # CUDA asserts queued, not yet surfaced
        self.modules_open = False  # some module was changed in place: kernel modules are unknown now
        # True once a call may have run the notebook's own code, which can rebind or change any global.
        # The flow's own barrier also rises for a tensor the cell bound and passes to a library call (it
        # could be a callable); here the values are known, so the walker keeps its own.
        self.barrier = False
        self.full_pass = False  # inside the body of a loop over every batch of a loader

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
        if any(isinstance(sub, ast.Call) and not self.library_callee(sub) for sub in _walk_scope(node)):
            self.barrier = True
        for sub in _walk_scope(node):
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

    def spoil(self, name: str) -> None:
        if name in self.env:
            self.env[name] = None
        else:
            self.spoiled.add(name)

    def modules_moved(self, keep: str | None = None) -> None:
        """A module changed in place. Other names may hold the same object or share its submodules
        (`best = model`, `enc = model.encoder`), so what is known of every other module is dropped."""
        self.modules_open = True
        for name, value in self.env.items():
            if isinstance(value, Module) and name != keep:
                self.env[name] = None

    def kernel_name(self, name: str, near: ast.AST) -> Value:
        """A kernel name read where `near` is evaluated (for nodes the flow has no site of)."""
        site = self.site(near)
        if site is None or self.barrier or name in self.spoiled or name in self.ctx.view.undefined:
            return None
        info = self.ctx.view.get(name)
        value = self.from_kernel(info) if info is not None and not info.missing else None
        return None if isinstance(value, Module) and self.modules_open else value

    def store(self, target: ast.expr, value: Value) -> None:
        if isinstance(target, ast.Name):
            self.env[target.id] = _renamed(value, target.id)
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
        elements = self.elements(node.iter)
        if elements is None:
            self.barrier = True  # iterating it may run the notebook's code (a generator, a Dataset)
            self.forget(node)
            return
        first, full_pass = elements
        self.store(node.target, first)
        saved = self.full_pass
        self.full_pass = full_pass and not any(_may_jump(stmt) for stmt in node.body) and not node.orelse
        certain = True
        for stmt in node.body:  # the first iteration, up to anything that may leave it early
            self.stmt(stmt, certain)
            if _may_jump(stmt):
                certain = False
        self.full_pass = saved
        self.forget(node)  # later iterations and the names they leave are not followed

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
            bounds = [_const_int(a) for a in node.args]
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
            name = _callee_name(item.context_expr)
            if name in GRAD_OFF:
                self.grad = False
            elif name == "enable_grad":
                self.grad = True
            elif name == "set_grad_enabled":
                self.grad = _const_bool(item.context_expr)
            elif name in AUTOCAST:
                if _const_bool(item.context_expr, "enabled") is not False:
                    self.autocast = True
            elif not _context_is_plain(item.context_expr):
                plain = False
            if item.optional_vars is not None:
                self.store(item.optional_vars, None)
        self.block(node.body, plain)
        self.grad, self.autocast = grad, autocast

    # ----- expressions ----------------------------------------------------------------------------
    def site(self, node: ast.AST) -> Site | None:
        """The flow's site of `node`; for a node the walker made up (`x += y` read as `x + y`), the site
        of the first expression under it that the flow recorded."""
        for sub in ast.walk(node):
            site = self.sites.get(id(sub))
            if site is not None:
                return site
        return None

    def lookup_name(self, name: str) -> Value:
        if name in self.env:
            return self.env[name]
        return None

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
        value = self.from_kernel(info) if info is not None and not info.missing else None
        return None if isinstance(value, Module) and self.modules_open else value

    def from_kernel(self, info: ObjInfo) -> Value:
        raw = info.raw
        root, cls = type_root(info.type), type_class(info.type)
        if root == "torch" and cls in ("Tensor", "Parameter"):
            mx = raw.get("max")
            return Tensor(
                name=info.expr,
                device=info.device,
                dtype=_dtype_name(info.dtype),
                ndim=len(info.shape) if info.shape is not None else None,
                requires_grad=info.requires_grad,
                max=float(mx) if isinstance(mx, int | float) and not isinstance(mx, bool) else None,
                origin=f"{info.expr} is on {info.device} ({info.dtype})",
            )
        if root == "torch" and cls == "device" and isinstance(info.device, str):
            return Device(info.device)
        if info.type == "str" and isinstance(raw.get("value"), str) and _DEVICE.match(raw["value"]):
            return Device(raw["value"])
        if root == "torch" and cls == "DataLoader":
            return self.loader(info)
        if "n_params" in raw:
            return self.module(info)
        if root == "torch" and cls == "dtype":
            return Dtype(_dtype_name(str(raw.get("repr", ""))) or "") if raw.get("repr") else None
        return None

    def module(self, info: ObjInfo) -> Module:
        raw = info.raw
        cls = type_class(info.type)
        device = raw.get("param_device")
        dtype = raw.get("param_dtype")
        trusted = (
            type_root(info.type) == "torch"
            and not raw.get("custom_modules")
            and set(raw.get("containers") or []) <= {"Sequential"}
            and not raw.get("forward_pre_hooks")
        )
        grad = raw.get("param_requires_grad")
        return Module(
            name=info.expr,
            cls=cls,
            trusted=trusted,
            device=device if isinstance(device, str) else None,
            dtype=dtype if isinstance(dtype, str) else None,
            requires_grad=grad if isinstance(grad, bool) else None,
            first=self.first_layer(info) if trusted else None,
            classes=self.classes(info) if trusted else None,
            loss=cls in PAIR_LOSSES and type_root(info.type) == "torch",
            ignore_index=_int(raw.get("ignore_index")),
        )

    def leaves(self, info: ObjInfo) -> list[ObjInfo] | None:
        """The leaf layers of a Sequential in forward order, when all of them are shown."""
        if not info.children:
            return [info]
        if type_class(info.type) != "Sequential" or "layers_left_out" in info.raw:
            return None
        leaves = [self.ctx.view.get(expr) for expr in info.children]
        return [leaf for leaf in leaves if leaf is not None] if all(leaves) else None

    def first_layer(self, info: ObjInfo) -> tuple[str, str | None, tuple[str, ...]] | None:
        leaves = self.leaves(info)
        before: list[str] = []
        for leaf in leaves or []:
            cls = type_class(leaf.type)
            if "weight_dtype" in leaf.raw:
                return cls, _dtype_name(str(leaf.raw["weight_dtype"])), tuple(before)
            before.append(cls)
        return None

    def classes(self, info: ObjInfo) -> int | None:
        leaves = self.leaves(info)
        for leaf in reversed(leaves or []):
            cls = type_class(leaf.type)
            if cls == "Linear":
                return _int(leaf.raw.get("out_features"))
            if cls not in SAME_WIDTH:
                return None
        return None

    def loader(self, info: ObjInfo) -> Loader | None:
        raw = info.raw
        batch_size = _int(raw.get("batch_size"))
        dataset = self.ctx.view.get(f"{info.expr}.dataset")
        if batch_size is None or raw.get("collate_fn") or dataset is None:
            return None
        if type_class(dataset.type) != "TensorDataset":
            return None
        n = _int(dataset.raw.get("len"))
        tensors = [self.ctx.view.get(expr) for expr in dataset.children]
        if n is None or not tensors or not all(tensors):
            return None
        batch: list[Tensor] = []
        for t in tensors:
            assert t is not None
            value = self.from_kernel(t)
            if not isinstance(value, Tensor) or value.ndim is None:
                return None
            if value.device != "cpu" and _int(raw.get("num_workers")):
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

    def ev(self, node: ast.expr) -> Value:
        """Evaluate `node` (a certain site): its operands first, then the checks, then its value."""
        if isinstance(node, ast.Name | ast.Attribute) and not _has_call(node):
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
            if isinstance(node.value, str) and _DEVICE.match(node.value):
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
            dtype = _dtype_name(path)
            return Dtype(dtype) if dtype else None
        return None

    # ----- operations -----------------------------------------------------------------------------
    def report(self, node: ast.AST, found: _Found) -> None:
        site = self.site(node)
        if site is None or site.caught((found.exc,)):
            return
        self.found.append(found)

    def subscript(self, node: ast.Subscript) -> Value:
        if not _has_call(node):
            value = self.lookup(node)
            if value is not None:
                return value
        base = self.ev(node.value)
        index = self.ev(node.slice)
        if not isinstance(base, Tensor):
            return None
        indices = index.values if isinstance(index, Items) else (index,)
        for idx in indices:
            if (
                isinstance(idx, Tensor)
                and base.device is not None
                and _device_type(base.device) == "cpu"
                and differ(base.device, idx.device)
                and (idx.ndim or 0) >= 1
            ):
                self.report(
                    node,
                    _Found(
                        RULE_DEVICE,
                        f"RuntimeError: indices should be either on cpu or on the same device as the "
                        f"indexed tensor (cpu): {base.name} is on the CPU, {idx.name} on {idx.device} "
                        f"(line {line_of(node)}).",
                        _evidence(base, idx),
                        line_of(node),
                        "RuntimeError",
                    ),
                )
                return None
        return replace(base, name=ast.unparse(node), ndim=None, max=None, classes=None)

    def binop(self, node: ast.BinOp) -> Value:
        left, right = self.ev(node.left), self.ev(node.right)
        number = _number(node.right) if isinstance(left, Tensor) else _number(node.left)
        tensor = left if isinstance(left, Tensor) else right
        if isinstance(tensor, Tensor) and number is not None and isinstance(node.op, ELEMENTWISE_OPS):
            # with a Python number: same device; an int tensor meeting a float becomes float
            promotes = isinstance(number, float) or isinstance(node.op, ast.Div)
            dtype = tensor.dtype if not promotes or _floating(tensor.dtype) else None
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

    def elementwise(self, node: ast.AST, a: Tensor, b: Tensor) -> Value:
        # A 0-dim CPU tensor is a "CPU scalar" that TensorIterator lets through with any device.
        if differ(a.device, b.device) and (a.ndim or 0) >= 1 and (b.ndim or 0) >= 1:
            self.device_error(node, [a, b], "the operands of an elementwise operation")
            return None
        return Tensor(
            name=ast.unparse(node) if isinstance(node, ast.expr) else a.name,
            device=_common(a.device, b.device),
            dtype=a.dtype if a.dtype == b.dtype else None,
            ndim=max(a.ndim, b.ndim) if a.ndim is not None and b.ndim is not None else None,
            requires_grad=_either(a.requires_grad, b.requires_grad) if self.grad else self.grad_of(None),
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
            and (_floating(a.dtype) or _floating(b.dtype))
        ):
            self.report(
                node,
                _Found(
                    RULE_DTYPE,
                    f"RuntimeError: a matrix product needs operands of one dtype: {a.name} is {a.dtype}, "
                    f"{b.name} is {b.dtype} (matmul does not promote; line {line_of(node)}).",
                    _evidence(a, b),
                    line_of(node),
                    "RuntimeError",
                ),
            )
            return None
        return Tensor(
            name=ast.unparse(node) if isinstance(node, ast.expr) else a.name,
            device=_common(a.device, b.device),
            dtype=a.dtype if a.dtype == b.dtype else None,
            requires_grad=_either(a.requires_grad, b.requires_grad) if self.grad else self.grad_of(None),
        )

    def device_error(self, node: ast.AST, tensors: list[Tensor], what: str) -> None:
        devices = ", ".join(f"{t.name} on {t.device}" for t in tensors)
        self.report(
            node,
            _Found(
                RULE_DEVICE,
                f"RuntimeError: Expected all tensors to be on the same device: {what} are on different "
                f"devices ({devices}; line {line_of(node)}).",
                _evidence(*tensors),
                line_of(node),
                "RuntimeError",
            ),
        )

    def grad_of(self, tracked: bool | None) -> bool | None:
        """requires_grad of a result: False when autograd is off, else what the inputs say."""
        return False if self.grad is False else tracked

    def call(self, node: ast.Call) -> Value:
        func = node.func
        receiver: Value = None
        callee: Value = None
        if isinstance(func, ast.Attribute):
            callee = self.lookup(func) if not _has_call(func) else None  # model.fc: a kernel submodule
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
                isinstance(a, Tensor) and _device_type(a.device or "") == "cuda" for a in args
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

    def sklearn_estimator(self, node: ast.expr) -> str | None:
        """The name of a scikit-learn estimator `node` denotes (the kernel's, or built in this cell)."""
        site = self.site(node)
        if site is None or (_has_call(node) and not isinstance(node, ast.Call)):
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

    def path(self, func: ast.expr) -> str | None:
        site = self.site(func)
        if site is None or _has_call(func):
            return None
        name = root_name(func)
        if name is None or (name in self.env and site.imported(name) is None):
            return None
        path = self.ctx.class_path(func, site)
        if path is None:
            info = self.ctx.view.get(ast.unparse(func))
            path = info.path if info is not None else None
        return path

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
            held = self.lookup(func.value) if name is not None and not _has_call(func.value) else None
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
        if method in SYNC_METHODS and method != "numpy" and _device_type(t.device or "") == "cuda":
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
                device = f"cuda:{_const_int(index)}" if _const_int(index) is not None else None
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
            dtype = CAST_METHODS[method] if _floating(CAST_METHODS[method]) else None
        else:  # .to(device), .to(dtype), .to(device, dtype), .to(tensor)
            if not node.args and not kwargs:
                device = dtype = None
            for v in [*args, kwargs.get("device", m), kwargs.get("dtype", m)]:
                if isinstance(v, Device):
                    device = v.value
                elif isinstance(v, Dtype):
                    dtype = v.value if _floating(v.value) else None
                elif isinstance(v, Tensor):
                    device, dtype = v.device, v.dtype if _floating(v.dtype) else None
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
        checked = cls in DEVICE_CHECKED or (cls == "Embedding" and _device_type(x.device or "") == "cpu")
        if m.device is not None and checked and differ(m.device, x.device):
            self.report(
                node,
                _Found(
                    RULE_DEVICE,
                    f"RuntimeError: {m.name}'s parameters are on {m.device} but its input {x.name} is on "
                    f"{x.device}; its first layer ({cls}) needs both on one device (line {line_of(node)}).",
                    [f"{m.name} parameters are on {m.device}", *_evidence(x)],
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
                    _Found(
                        RULE_DTYPE,
                        f"{message} (line {line_of(node)}).",
                        [f"{m.name} first layer {cls} weight dtype {weight_dtype}", *_evidence(x)],
                        line_of(node),
                        exc,
                    ),
                )
                return None
        return Tensor(
            name=ast.unparse(node),
            device=m.device,
            dtype=m.dtype if cls in MATMUL_LAYERS | RNN_LAYERS else None,
            ndim=x.ndim,
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
            and _device_type(out.device) == _device_type(target.device)
            and not differ(out.device, target.device)
        ):
            evidence = [
                f"{target.name} holds the label {int(target.max)}",
                f"{out.name} has {out.classes} classes (the last Linear of the model)",
            ]
            if _device_type(out.device) == "cpu":
                self.report(
                    node,
                    _Found(
                        RULE_LABELS,
                        f"IndexError: Target {int(target.max)} is out of bounds: the model has "
                        f"{out.classes} outputs, so {cls} accepts class indices 0..{out.classes - 1} "
                        f"(line {line_of(node)}).",
                        evidence,
                        line_of(node),
                        "IndexError",
                    ),
                )
            elif _device_type(out.device) == "cuda":
                self.pending.append((f"{cls} at line {line_of(node)}", evidence))
        return Tensor(
            name=ast.unparse(node),
            device=_common(out.device, target.device),
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
            _Found(
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
            if t.device is not None and _device_type(t.device) in JUDGED_DEVICES - {"cpu"}:
                self.report(
                    node,
                    _Found(
                        RULE_NUMPY,
                        f"TypeError: can't convert {t.device} device type tensor to numpy: {what} needs "
                        f"{t.name} on the CPU (.cpu() first; line {line_of(node)}).",
                        _evidence(t),
                        line_of(node),
                        "TypeError",
                    ),
                )
                return
        for t in tensors:
            if t.requires_grad is True and self.grad is True and _device_type(t.device or "") == "cpu":
                self.report(
                    node,
                    _Found(
                        RULE_NUMPY,
                        f"RuntimeError: Can't call numpy() on Tensor that requires grad: {what} converts "
                        f"{t.name}, which tracks gradients (.detach() first; line {line_of(node)}).",
                        [f"{t.name} requires grad", "torch.is_grad_enabled() = True"],
                        line_of(node),
                        "RuntimeError",
                    ),
                )
                return

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
            self.grad = _const_bool(node)
            return None
        # An alias of a submodule names only its top package: `F.cross_entropy` reads `torch.cross_entropy`.
        if last in PAIR_LOSS_FUNCTIONS:
            return self.loss(node, last, None, args, kwargs)
        if last in PAIR_LOSSES:  # a loss module built here: torch's own forward, settings in the call
            ignore = kwarg(node, "ignore_index")
            if ignore is not None and _const_int(ignore) is None:
                return None
            return Module(
                name=ast.unparse(node), cls=last, trusted=True, device=None, dtype=None, requires_grad=None,
                first=None, classes=None, loss=True, ignore_index=_const_int(ignore) if ignore else -100,
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
                    device = _common(device, a.device)
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
            info = self.ctx.view.get(ast.unparse(node.args[0])) if not _has_call(node.args[0]) else None
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


# ----- small AST helpers ---------------------------------------------------------------------------------


def _renamed(value: Value, name: str) -> Value:
    if isinstance(value, Tensor | Module):
        return replace(value, name=name)
    return value


def _evidence(*tensors: Tensor) -> list[str]:
    out = []
    for t in tensors:
        out.append(t.origin or f"{t.name} is on {t.device} ({t.dtype})")
    return out


def _either(a: bool | None, b: bool | None) -> bool | None:
    if a is True or b is True:
        return True
    if a is False and b is False:
        return False
    return None


def _walk_scope(node: ast.AST) -> Iterator[ast.AST]:
    """ast.walk without the bodies of functions, classes, lambdas and comprehensions (their own scopes)."""
    stack = [node]
    while stack:
        cur = stack.pop()
        yield cur
        if cur is not node and isinstance(
            cur,
            ast.FunctionDef
            | ast.AsyncFunctionDef
            | ast.ClassDef
            | ast.Lambda
            | ast.ListComp
            | ast.SetComp
            | ast.DictComp
            | ast.GeneratorExp,
        ):
            continue
        stack.extend(ast.iter_child_nodes(cur))


def _number(node: ast.expr) -> int | float | None:
    """A Python number written in the cell (`2`, `-0.5`)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        node = node.operand
    if (
        isinstance(node, ast.Constant)
        and isinstance(node.value, int | float)
        and not isinstance(node.value, bool)
    ):
        return node.value
    return None


def _const_int(node: ast.expr) -> int | None:
    return node.value if isinstance(node, ast.Constant) and type(node.value) is int else None


def _has_call(node: ast.AST) -> bool:
    return any(isinstance(sub, ast.Call) for sub in ast.walk(node))


def _callee_name(node: ast.expr) -> str:
    func = node.func if isinstance(node, ast.Call) else node
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _const_bool(node: ast.expr, keyword: str | None = None) -> bool | None:
    if not isinstance(node, ast.Call):
        return None
    value = kwarg(node, keyword) if keyword else (node.args[0] if node.args else None)
    if isinstance(value, ast.Constant) and isinstance(value.value, bool):
        return value.value
    return None


def _as_load(node: ast.expr) -> ast.expr:
    copy = ast.copy_location(type(node)(**{f: getattr(node, f) for f in node._fields}), node)
    if hasattr(copy, "ctx"):
        copy.ctx = ast.Load()
    return copy


def check(ctx: CellContext) -> Iterator[Finding]:
    if not any(m.module == "torch" for m in ctx.view.modules.values()):
        return
    walker = _Walker(ctx)
    walker.block(ctx.tree.body, True)
    for found in walker.found:
        yield Finding(rule=found.rule, message=found.message, evidence=found.evidence, line=found.line)
