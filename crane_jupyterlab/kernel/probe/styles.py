"""Style names a cell passes to matplotlib's `style.use`/`style.context`, judged against the kernel's own
style library (checks/rules/styles.py turns a name the library cannot load into a finding).

matplotlib is never imported. A `matplotlib.style` already in `sys.modules` is read through its module
dict (no attribute hooks), and `library` with `dict`'s own methods. Where matplotlib is not loaded yet
(the cell imports it: a notebook's first cell), the library is read from the disk as matplotlib builds it
on import: the `*.mplstyle` files of `mpl-data/stylelib` in the package the import system would load
(imports.package_dir), and of every folder its user style library may be in; the version from the
package's `_version.py` or its dist-info.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from .access import _trusted_module
from .facts import _close, _entry, _fact
from .imports import package_dir
from .safe import _isinst, _module_dict
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
    return _parse_version(text)


def _parse_version(text: Any) -> tuple[int, ...]:
    parts = []
    for p in (text if isinstance(text, str) else "").split(".")[:2]:
        if not p.isdigit():
            break
        parts.append(int(p))
    return tuple(parts)


STYLE_SUFFIX = ".mplstyle"


def _read(path: str, limit: int = 65536) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read(limit)
    except OSError:
        return ""


def _disk_version(package: str) -> tuple[int, ...]:
    """The installed version, read (never run): `_version.py`'s `version = "3.11.2"`, else the one
    dist-info of matplotlib beside the package."""
    for line in _read(os.path.join(package, "_version.py")).splitlines():
        head, sep, value = line.partition("=")
        if sep and head.strip() in ("version", "__version__"):
            return _parse_version(value.strip().strip("'\""))
    parent = os.path.dirname(package)
    try:
        infos = [
            n for n in os.listdir(parent) if n.lower().startswith("matplotlib-") and n.endswith(".dist-info")
        ]
    except OSError:
        return ()
    if len(infos) != 1:
        return ()
    for line in _read(os.path.join(parent, infos[0], "METADATA")).splitlines():
        if line.startswith("Version:"):
            return _parse_version(line.partition(":")[2].strip())
    return ()


def _user_style_dirs() -> list[str]:
    """Every folder `matplotlib.get_configdir()` may name (MPLCONFIGDIR, the XDG folder, ~/.matplotlib),
    each with its `stylelib`: a superset, so a user's own style is never called missing."""
    home = os.path.expanduser("~")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    roots = [os.environ.get("MPLCONFIGDIR") or "", os.path.join(xdg, "matplotlib")]
    roots += [os.path.join(home, ".config", "matplotlib"), os.path.join(home, ".matplotlib")]
    return [os.path.join(r, "stylelib") for r in roots if r]


def _library_on_disk() -> tuple[set[str], tuple[int, ...]] | None:
    """The names `matplotlib.style.library` will hold once matplotlib is imported, and the version; None
    when the package cannot be located for certain."""
    package = package_dir("matplotlib")
    if package is None:
        return None
    base = os.path.join(package, "mpl-data", "stylelib")
    if not os.path.isdir(base):
        return None
    names: set[str] = set()
    for folder in [base, *_user_style_dirs()]:
        try:
            files = os.listdir(folder)
        except OSError:
            continue
        names.update(f[: -len(STYLE_SUFFIX)] for f in files if f.endswith(STYLE_SUFFIX))
    return names, _disk_version(package)


def _style_checks(scan: _Scanner, ctx: Any) -> list[dict[str, Any]]:
    """One entry per string the cell passes to a `use`/`context` call, while `matplotlib.style` is loaded or
    matplotlib is not loaded at all (its library then read from the disk): whether `style.library` has
    it, whether it is a deprecated alias `use` maps (matplotlib 3.6-3.7), and whether a file of that
    name exists in the kernel's working directory (`use` then loads the file)."""
    out: list[dict[str, Any]] = []
    try:
        seen: list[str] = []
        for call in scan.calls:
            method = call.method or (call.origin[1] if call.origin else None)
            if method not in STYLE_METHODS:
                continue
            for name in call.pos_strings + call.kw_strings.get("style", []):
                if name not in seen and len(seen) < MAX_STYLE_NAMES:
                    seen.append(name)
        if not seen:
            return out  # no style name: nothing to read (the disk least of all)
        style_mod = sys.modules.get("matplotlib.style")
        mpl = sys.modules.get("matplotlib")
        aliases: set[str] = set()
        found_table = False
        on_disk = mpl is None
        if on_disk:
            read = _library_on_disk()
            if read is None:
                return out
            library: Any = dict.fromkeys(read[0], True)
            version = read[1]
        else:
            if style_mod is None:
                return out
            library = _module_dict(style_mod).get("library")
            if not _isinst(library, dict):
                return out
            # 3.6-3.7: `use` maps the old seaborn names to 'seaborn-v0_8-*' (with a warning) before the lookup
            for modname in ("matplotlib.style", "matplotlib.style.core"):
                table: Any = _module_dict(sys.modules.get(modname)).get("_DEPRECATED_SEABORN_STYLES")
                if _isinst(table, dict):
                    found_table = True
                    aliases.update(k for k in dict.keys(table) if type(k) is str)
            version = _version(mpl)
        names = [k for k in dict.keys(library) if type(k) is str]
        if not found_table and (len(version) < 2 or (3, 6) <= version < (3, 8)):
            return out  # a version that maps old names, or an unknown one: nothing certain
        for name in seen:
            entry = _entry(style_entry_expr(name), "matplotlib style")
            in_library = dict.__contains__(library, name)
            entry["facts"].append(_fact("V", "in_library", in_library))
            entry["facts"].append(_fact("V", "deprecated_alias", name in aliases))
            entry["facts"].append(_fact("V", "file_exists", os.path.exists(name)))
            entry["facts"].append(_fact("R", "matplotlib", ".".join(str(p) for p in version)))
            if on_disk:
                entry["facts"].append(_fact("R", "library_read_from", "disk (matplotlib not imported yet)"))
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
