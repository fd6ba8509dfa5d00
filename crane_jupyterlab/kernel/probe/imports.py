"""Whether the cell's imports can succeed, decided from the kernel's import system as it is now, without
importing anything and without running package code that is not loaded yet.

For `import a.b.c` / `from a.b import c` each dotted prefix is looked up as the import system would:
`sys.modules` first; a top-level name through `sys.meta_path` (with `sys.path` as earlier cells left
it); a submodule through its loaded parent's `__path__`. The lookup stops at the first prefix that is
found but not loaded: importing it runs its `__init__`, which may add submodules, change `__path__`
or put entries in `sys.modules`, so nothing is known past it. `from x import y` on a loaded `x` also
asks `x` for `y` (its namespace, a submodule on its `__path__`, and a trusted library's PEP 562
`__getattr__`, which `access._get_attr` calls only where it imports nothing).

Finders are asked only where asking runs no code that is not the interpreter's: the standard library's
`BuiltinImporter`, `FrozenImporter`, `WindowsRegistryFinder` and `PathFinder` (re-implemented over
`sys.path_importer_cache` so that nothing is cached or created), and a few third-party finders whose
lookup is a table read (setuptools' editable finder, six's `six.moves` importer, the distutils and
virtualenv shims, the absl reload detector TensorFlow installs). Any other finder, path hook or path
entry makes the answer unknown. A directory counts as holding a module when it has a subdirectory or
a file with an import suffix of that name: a superset of what `FileFinder` finds, so "missing" stays true.

Each entry: `{"line", "module", "name", "state"}` with state `loaded` (every part already imported),
`found` (it exists, and code will run), `missing` (+ `missing`: the dotted name no finder has),
`no-name` (`from x import y`: x has no `y`; + `note`: the library's own error text), or
`unknown`; `missing`/`no-name` add `version` (of the top package) and `elsewhere` (loaded public
modules of the same package that define the name).
"""

from __future__ import annotations

import ast
import os
import sys
import types
from typing import Any

from .access import _get_attr, _trusted_module
from .safe import _MISSING, _TYPE_MODULE, _TYPE_NAME, _class_dict, _class_str, _inst_dict, _module_dict

MAX_IMPORTS = 40

_BOOT: Any = sys.modules.get("_frozen_importlib")
_EXTERNAL: Any = sys.modules.get("_frozen_importlib_external")


def import_facts(tree: ast.AST) -> list[dict[str, Any]]:
    """One entry per name an absolute import statement of the cell imports (relative ones are skipped)."""
    out: list[dict[str, Any]] = []
    for node in ast.walk(tree):
        if len(out) >= MAX_IMPORTS:
            break
        pairs: list[tuple[str, str | None]]
        if isinstance(node, ast.Import):
            pairs = [(alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            pairs = [(node.module, alias.name) for alias in node.names]
        elif isinstance(node, ast.Call):
            ext = load_ext_module(node)
            if ext is None or _builtin_extension(ext):
                continue
            pairs = [(ext, None)]  # `%load_ext x` imports x
        else:
            continue
        for module, name in pairs:
            try:
                entry = _judge(module, name)
            except Exception:
                entry = {"state": "unknown"}
            entry.update({"line": getattr(node, "lineno", None), "module": module, "name": name})
            out.append(entry)
    return out


def load_ext_module(node: ast.AST) -> str | None:
    """x for `%load_ext x` as IPython transforms it: `get_ipython().run_line_magic('load_ext', 'x')`."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return None
    shell = node.func.value
    if node.func.attr != "run_line_magic" or not (
        isinstance(shell, ast.Call) and isinstance(shell.func, ast.Name) and shell.func.id == "get_ipython"
    ):
        return None
    args = node.args
    if len(args) < 2 or node.keywords or not all(isinstance(a, ast.Constant) for a in args[:2]):
        return None
    magic, value = args[0].value, args[1].value  # type: ignore[attr-defined]
    if magic != "load_ext" or type(value) is not str:
        return None
    name = value.strip()
    return name if name and all(part.isidentifier() for part in name.split(".")) else None


def _builtin_extension(name: str | None) -> bool:
    """IPython loads `IPython.extensions.<name>` when `<name>` is missing (autoreload, storemagic): or
    IPython's table cannot be read (then nothing is said)."""
    table = _module_dict(sys.modules.get("IPython.core.extensions")).get("BUILTINS_EXTS")
    return type(table) is not dict or name in table


def _judge(dotted: str, name: str | None) -> dict[str, Any]:
    parts = dotted.split(".")
    parent: Any = None
    for i in range(len(parts)):
        full = ".".join(parts[: i + 1])
        mod = sys.modules.get(full, _MISSING)
        if mod is None:
            return {"state": "unknown"}  # "import of x halted": a deliberate block, rare
        if mod is not _MISSING:
            parent = mod
            continue
        found = _find(full, None) if parent is None else _find_sub(full, parent)
        if found is None:
            return {"state": "unknown"}
        if not found:
            return _absent({"state": "missing", "missing": full}, parts[0], name)
        return {"state": "found"}
    if name is None or name == "*":
        return {"state": "loaded"}
    d = _module_dict(parent)
    if name in d or sys.modules.get(f"{dotted}.{name}") is not None:
        return {"state": "loaded"}
    if "__path__" in d:
        sub = _find_sub(f"{dotted}.{name}", parent)
        if sub is None:
            return {"state": "unknown"}
        if sub:
            return {"state": "found"}
    if type(parent) is not types.ModuleType:
        return {"state": "unknown"}  # a module subclass answers attribute lookups its own way
    entry: dict[str, Any] = {"state": "no-name"}
    if "__getattr__" in d:
        # PEP 562: `from x import y` asks x.__getattr__('y'). Only a trusted library's is called, and
        # only for a name that is no submodule (access._get_attr), e.g. numpy's table of removed aliases.
        if not _trusted_module(parent):
            return {"state": "unknown"}
        try:
            _get_attr(parent, name)
        except (AttributeError, ImportError) as exc:  # sklearn raises ImportError for load_boston
            args = exc.args if type(exc.args) is tuple else ()
            if args and type(args[0]) is str and args[0] and len(args[0]) < 600:
                entry["note"] = args[0]
        except Exception:  # access._Unsafe included: not asked
            return {"state": "unknown"}
        else:
            return {"state": "loaded"}
    return _absent(entry, parts[0], name)


def _absent(entry: dict[str, Any], top: str, name: str | None) -> dict[str, Any]:
    version = _module_dict(sys.modules.get(top)).get("__version__")
    if type(version) is str:
        entry["version"] = version
    if name and name != "*":
        elsewhere = _elsewhere(top, name)
        if elsewhere:
            entry["elsewhere"] = elsewhere
    return entry


def _elsewhere(top: str, name: str) -> list[str]:
    """Loaded public modules of package `top` whose namespace defines `name` as a function or class of
    that package (where `train_test_split` went when `sklearn.cross_validation` was removed)."""
    found = []
    for modname, mod in list(sys.modules.items()):
        if not (modname == top or modname.startswith(top + ".")) or type(mod) is not types.ModuleType:
            continue
        if any(p.startswith("_") for p in modname.split(".")):
            continue
        value = _module_dict(mod).get(name, _MISSING)
        if value is _MISSING:
            continue
        if isinstance(value, type):
            home = _class_str(_TYPE_MODULE, value)
        elif type(value) is types.FunctionType:
            home = value.__module__
        else:
            continue
        if type(home) is str and (home == top or home.startswith(top + ".")):
            found.append(modname)
    found.sort(key=lambda m: (m.count("."), m))
    return found[:2]


# ----- the finders ---------------------------------------------------------------------------------------


def _find(fullname: str, path: Any) -> bool | None:
    """Whether some finder on sys.meta_path has `fullname` (`path`: the parent's __path__, None for a
    top-level name); None when a finder could not be asked without running its code."""
    for finder in list(sys.meta_path):
        answer = _ask(finder, fullname, path)
        if answer is None:
            return None
        if answer:
            return True
    return False


def _find_sub(fullname: str, parent: Any) -> bool | None:
    d = _module_dict(parent)
    if "__path__" not in d:
        return False  # "No module named 'a.b'; 'a' is not a package" (no finder is asked)
    return _find(fullname, d["__path__"])


def _ask(finder: Any, fullname: str, path: Any) -> bool | None:
    stdlib = (
        getattr(_BOOT, "BuiltinImporter", None),
        getattr(_BOOT, "FrozenImporter", None),
        getattr(_EXTERNAL, "WindowsRegistryFinder", None),  # on Windows: a registry read
    )
    if any(f is not None and finder is f for f in stdlib):
        return finder.find_spec(fullname, path) is not None  # the interpreter's tables, no notebook code
    if _EXTERNAL is not None and finder is getattr(_EXTERNAL, "PathFinder", None):
        entries = sys.path if path is None else _entries(path)
        if entries is None:
            return None
        return _on_path(fullname.rpartition(".")[2], entries)
    cls = finder if isinstance(finder, type) else type(finder)
    where = _class_str(_TYPE_MODULE, cls)
    kind = _class_str(_TYPE_NAME, cls)
    module = _module_dict(sys.modules.get(where))
    if kind == "_EditableFinder" and where.startswith("__editable__"):
        # setuptools' editable install: top-level names from MAPPING, their children on MAPPING's path
        mapping = module.get("MAPPING")
        if type(mapping) is not dict:
            return None
        if fullname in mapping:
            return True
        head = fullname.rpartition(".")[0]
        target = mapping.get(head) if head else None
        if type(target) is str:
            return _on_path(fullname.rpartition(".")[2], [target])
        return False
    if kind == "DistutilsMetaFinder" and where == "_distutils_hack":
        if path is not None and not fullname.startswith("test."):
            return False
        attr = "spec_for_" + fullname
        return None if any(attr in _class_dict(c) for c in cls.__mro__) else False
    if kind == "_SixMetaPathImporter" and (where == "six" or where.endswith(".six")):
        known = _inst_dict(finder).get("known_modules") if not isinstance(finder, type) else None
        return None if type(known) is not dict or fullname in known else False
    if kind == "ReloadDetector" and where == "absl.flags._flagvalues":
        return False  # TensorFlow's absl: records reloads of loaded names, always returns None
    if kind == "MetadataPathFinder" and where == "importlib_metadata":
        # the importlib_metadata backport (litellm, keyring...): finds distributions, never modules
        owner = next((c for c in cls.__mro__ if "find_spec" in _class_dict(c)), None)
        null = owner is not None and _class_str(_TYPE_NAME, owner) == "NullFinder"
        return False if null and _class_str(_TYPE_MODULE, owner) == "importlib_metadata._compat" else None
    if kind == "_Finder" and where == "_virtualenv":
        patched = module.get("_DISTUTILS_PATCH")
        return None if type(patched) is not tuple or fullname in patched else False
    return None


def _entries(path: Any) -> list[str] | None:
    """A package's search path as a list, read without recomputing a namespace package's path."""
    if type(path) is list:
        return path
    if type(path).__name__ == "_NamespacePath" and type(path).__module__ in (
        "_frozen_importlib",
        "_frozen_importlib_external",
        "importlib._bootstrap_external",
    ):
        state = _inst_dict(path)
        if state.get("_last_parent_path") != tuple(_parent_path(state)):
            return None  # stale: iterating it would recompute it through the finders
        if "_last_epoch" in state and state.get("_last_epoch") != getattr(type(path), "_epoch", None):
            return None
        inner = state.get("_path")
        return inner if type(inner) is list else None
    return None


def _parent_path(state: dict[str, Any]) -> Any:
    name = state.get("_name")
    if type(name) is not str:
        return ()
    head = name.rpartition(".")[0]
    if not head:
        return sys.path
    parent = sys.modules.get(head)
    return _module_dict(parent).get("__path__", ()) if parent is not None else ()


_UNKNOWN = object()  # an entry only a finder other than FileFinder could read


def _suffixes() -> list[str]:
    return [
        *getattr(_EXTERNAL, "EXTENSION_SUFFIXES", []),
        *getattr(_EXTERNAL, "SOURCE_SUFFIXES", []),
        *getattr(_EXTERNAL, "BYTECODE_SUFFIXES", []),
    ]


def _folders(entries: list[Any]) -> Any:
    """PathFinder's walk over `entries`, read from the disk: each folder FileFinder would search, in
    order, or `_UNKNOWN` (then the walk stops) where an entry needs another finder or path hook."""
    file_finder = getattr(_EXTERNAL, "FileFinder", None)
    if file_finder is None or not _suffixes():
        yield _UNKNOWN
        return
    plain_hooks = _plain_hooks()
    for entry in list(entries):
        if type(entry) is not str:
            yield _UNKNOWN
            return
        try:
            key = entry or os.getcwd()
        except OSError:
            continue  # PathFinder skips '' when the working directory is gone
        finder = sys.path_importer_cache.get(key, _MISSING)
        folder: Any = None
        if finder is _MISSING:
            if not os.path.exists(key):
                continue  # no hook accepts it (FileFinder wants a directory, zipimport a file)
            if not plain_hooks or not os.path.isdir(key):
                yield _UNKNOWN
                return
            folder = key
        elif finder is None:
            continue
        elif type(finder) is file_finder:
            folder = getattr(finder, "path", None)
        else:
            yield _UNKNOWN  # zipimport or a notebook's own path hook
            return
        if type(folder) is not str:
            yield _UNKNOWN
            return
        yield folder


def _on_path(tail: str, entries: list[Any]) -> bool | None:
    """PathFinder over `entries` for the module named `tail`, read from the disk: None when an entry
    needs a finder that is not the standard library's FileFinder."""
    suffixes = _suffixes()
    for folder in _folders(entries):
        if folder is _UNKNOWN:
            return None
        if os.path.isdir(os.path.join(folder, tail)):
            return True  # a package or a namespace portion
        if any(os.path.isfile(os.path.join(folder, tail + s)) for s in suffixes):
            return True
    return False


def package_dir(top: str) -> str | None:
    """The folder of the regular package `top` (not loaded) that `import top` would load, read from the
    disk as the finders on sys.meta_path would find it; None when unknown (a finder that cannot be asked,
    a module file, a namespace package, a zip or a path hook of the notebook's own)."""
    if sys.modules.get(top) is not None or "." in top:
        return None
    for finder in list(sys.meta_path):
        if _EXTERNAL is not None and finder is getattr(_EXTERNAL, "PathFinder", None):
            return _package_on_path(top, sys.path)
        if _ask(finder, top, None) is not False:
            return None  # found by a finder whose files are not ours to read, or unknown
    return None


def _package_on_path(top: str, entries: list[Any]) -> str | None:
    """FileFinder's order at each entry: a package folder, then a module file, then a namespace portion
    (which lets the search go on)."""
    if not _plain_hooks():
        return None
    suffixes = _suffixes()
    for folder in _folders(entries):
        if folder is _UNKNOWN:
            return None
        candidate = os.path.join(folder, top)
        inits = [os.path.join(candidate, "__init__" + s) for s in suffixes]
        if os.path.isdir(candidate) and any(os.path.isfile(init) for init in inits):
            return candidate
        if any(os.path.isfile(candidate + s) for s in suffixes):
            return None
    return None  # not found, or only namespace portions


def _plain_hooks() -> bool:
    """sys.path_hooks is the interpreter's own: zipimport and FileFinder's hook."""
    for hook in list(sys.path_hooks):
        zipimport = sys.modules.get("zipimport")
        if zipimport is not None and hook is _module_dict(zipimport).get("zipimporter"):
            continue
        if type(hook) is types.FunctionType and hook.__name__ == "path_hook_for_FileFinder":
            continue
        return False
    return True
