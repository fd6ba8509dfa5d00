"""Call checks: arguments that cannot bind to the callee's signature, and files the cell opens."""

from __future__ import annotations

import ast
import inspect
import sys
from typing import Any

from .access import _get_attr, _Unsafe
from .facts import _add, _close, _Ctx, _entry, _fact, _trim
from .safe import (
    _MISSING,
    _TYPE_MODULE,
    _class_dict,
    _class_name,
    _class_str,
    _inst_dict,
    _is,
    _isclass,
    _isfunction,
    _ismethod,
    _lookup,
    _method_func,
    _module_dict,
    _mro,
    _root,
)
from .scan import _Scanner
from .signatures import _drop_first, _param_names, _plain_class, _signature_of, _signature_text

MAX_ARGUMENT_ENTRIES = 5


def _argument_checks(scan: _Scanner, ns: dict[str, Any], ctx: _Ctx) -> list[dict[str, Any]]:
    """Calls whose arguments cannot bind to the callee's signature (TypeError before its body runs):
    `sns.barplot(x, y)` where seaborn takes only `data` positionally, a keyword a library removed.

    The callee is looked up without running user code: a name of the kernel (with attribute steps), or
    a `from m import f` of this cell whose module the kernel has already imported. Only an entry for a
    call that cannot bind is emitted: the runtime text stays small."""
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for call in scan.calls:
        if len(out) >= MAX_ARGUMENT_ENTRIES or ctx.over():
            break
        if call.n_pos is None or call.keywords is None or not call.text or call.text in seen:
            continue
        seen.add(call.text)
        if len(call.text) > 300:
            continue
        try:
            if call.root is not None and call.root in ns:
                fn: Any = ns[call.root]
            elif call.origin is not None and call.origin[0] in sys.modules:
                fn = _module_dict(sys.modules[call.origin[0]]).get(call.origin[1], _MISSING)
                if fn is _MISSING:
                    continue
            else:
                continue
            for kind, key in call.ops:
                if kind != "attr":
                    raise _Unsafe("subscript")
                fn = _get_attr(fn, key)
        except Exception:
            continue
        failed = _bind_failure(fn, call.n_pos, call.keywords)
        raises = "TypeError"
        if failed is None:
            failed = _keras_leftovers(fn, call.keywords)
            raises = "ValueError"
        if failed is None:
            histtype = call.kw_strings.get("histtype", [None]) if "histtype" in call.keywords else [None]
            failed = _patch_leftovers(fn, call.keywords, histtype[0] if len(histtype) == 1 else "?")
            raises = "AttributeError"
        if failed is None:
            continue
        signature, message = failed
        entry = _entry(call.text, "call")
        _add(entry, "R", "bind_error", _trim(message, 160))
        _add(entry, "R", "signature", _trim(_signature_text(signature), 200))
        # Whole, unlike the trimmed text: a fix renames a keyword or names a positional argument by them.
        _add(entry, "R", "params", _param_names(signature))
        if raises != "TypeError":
            _add(entry, "R", "raises", raises)
        if call.root is None and call.origin is not None:
            _add(entry, "R", "callee", ".".join(call.origin))
        out.append(entry)
    return out


def _decorated(fn: Any) -> bool:
    """A wrapper that names what it wraps (functools.wraps) may accept other arguments than the
    signature inspect reports; an explicit __signature__ may say anything."""
    d = _inst_dict(fn)
    return "__wrapped__" in d or "__signature__" in d


def _bind_failure(fn: Any, n_pos: int, keywords: list[str]) -> tuple[inspect.Signature, str] | None:
    """(signature, TypeError message) when calling `fn` with `n_pos` positional arguments and these
    keywords must raise TypeError, whatever the values; None when it binds or when unsure."""
    if _ismethod(fn):
        if _decorated(_method_func(fn)):
            return None
    elif _isclass(fn):
        if not _plain_class(fn):
            return None
    elif not _isfunction(fn) or _decorated(fn):
        return None
    signature = _signature_of(fn, follow_wrapped=False)
    if signature is None:
        return None
    try:
        signature.bind(*([None] * n_pos), **dict.fromkeys(keywords))
    except TypeError as exc:
        message = exc.args[0] if exc.args and type(exc.args[0]) is str else "arguments do not bind"
        return signature, message
    except Exception:
        return None
    return None


# Keyword arguments the Keras base classes consume themselves (besides the named parameters of the
# __init__s in the class's MRO): anything else left in **kwargs is rejected with ValueError
# ("Argument(s) not recognized", "Unrecognized keyword arguments passed to Dense").
KERAS_POPPED = {
    "BaseOptimizer": frozenset({"decay"}),
    "Layer": frozenset({"input_dim", "input_shape", "implementation", "input_length", "batch_input_shape"}),
}
# Layer families whose constructors only forward **kwargs to Layer (no other keyword is taken out).
KERAS_LAYER_MODULES = ("keras.src.layers.core.", "keras.src.layers.convolutional.", "keras.src.layers.rnn.",
                       "keras.src.layers.pooling.", "keras.src.layers.regularization.",
                       "keras.src.layers.normalization.", "keras.src.layers.reshaping.",
                       "keras.src.optimizers.")  # fmt: skip


def _keras_leftovers(cls: Any, keywords: list[str]) -> tuple[inspect.Signature, str] | None:
    """(signature, message) when a Keras 3 optimizer or core layer is given keywords that no
    __init__ of its class chain names and its base class does not consume."""
    if not keywords or not _isclass(cls) or _root(cls) != "keras":
        return None
    module = _class_str(_TYPE_MODULE, cls)
    if not (module + ".").startswith(KERAS_LAYER_MODULES):
        return None
    base = next((name for klass in _mro(cls) for name in KERAS_POPPED if _class_name(klass) == name
                 and _root(klass) == "keras"), None)  # fmt: skip
    if base is None:
        return None
    accepted: set[str] = set(KERAS_POPPED[base])
    own: Any = None
    for klass in _mro(cls):
        init = _class_dict(klass).get("__init__")
        if not _isfunction(init):
            continue
        sig = _signature_of(init, follow_wrapped=False)
        if sig is None:
            return None
        own = own or sig
        accepted.update(
            p.name for p in sig.parameters.values() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        )
    if own is None or not any(p.kind is p.VAR_KEYWORD for p in own.parameters.values()):
        return None
    leftover = [k for k in keywords if k not in accepted]
    if not leftover:
        return None
    what = "Argument(s) not recognized" if base == "BaseOptimizer" else "Unrecognized keyword arguments"
    return _drop_first(own) or own, f"{what}: {', '.join(leftover)}"


def _patch_leftovers(
    fn: Any, keywords: list[str], histtype: str | None
) -> tuple[inspect.Signature, str] | None:
    """(signature, message) for matplotlib's `hist` given a keyword that is neither its parameter nor a
    property of the patches it draws (`normed=`, removed in 3.1): its docstring says `**kwargs` are
    "`~matplotlib.patches.Patch` properties", and `Artist._update_props` raises AttributeError for a
    key without a `set_<key>` method. Rectangle (bars) and Polygon (steps) must both lack it."""
    func = _method_func(fn) if _ismethod(fn) else fn
    if not keywords or not _isfunction(func):
        return None
    if func.__name__ != "hist" or func.__module__ not in ("matplotlib.pyplot", "matplotlib.axes._axes"):
        return None
    doc = func.__doc__
    if type(doc) is not str or "`~matplotlib.patches.Patch` properties" not in doc:
        return None
    signature = _signature_of(func)
    if signature is None or not any(p.kind is p.VAR_KEYWORD for p in signature.parameters.values()):
        return None
    named = {p.name for p in signature.parameters.values() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    patches = _module_dict(sys.modules.get("matplotlib.patches"))
    drawn: list[Any] = [patches.get("Rectangle"), patches.get("Polygon")]
    if not all(_isclass(c) for c in drawn):
        return None
    leftover = [
        k for k in keywords
        if k not in named and k != "axes" and all(_lookup(c, f"set_{k}")[1] is _MISSING for c in drawn)
    ]  # fmt: skip
    if not leftover:
        return None
    artist = {None: "Rectangle", "bar": "Rectangle", "barstacked": "Rectangle", "step": "Polygon",
              "stepfilled": "Polygon"}.get(histtype, "Patch")  # fmt: skip
    return signature, (
        f"passes {leftover[0]}= to its patches: {artist}.set() got an unexpected keyword argument "
        f"{leftover[0]!r} (not a Patch property of the installed matplotlib)"
    )


def _path_checks(scan: _Scanner, ns: dict[str, Any]) -> list[dict[str, Any]]:
    """Whether the files the cell opens exist (relative to the kernel's working directory)."""
    import os

    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for call in scan.calls:
        for node in call.paths:
            path = _static_str(node, ns, scan, 0)
            if path is None or path in seen or len(seen) >= 5 or "\n" in path or not 0 < len(path) < 400:
                continue
            if "://" in path:
                continue  # a URL: not ours to fetch
            seen.add(path)
            entry = _entry(f"path {path!r}", "path")
            exists = os.path.exists(path)
            entry["facts"].append(_fact("V", "exists", exists))
            if not exists:
                entry["missing"] = True
                parent = os.path.dirname(path) or "."
                if os.path.isdir(parent):
                    names = sorted(os.listdir(parent))[:2000]
                    entry["facts"].append(_fact("S", "close", _close(os.path.basename(path), names)))
                else:
                    entry["facts"].append(_fact("R", "note", f"folder {parent!r} does not exist either"))
            out.append(entry)
    return out


def _static_str(node: ast.expr, ns: dict[str, Any], scan: _Scanner, depth: int) -> str | None:
    """A path expression's value when it needs no code to run: constants, kernel str/Path variables,
    simple f-strings, `+`, `Path / name`, `os.path.join(...)` and `Path(...)`."""
    import os

    if depth > 6:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        if node.id in scan.bound or node.id not in ns:
            return None
        value = ns[node.id]
        if type(value) is str:
            return value
        return str(value) if _is(value, "pathlib", "PurePath") else None
    if isinstance(node, ast.JoinedStr):
        parts = []
        for v in node.values:
            if isinstance(v, ast.Constant) and isinstance(v.value, str):
                parts.append(v.value)
            elif isinstance(v, ast.FormattedValue) and v.conversion == -1 and v.format_spec is None:
                inner = v.value
                val = ns.get(inner.id) if isinstance(inner, ast.Name) and inner.id not in scan.bound else None
                if type(val) not in (str, int):
                    return None
                parts.append(str(val))
            else:
                return None
        return "".join(parts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Div)):
        left = _static_str(node.left, ns, scan, depth + 1)
        right = _static_str(node.right, ns, scan, depth + 1)
        if left is None or right is None:
            return None
        return left + right if isinstance(node.op, ast.Add) else os.path.join(left, right)
    if isinstance(node, ast.Call) and not node.keywords and node.args:
        name = ast.unparse(node.func) if isinstance(node.func, (ast.Attribute, ast.Name)) else ""
        if name in ("os.path.join", "join", "Path", "pathlib.Path", "PurePath"):
            args = [_static_str(a, ns, scan, depth + 1) for a in node.args]
            if all(a is not None for a in args):
                return os.path.join(*[a for a in args if a is not None])
    return None
