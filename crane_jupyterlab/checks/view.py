"""The normalized runtime view every rule reads, whatever produced the runtime information.

Two producers feed it: the live probe (`from_probe`, docs/architecture.md section 1) and JunoBench's
recorded runtime information (`junobench_adapter.from_junobench`). A field is None when the producer did
not say, and lists that could be truncated (columns, dict keys, feature names) are only filled when they
are known to be complete, so a rule never mistakes "not shown" for "not there".
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any

from ..kernel.probe.safe import TRUSTED_ROOTS
from .effects import NAMESPACE_MODULES

BUILTIN_VALUE_TYPES = frozenset(
    {"int", "float", "bool", "str", "bytes", "complex", "NoneType", "list", "tuple", "dict", "set",
     "frozenset", "range"}
)  # fmt: skip
CONTAINER_TYPES = frozenset({"list", "tuple", "dict", "set", "frozenset"})
# Types that say "a callable" without saying whose.
CALLABLE_TYPES = frozenset({"function", "type", "method", "abc.ABCMeta", "functools.partial"})


def normalize_expr(expr: str) -> str:
    """One spelling per expression: `df["Age"]` and `df['Age']` are the same key."""
    try:
        return ast.unparse(ast.parse(expr.strip(), mode="eval"))
    except (SyntaxError, ValueError, RecursionError):
        return expr.strip()


def type_root(type_name: str) -> str:
    return type_name.split(".", 1)[0] if "." in type_name else "builtins"


def type_class(type_name: str) -> str:
    return type_name.rsplit(".", 1)[-1]


@dataclass
class ObjInfo:
    """What is known about one expression's value in the kernel."""

    expr: str
    type: str = ""  # module-qualified where known ("pandas.core.frame.DataFrame" is fine), "" = unknown
    missing: bool = False  # the attribute / key / column does not exist
    user_code: bool | None = None  # True: defined by the notebook; False: library or builtin
    shape: list[int | None] | None = None
    dtype: str | None = None
    length: int | None = None
    columns: list[Any] | None = None  # complete column labels of a DataFrame
    index_names: list[Any] | None = None  # names of a DataFrame's index levels (None for unnamed ones)
    column_attrs: list[str] | None = None  # columns the cell reads as attributes (`df.Age` is df['Age'])
    keys: list[Any] | None = None  # complete keys of a dict
    fitted: bool | None = None
    n_features_in: int | None = None
    feature_names_in: list[str] | None = None  # complete
    input_shape: list[Any] | None = None  # keras model
    output_shape: list[Any] | None = None
    loss: str | None = None
    num_classes: int | None = None  # image iterators
    class_mode: str | None = None
    min: float | None = None
    max: float | None = None
    nan: int | None = None  # count of missing values (> 0 proves there are some, even on a sample)
    has_nan: bool | None = None  # True: some value is missing (a DataFrame's nan_columns, an array's nan)
    module: str | None = None  # defining module of a class or function (where it comes from)
    path: str | None = None  # full dotted path of a class or function: module + qualified name
    examples: list[Any] | None = None  # some actual values (a sample: never proof of absence)
    counts: list[tuple[Any, int]] | None = None  # (value, count): most and least frequent values
    items: list[Any] | None = None  # every element of a small list/tuple, in order
    children: list[str] = field(default_factory=list)  # exprs of the parts (layers of a model, ...)
    steps: list[str] | None = None  # class names of a scikit-learn Pipeline's steps, in order
    layer: dict[str, Any] = field(default_factory=dict)  # torch layer sizes: in_features, in_channels, ...
    facts: list[str] = field(default_factory=list)  # "key = value" strings, the evidence shown to users
    bind_error: str | None = None  # a call entry: why its arguments cannot bind to the callee's signature
    callee: str | None = None  # a call entry: module.name of a callee the cell imports
    raises: str | None = None  # a call entry: the exception its arguments raise (TypeError by default)
    value: Any = None  # a scalar's value (int, float, bool, complete str, None): see has_value
    has_value: bool = False
    unique: int | None = None  # distinct non-missing values (on a sample: a lower bound)
    kind: str | None = None  # binary, few-valued, categorical, continuous, many-valued, constant, text, ...
    sampled: bool = False  # value facts were computed on a sample of the rows
    dtypes: dict[str, int] | None = None  # DataFrame: {dtype: number of columns}
    non_numeric: int | None = None  # values that are not numbers (text columns, on the sample)
    non_numeric_examples: list[Any] | None = None  # some of them (their presence proves it)
    compiled: bool | None = None  # keras model
    derived: str | None = None  # how the cell computes this value from a kernel object (evidence)
    source: str | None = None  # derived frames: the kernel frame whose column entries still describe it
    device: str | None = None  # torch tensor (or torch.device): "cpu", "cuda:0", "cuda" (current device)
    requires_grad: bool | None = None  # torch tensor
    # Every fact of the entry by key, as the probe sent it (first value wins): what a rule needs beyond
    # the fields above (a module's param_device, containers, custom_modules, a loader's batch_size...).
    raw: dict[str, Any] = field(default_factory=dict)

    # --- kinds ---------------------------------------------------------------------------------
    def is_(self, root: str, *classes: str) -> bool:
        return type_root(self.type) == root and type_class(self.type) in classes

    @property
    def is_frame(self) -> bool:
        return self.is_("pandas", "DataFrame")

    @property
    def is_ndarray(self) -> bool:
        return self.is_("numpy", "ndarray")

    @property
    def is_dict(self) -> bool:
        return self.type == "dict"

    @property
    def is_sklearn(self) -> bool:
        return type_root(self.type) == "sklearn"

    @property
    def is_series(self) -> bool:
        return self.is_("pandas", "Series")

    @property
    def is_tensor(self) -> bool:
        return self.is_("torch", "Tensor")

    def shown_values(self) -> list[Any]:
        """Values the probe saw in it (examples, counted values, non-numeric examples), each once: actual
        values, so their presence proves something; a sample, so their absence proves nothing."""
        counted = [v for v, _ in self.counts or []]
        shown = [*(self.examples or []), *counted, *(self.non_numeric_examples or [])]
        return list(dict.fromkeys(v for v in shown if isinstance(v, (str, int, float, bool))))

    def rows(self) -> int | None:
        """Length of the first axis, when known."""
        if self.shape:
            first = self.shape[0]
            return first if isinstance(first, int) else None
        return self.length


@dataclass
class ModuleInfo:
    alias: str
    module: str
    version: str | None
    grad_enabled: bool | None = None  # torch: autograd on at probe time
    facts: dict[str, Any] = field(default_factory=dict)  # all facts by key (torch: autocast, cuda_available)


@dataclass
class RuntimeView:
    objects: dict[str, ObjInfo] = field(default_factory=dict)
    modules: dict[str, ModuleInfo] = field(default_factory=dict)  # by alias in the notebook
    undefined: set[str] = field(default_factory=set)  # names the kernel certainly does not define
    formula_undefined: set[str] = field(default_factory=set)  # variables of the cell's formulas it lacks
    python: str | None = None
    syntax_error: dict[str, Any] | None = None
    parsed: bool = False  # the kernel's probe parsed the cell as its shell runs it
    source: str = "probe"
    imports: list[dict[str, Any]] = field(default_factory=list)  # the probe's verdicts on the cell's imports

    def get(self, expr: str) -> ObjInfo | None:
        return self.objects.get(expr)

    def version(self, library: str) -> str:
        """The version of a library the kernel has imported ("" when unknown)."""
        found = [m.version for m in self.modules.values() if m.module == library and m.version]
        return str(found[0]) if found else ""

    def at_least(self, library: str, *minimum: int) -> bool:
        """The kernel's `library` is known and at least `minimum` (major, minor, ...)."""
        try:
            parts = tuple(int(p) for p in self.version(library).split(".")[: len(minimum)])
        except ValueError:
            return False
        return len(parts) == len(minimum) and parts >= minimum

    def is_library(self, name: str) -> bool:
        """True when `name` certainly holds a module, builtin value or library object."""
        if name in self.modules:
            return True
        info = self.objects.get(name)
        if info is None or info.missing:
            return False
        if info.user_code is not None:
            return not info.user_code
        if info.type in CALLABLE_TYPES or not info.type:
            return False
        if info.type in BUILTIN_VALUE_TYPES:
            return True
        return type_root(info.type) in TRUSTED_ROOTS

    def global_binds(self, name: str) -> frozenset[str] | None:
        """The notebook globals that calling (into) the kernel object `name` may bind: the probe's
        `binds_globals`, read from the code reachable from the object (kernel/probe/binds.py); a module
        or builtin binds none unless it reaches namespaces; None (any) when not known."""
        info = self.objects.get(name)
        if info is not None and not info.missing:
            binds = info.raw.get("binds_globals")
            if isinstance(binds, list) and all(isinstance(b, str) for b in binds):
                return frozenset(binds)
            if info.type in BUILTIN_VALUE_TYPES and info.type not in CONTAINER_TYPES:
                return frozenset()  # a number or a string holds no code
            return None
        module = self.modules.get(name)
        if module is not None:
            return None if module.module.split(".", 1)[0] in NAMESPACE_MODULES else frozenset()
        return None


def _fact_map(entry: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for fact in entry.get("facts") or []:
        if isinstance(fact, dict) and isinstance(fact.get("key"), str):
            out.setdefault(fact["key"], fact.get("value"))
    return out


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _shape(value: Any) -> list[int | None] | None:
    if isinstance(value, list) and all(v is None or _int(v) is not None for v in value):
        return list(value)
    return None


def _range_items(text: str, length: int | None) -> list[Any] | None:
    """The elements of a range from its repr (`range(1, 11)`), when short and consistent with len."""
    match = re.fullmatch(r"range\((-?\d+)(?:, (-?\d+))?(?:, (-?\d+))?\)", text.strip("'"))
    if match is None:
        return None
    bounds = [int(g) for g in match.groups() if g is not None]
    if bounds[-1] == 0 and len(bounds) == 3:
        return None
    values = range(*bounds)
    if len(values) != length or len(values) > 1000:
        return None
    return list(values)


def _info_from_entry(entry: dict[str, Any]) -> ObjInfo:
    expr = normalize_expr(str(entry.get("expr", "")))
    f = _fact_map(entry)
    info = ObjInfo(expr=expr, type=str(entry.get("type") or ""), missing=bool(entry.get("missing")))
    info.facts = [f"{expr}.{k} = {v}" for k, v in f.items() if k != "repr"]
    info.raw = f
    module = f.get("module")
    if isinstance(module, str):
        info.module = module
        # Only the known libraries run no notebook code; a helper module next to the notebook may.
        info.user_code = module.split(".", 1)[0] not in TRUSTED_ROOTS
        if isinstance(f.get("qualname"), str):
            info.path = f"{module}.{f['qualname']}"
    elif info.type.startswith("__main__."):
        info.user_code = True
    info.shape = _shape(f.get("shape"))
    info.dtype = f["dtype"] if isinstance(f.get("dtype"), str) else None
    info.length = _int(f.get("len"))
    info.min, info.max = _num(f.get("min")), _num(f.get("max"))
    info.nan = _int(f.get("nan"))
    nan_columns = f.get("nan_columns")
    if (info.nan or 0) > 0 or (isinstance(nan_columns, dict) and any(_int(v) for v in nan_columns.values())):
        info.has_nan = True
    examples = list(f["examples"]) if isinstance(f.get("examples"), list) else []
    counts = f.get("counts")
    if isinstance(counts, list):
        examples += [pair[0] for pair in counts if isinstance(pair, list) and len(pair) == 2]
    info.examples = examples or None
    if isinstance(counts, list):
        info.counts = [
            (pair[0], pair[1])
            for pair in counts
            if isinstance(pair, list) and len(pair) == 2 and _int(pair[1])
        ]
    items = f.get("items")
    if (
        info.type in ("list", "tuple")
        and isinstance(items, list)
        and info.length == len(items)
        and all(isinstance(v, (int, float, bool)) or (isinstance(v, str) and len(v) < 78) for v in items)
    ):
        info.items = items
    if info.type == "range" and isinstance(f.get("value"), str):
        info.items = _range_items(f["value"], info.length)
    columns = f.get("columns")
    if (
        isinstance(columns, list)
        and "columns_more" not in f
        and info.shape is not None
        and len(info.shape) == 2
        and info.shape[1] == len(columns)
    ):
        info.columns = columns
    index_names = f.get("index_names")
    if isinstance(index_names, list) and info.shape is not None and len(index_names) < 10:
        info.index_names = index_names
    if isinstance(f.get("column_attrs"), list):
        info.column_attrs = [str(a) for a in f["column_attrs"] if isinstance(a, str)]
    keys = f.get("keys")
    if isinstance(keys, list) and info.length is not None and len(keys) == info.length:
        info.keys = keys
    fitted = f.get("fitted")
    info.fitted = fitted if isinstance(fitted, bool) else None
    info.n_features_in = _int(f.get("n_features_in_"))
    names = f.get("feature_names_in_")
    if isinstance(names, list) and info.n_features_in == len(names):
        info.feature_names_in = [str(n) for n in names]
    for key in ("input_shape", "output_shape"):
        value = f.get(key)
        if isinstance(value, list):
            setattr(info, key, value)
    info.loss = f["loss"] if isinstance(f.get("loss"), str) else None
    steps = f.get("steps")
    if isinstance(steps, list) and all(isinstance(step, str) for step in steps):
        info.steps = [step.split("=", 1)[-1] for step in steps]
    if info.type == "call":
        info.raises = f["raises"] if isinstance(f.get("raises"), str) else "TypeError"
        info.bind_error = f["bind_error"] if isinstance(f.get("bind_error"), str) else None
        info.callee = f["callee"] if isinstance(f.get("callee"), str) else None
    value = f.get("value")
    if info.type in ("int", "float", "bool", "NoneType") and (value is None) == (info.type == "NoneType"):
        if not (info.type == "float" and isinstance(value, str)):  # "nan"/"inf" spelled as text
            info.value, info.has_value = value, True
    elif info.type == "str" and isinstance(value, str) and info.length == len(value):
        info.value, info.has_value = value, True  # complete (the probe truncates long strings)
    info.unique = _int(f.get("unique"))
    info.kind = f["kind"] if isinstance(f.get("kind"), str) else None
    info.sampled = f.get("sampled") is not None
    dtypes = f.get("dtypes")
    if isinstance(dtypes, dict) and all(isinstance(v, int) for v in dtypes.values()):
        info.dtypes = {str(k): int(v) for k, v in dtypes.items()}
    info.non_numeric = _int(f.get("non_numeric"))
    if isinstance(f.get("non_numeric_examples"), list):
        info.non_numeric_examples = list(f["non_numeric_examples"])
    compiled = f.get("compiled")
    info.compiled = compiled if isinstance(compiled, bool) else None
    info.num_classes = _int(f.get("num_classes"))
    info.device = f["device"] if isinstance(f.get("device"), str) else None
    info.requires_grad = f["requires_grad"] if isinstance(f.get("requires_grad"), bool) else None
    info.class_mode = f["class_mode"] if isinstance(f.get("class_mode"), str) else None
    info.children = [
        normalize_expr(str(c.get("expr", ""))) for c in entry.get("children") or [] if isinstance(c, dict)
    ]
    if isinstance(f.get("param_requires_grad"), bool):
        info.layer["param_requires_grad"] = f["param_requires_grad"]
    weight_dtype = f.get("weight_dtype")
    if isinstance(weight_dtype, str):
        info.layer["weight_dtype"] = weight_dtype
    for key in ("in_features", "out_features", "in_channels", "out_channels", "last_out_features"):
        if _int(f.get(key)) is not None:
            info.layer[key] = f[key]
    return info


def _paths_from_docs(view: RuntimeView, docs: Any) -> None:
    """+D docs name the library callable behind each called kernel name: `LogisticRegression` ->
    `sklearn.linear_model._logistic.LogisticRegression` (resolved in the kernel)."""
    for doc in docs if isinstance(docs, list) else []:
        if not isinstance(doc, dict):
            continue
        call, qualname = doc.get("call"), doc.get("qualname")
        if isinstance(call, str) and call.isidentifier() and isinstance(qualname, str) and "." in qualname:
            info = view.objects.setdefault(call, ObjInfo(expr=call))
            info.path = qualname
            info.module = qualname.rsplit(".", 1)[0]
            info.user_code = qualname.split(".", 1)[0] not in TRUSTED_ROOTS


def from_probe(result: dict[str, Any]) -> RuntimeView:
    """The view of a probe result (docs/architecture.md section 1). Malformed parts are skipped."""
    view = RuntimeView(source="probe")
    if not isinstance(result, dict):
        return view
    view.python = result.get("python") if isinstance(result.get("python"), str) else None
    if isinstance(result.get("syntax_error"), dict):
        view.syntax_error = result["syntax_error"]
    view.parsed = result.get("parsed") is True
    undefined = result.get("undefined")
    if isinstance(undefined, list):
        view.undefined = {n for n in undefined if isinstance(n, str)}
    in_formulas = result.get("formula_undefined")
    if isinstance(in_formulas, list):
        view.formula_undefined = {n for n in in_formulas if isinstance(n, str)}
    for mod in result.get("modules") or []:
        if isinstance(mod, dict) and isinstance(mod.get("name"), str) and mod["name"]:
            version = mod.get("version")
            module = ModuleInfo(
                mod["name"],
                str(mod.get("module") or mod["name"]),
                version if isinstance(version, str) else None,
            )
            module.facts = _fact_map(mod)
            grad = module.facts.get("grad_enabled")
            module.grad_enabled = grad if isinstance(grad, bool) else None
            view.modules[mod["name"]] = module
            aliases = mod.get("aliases")
            for alias, full in aliases.items() if isinstance(aliases, dict) else ():
                if isinstance(alias, str) and isinstance(full, str) and alias not in view.modules:
                    view.modules[alias] = ModuleInfo(
                        alias, full, module.version, module.grad_enabled, module.facts
                    )
    view.imports = [e for e in result.get("imports") or [] if isinstance(e, dict)]
    _paths_from_docs(view, result.get("docs"))
    stack: list[tuple[dict[str, Any], ObjInfo | None]] = [
        (e, None) for e in (result.get("objects") or []) if isinstance(e, dict)
    ]
    while stack:
        entry, parent = stack.pop(0)
        info = _info_from_entry(entry)
        if parent is not None and parent.is_frame and info.is_series and info.shape is None and parent.shape:
            info.shape = [parent.shape[0]]  # a column has the frame's rows
        known = view.objects.get(info.expr)
        if known is not None and known.path and not known.type:  # made from +D docs: keep its path
            info.path, info.module, info.user_code = known.path, known.module, known.user_code
            view.objects[info.expr] = info
        elif info.expr and info.expr not in view.objects:
            view.objects[info.expr] = info
        stack.extend((c, info) for c in entry.get("children") or [] if isinstance(c, dict))
    return view
