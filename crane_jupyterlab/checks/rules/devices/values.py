"""The torch vocabularies the device rules know (layers, methods, functions and what they keep) and the
abstract values the walker follows through a cell: tensors, modules, devices, dtypes, loaders."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, replace

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
DEVICE_NAME = re.compile(r"^(cpu|cuda|meta|mps|xpu)(:\d+)?$")


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
    ndim_exact: bool = True  # False: ndim is the input's of a model that may change the rank


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


# ----- reading and combining them ---------------------------------------------------------------------


def device_type(device: str) -> str:
    return device.split(":", 1)[0]


def common_device(a: str | None, b: str | None) -> str | None:
    """The device of a result computed from tensors on `a` and `b` (when they are the same one)."""
    if a is None or b is None or device_type(a) != device_type(b) or differ(a, b):
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


def off_cpu(device: str | None) -> bool:
    """On a judged device that is not the CPU: a tensor there has no NumPy view."""
    return device is not None and device_type(device) in JUDGED_DEVICES - {"cpu"}


def dtype_name(text: str | None) -> str | None:
    if text is None:
        return None
    name = text.replace("torch.", "")
    name = DTYPE_ALIASES.get(name, name)
    return name if name in DTYPE_NAMES else None


def is_floating(dtype: str | None) -> bool:
    return dtype in ("float16", "bfloat16", "float32", "float64")


def as_int(v: object) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def renamed(value: Value, name: str) -> Value:
    if isinstance(value, Tensor | Module):
        return replace(value, name=name)
    return value


def evidence_of(*tensors: Tensor) -> list[str]:
    out = []
    for t in tensors:
        out.append(t.origin or f"{t.name} is on {t.device} ({t.dtype})")
    return out


def either(a: bool | None, b: bool | None) -> bool | None:
    if a is True or b is True:
        return True
    if a is False and b is False:
        return False
    return None
