"""Style names a cell passes to matplotlib's `style.use`/`style.context`, judged against the kernel's own
style library (checks/rules/styles.py turns a name the library cannot load into a finding).

matplotlib is never imported: only a `matplotlib.style` already in `sys.modules` is read, through its
module dict (no attribute hooks), and `library` is read with `dict`'s own methods.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from .safe import _close, _entry, _fact, _isinst, _module_dict, _trusted_module
from .scan import _Scanner

STYLE_METHODS = ("use", "context")
MAX_STYLE_NAMES = 10


def style_entry_expr(name: str) -> str:
    """The entry's key: not an expression a cell can contain, so it never collides with one."""
    return f"<matplotlib style {name!r}>"


def _version(mod: Any) -> tuple[int, ...]:
    text = _module_dict(mod).get("__version__")
    if not isinstance(text, str) and _trusted_module(mod):
        try:
            text = getattr(mod, "__version__", None)  # matplotlib computes it lazily
        except Exception:
            text = None
    parts = []
    for p in (text if isinstance(text, str) else "").split(".")[:2]:
        if not p.isdigit():
            break
        parts.append(int(p))
    return tuple(parts)


def _style_checks(scan: _Scanner, ctx: Any) -> list[dict[str, Any]]:
    """One entry per string the cell passes to a `use`/`context` call, while `matplotlib.style` is loaded:
    whether `style.library` has it, whether it is a deprecated alias `use` maps (matplotlib 3.6-3.7), and
    whether a file of that name exists in the kernel's working directory (`use` then loads the file)."""
    out: list[dict[str, Any]] = []
    try:
        style_mod = sys.modules.get("matplotlib.style")
        mpl = sys.modules.get("matplotlib")
        if style_mod is None or mpl is None:
            return out
        library: Any = _module_dict(style_mod).get("library")
        if not _isinst(library, dict):
            return out
        names = [k for k in dict.keys(library) if type(k) is str]
        # 3.6-3.7: `use` maps the old seaborn names to 'seaborn-v0_8-*' (with a warning) before the lookup
        aliases: set[str] = set()
        found_table = False
        for modname in ("matplotlib.style", "matplotlib.style.core"):
            table: Any = _module_dict(sys.modules.get(modname)).get("_DEPRECATED_SEABORN_STYLES")
            if _isinst(table, dict):
                found_table = True
                aliases.update(k for k in dict.keys(table) if type(k) is str)
        version = _version(mpl)
        if not found_table and (len(version) < 2 or (3, 6) <= version < (3, 8)):
            return out  # a version that maps old names, or an unknown one: nothing certain
        seen: list[str] = []
        for call in scan.calls:
            method = call.method or (call.origin[1] if call.origin else None)
            if method not in STYLE_METHODS:
                continue
            for name in call.pos_strings + call.kw_strings.get("style", []):
                if name not in seen and len(seen) < MAX_STYLE_NAMES:
                    seen.append(name)
        for name in seen:
            entry = _entry(style_entry_expr(name), "matplotlib style")
            in_library = dict.__contains__(library, name)
            entry["facts"].append(_fact("V", "in_library", in_library))
            entry["facts"].append(_fact("V", "deprecated_alias", name in aliases))
            entry["facts"].append(_fact("V", "file_exists", os.path.exists(name)))
            entry["facts"].append(_fact("R", "matplotlib", ".".join(str(p) for p in version)))
            if not in_library:
                entry["facts"].append(_fact("S", "close", _close(name, names)))
                if name.startswith("seaborn") and "v0_8" not in name:
                    renamed = "seaborn-v0_8" + name[len("seaborn") :]
                    if dict.__contains__(library, renamed):
                        entry["facts"].append(_fact("S", "renamed", renamed))
            out.append(entry)
            ctx.libs.add("matplotlib")
    except Exception:
        return []
    return out
