"""Attribute chains and subscripts of the cell (`df['col']`, `model.fc`), resolved step by step on the
live objects, and the frame columns the cell names.
"""

from __future__ import annotations

import contextlib
import inspect
import types
from typing import Any

from .access import _get_attr, _get_item, _Unsafe
from .facts import _close, _Ctx, _entry, _fact, _trim
from .safe import _MISSING, _is, _isclass, _isinst, _isroutine, _safe_dir, _type_name
from .scan import COLUMN_KWARGS, COLUMN_METHODS, _Call, _ops_text, _Ref, _Scanner
from .summarize.core import summarize


def _column_hints(scan: _Scanner, ns: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per root name: the columns the cell names (subscripts, attribute access, call arguments)."""
    hints: dict[str, dict[str, Any]] = {}

    def want(root: str, col: Any, pos: int) -> None:
        # a tuple is one label to pandas (a MultiIndex column, by levels): asked about as a whole
        one = type(col) in (str, int) or (type(col) is tuple and all(type(c) in (str, int) for c in col))
        if not one or not _is(ns.get(root), "pandas", "DataFrame"):
            return
        created = scan.created.get((root, col))
        if created is not None and created <= pos:
            return  # the cell assigns this column before reading it
        cols = hints.setdefault(root, {"columns": []})["columns"]
        if col not in cols:
            cols.append(col)

    for ref in scan.refs:
        if ref.ops and ref.ops[0][0] == "item":
            key = ref.ops[0][1]
            if type(key) is tuple:
                want(ref.root, key, ref.pos)
            for k in key if isinstance(key, (list, tuple)) else [key]:
                want(ref.root, k, ref.pos)
        elif ref.ops and ref.ops[0][0] == "attr" and _is(ns.get(ref.root), "pandas", "DataFrame"):
            with contextlib.suppress(Exception):
                if _is_column_attr(ns[ref.root], ref.ops[0][1]):
                    want(ref.root, ref.ops[0][1], ref.pos)
                    attrs = hints.setdefault(ref.root, {"columns": []}).setdefault("attrs", [])
                    if ref.ops[0][1] not in attrs:
                        attrs.append(ref.ops[0][1])
    for call in scan.calls:
        frames = _call_frames(call, ns)
        strings = [s for k, v in call.kw_strings.items() if k in COLUMN_KWARGS for s in v]
        if call.method in COLUMN_METHODS and call.root in frames:
            strings += call.pos_strings
        for frame in frames:
            for s in strings:
                want(frame, s, call.pos)
    return hints


def _call_frames(call: _Call, ns: dict[str, Any]) -> list[str]:
    names = []
    if call.root is not None and call.ops[:-1] == [] and call.method is not None:
        names.append(call.root)
    names += call.arg_names + list(call.kw_names.values())
    return [n for n in dict.fromkeys(names) if _is(ns.get(n), "pandas", "DataFrame")]


def _chain_entries(value: Any, ref: _Ref, ctx: _Ctx) -> list[dict[str, Any]]:
    """Entries for the interesting prefixes of `root.a[k].b`: missing steps, sub-objects, scalars."""
    out: list[dict[str, Any]] = []
    cur = value
    for i, (kind, key) in enumerate(ref.ops):
        expr = _ops_text(ref.root, ref.ops[: i + 1])
        parent = cur
        if _is(parent, "pandas", "DataFrame") and (kind == "item" or _is_column_attr(parent, key)):
            return out  # columns are described inside the frame's entry
        try:
            cur = _get_attr(cur, key) if kind == "attr" else _get_item(cur, key)
        except _Unsafe as why:
            entry = _entry(expr, "?")
            entry["facts"].append(_fact("R", "note", str(why)))
            out.append(entry)
            return out
        except (AttributeError, KeyError, IndexError, TypeError) as exc:
            entry = _entry(expr, _type_name(parent))
            entry["missing"] = True
            if kind == "attr":
                names = _safe_dir(parent)
                if _is(parent, "pandas", "DataFrame"):  # df.Age: a column was meant
                    names = [str(c) for c in parent.columns[:2000].tolist()] + names
                entry["facts"].append(_fact("S", "close", _close(str(key), names)))
                msg = str(exc)
                if msg and msg != str(key) and len(msg) < 300:
                    entry["facts"].append(_fact("R", "note", _trim(msg, 200)))
            elif type(parent) is dict:
                keys = [k for k in list(parent)[:500] if isinstance(k, str)]
                entry["facts"].append(_fact("S", "close", _close(str(key), keys)))
            out.append(entry)
            return out
        except Exception as exc:
            entry = _entry(expr, _type_name(parent))
            entry["error"] = f"{type(exc).__name__}: {_trim(str(exc), 120)}"
            out.append(entry)
            return out
        if _isinst(cur, types.ModuleType):
            continue
        if _isroutine(cur) or _isclass(cur):
            return out
        if _isinst(parent, types.ModuleType) and callable(cur):
            return out  # np.exp, F.relu: library callables (ufuncs, functools.partial) are not data
        if kind == "attr" and _is_data(parent):
            return out  # df.values, X.T, t.shape: derived from an entry that is already there
        out.append(summarize(cur, expr, ctx))
    return out


def _is_column_attr(df: Any, key: Any) -> bool:
    try:
        return bool(key in df.columns) and inspect.getattr_static(df, key, _MISSING) is _MISSING
    except Exception:
        return False


def _is_data(obj: Any) -> bool:
    return (
        _is(obj, "numpy", "ndarray")
        or _is(obj, "pandas", "DataFrame", "Series", "Index")
        or _is(obj, "torch", "Tensor")
        or _is(obj, "tensorflow", "Tensor")
    )
