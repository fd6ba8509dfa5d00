"""Call checks: a library call that cannot succeed with the live objects (a style that does not exist),
arguments that cannot bind to the callee's signature, and files the cell opens.
"""

from __future__ import annotations

import abc
import ast
import inspect
import sys
import types
from typing import Any

from .safe import (
    _MISSING,
    _add,
    _close,
    _Ctx,
    _entry,
    _fact,
    _get_attr,
    _inst_dict,
    _is,
    _isclass,
    _isfunction,
    _isinst,
    _ismethod,
    _module_dict,
    _mro,
    _trim,
    _Unsafe,
)
from .scan import _ops_text, _Scanner


def _call_checks(scan: _Scanner, ns: dict[str, Any], ctx: _Ctx) -> list[dict[str, Any]]:
    """Checks tied to a call's constant arguments, e.g. whether `plt.style.use('x')` names a known style."""
    out: list[dict[str, Any]] = []
    for call in scan.calls:
        if call.root is None or call.root not in ns or call.method != "use" or not call.pos_strings:
            continue
        try:
            owner: Any = ns[call.root]
            for kind, key in call.ops[:-1]:
                if kind != "attr":
                    raise _Unsafe("subscript")
                owner = _get_attr(owner, key)
        except Exception:
            continue
        if not (
            _isinst(owner, types.ModuleType) and _module_dict(owner).get("__name__") == "matplotlib.style"
        ):
            continue
        available = _module_dict(owner).get("available")
        if not isinstance(available, list):
            continue
        for style in call.pos_strings[:3]:
            entry = _entry(f"{_ops_text(call.root, call.ops)}({style!r})", "matplotlib style")
            ok = style in available or "/" in style or "." in style
            entry["facts"].append(_fact("V", "available", ok))
            if not ok:
                entry["missing"] = True
                entry["facts"].append(_fact("S", "close", _close(style, [str(s) for s in available])))
            out.append(entry)
            ctx.libs.add("matplotlib")
    return out


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
        if failed is None:
            continue
        signature, message = failed
        entry = _entry(call.text, "call")
        _add(entry, "R", "bind_error", _trim(message, 160))
        _add(entry, "R", "signature", _trim(signature, 200))
        if call.root is None and call.origin is not None:
            _add(entry, "R", "callee", ".".join(call.origin))
        out.append(entry)
    return out


def _plain_class(cls: type) -> bool:
    """A class whose call is `object.__new__` + a Python `__init__` (or object's): its signature is
    the whole truth. Metaclasses with their own `__call__`, custom `__new__` (keras layers, named
    tuples, enums) and C bases are left alone."""
    if type(cls) not in (type, abc.ABCMeta):
        return False
    new = init = None
    for klass in _mro(cls):
        d = _module_dict(klass)
        if new is None and "__new__" in d:
            new = d["__new__"]
        if init is None and "__init__" in d:
            init = d["__init__"]
    if new is not object.__new__:
        return False
    if init is object.__init__:
        return True
    return _isfunction(init) and not _decorated(init)


def _decorated(fn: Any) -> bool:
    """A wrapper that names what it wraps (functools.wraps) may accept other arguments than the
    signature inspect reports; an explicit __signature__ may say anything."""
    d = _inst_dict(fn)
    return "__wrapped__" in d or "__signature__" in d


def _bind_failure(fn: Any, n_pos: int, keywords: list[str]) -> tuple[str, str] | None:
    """(signature, TypeError message) when calling `fn` with `n_pos` positional arguments and these
    keywords must raise TypeError, whatever the values; None when it binds or when unsure."""
    if _ismethod(fn):
        target = fn.__func__
        if not _isfunction(target) or _decorated(target):
            return None
    elif _isclass(fn):
        if not _plain_class(fn) or any("__signature__" in _module_dict(k) for k in _mro(fn)):
            return None
    elif not _isfunction(fn) or _decorated(fn):
        return None
    try:
        signature = inspect.signature(fn, follow_wrapped=False)
    except Exception:
        return None
    try:
        signature.bind(*([None] * n_pos), **dict.fromkeys(keywords))
    except TypeError as exc:
        return str(signature), str(exc)
    except Exception:
        return None
    return None


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
