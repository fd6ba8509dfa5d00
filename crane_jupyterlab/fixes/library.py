"""The installed libraries' own answers for a fix: a callee's parameters, the names a module or a class
has, the text a module gives for a name it no longer has, the module of a package that defines a name.

Read first from what the probe saw in the kernel (its `params` of a call that cannot bind, its
`elsewhere` of an import); otherwise in this process, and only for a library whose installed version
here is the kernel's (read from the probe's facts), so the answer is the kernel's library's too. A
module is imported here only then: never the notebook's own code (it has no installed version), never a
file that shadows the library (the module must come from the distribution's own folder).
"""

from __future__ import annotations

import ast
import builtins
import difflib
import importlib
import importlib.metadata
import importlib.util
import inspect
import pkgutil
import sys
import threading
import types
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

# A package's direct submodules imported here to find which one defines a name: at most this many.
MAX_SUBMODULES = 60
_SEARCHED: dict[str, dict[str, list[str]]] = {}  # package -> name -> its public modules defining it
_SEARCH_LOCK = threading.Lock()


@dataclass(frozen=True)
class Params:
    """How a callee takes its arguments."""

    positional: tuple[str, ...]  # the names an argument may be given by position, in order
    keyword_only: tuple[str, ...]
    var_positional: bool
    var_keyword: bool

    @property
    def keywords(self) -> list[str]:
        return [*self.positional, *self.keyword_only]

    @classmethod
    def from_names(cls, names: Iterable[Any]) -> Params:
        """From the probe's `params` fact: names in order with "/", "*", "*args", "**kwargs" markers."""
        positional: list[str] = []
        keyword_only: list[str] = []
        pos_only: list[str] = []
        star = var_pos = var_kw = False
        for name in names:
            if not isinstance(name, str):
                continue
            if name == "/":
                pos_only, positional = pos_only + positional, []
            elif name == "*":
                star = True
            elif name.startswith("**"):
                var_kw = True
            elif name.startswith("*"):
                star = var_pos = True
            else:
                (keyword_only if star else positional).append(name)
        # positional-only names cannot be given by keyword, but they hold positions all the same
        return cls((*pos_only, *positional), tuple(keyword_only), var_pos, var_kw)

    @classmethod
    def from_signature(cls, sig: inspect.Signature, drop_first: bool = False) -> Params:
        kinds = inspect.Parameter
        params = list(sig.parameters.values())[1 if drop_first else 0 :]
        return cls(
            tuple(p.name for p in params if p.kind in (kinds.POSITIONAL_ONLY, kinds.POSITIONAL_OR_KEYWORD)),
            tuple(p.name for p in params if p.kind is kinds.KEYWORD_ONLY),
            any(p.kind is kinds.VAR_POSITIONAL for p in params),
            any(p.kind is kinds.VAR_KEYWORD for p in params),
        )


def close(name: str, options: Iterable[str], n: int = 3) -> list[str]:
    """Names close to `name`, the closest first; the same letters in another case or without the
    underscores count first (`numworkers` -> `num_workers`)."""
    options = [o for o in dict.fromkeys(options) if o != name]
    squashed = name.lower().replace("_", "")
    same = [o for o in options if o.lower().replace("_", "") == squashed]
    hits = same + difflib.get_close_matches(name, options, n=n, cutoff=0.6)
    return list(dict.fromkeys(hits))[:n]


def public(names: Iterable[str]) -> list[str]:
    return [n for n in names if isinstance(n, str) and not n.startswith("_")]


def dotted(node: ast.expr) -> list[str] | None:
    """`a.b.c` as ["a", "b", "c"]; None for anything that is not names and attributes."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return [node.id, *reversed(parts)]


class Library:
    """The libraries as the kernel has them, for one crash's cell."""

    def __init__(self, runtime: dict[str, Any], cells: Iterable[str]) -> None:
        self.runtime = runtime
        self.versions: dict[str, str] = {}  # top-level module -> the kernel's version
        self.modules: dict[str, str] = {}  # a name the kernel or the cells bind -> the module it is
        self.imported: dict[str, tuple[str, str]] = {}  # a name -> (module, name) a `from` import binds
        for entry in runtime.get("modules") or []:
            if not isinstance(entry, dict) or not isinstance(entry.get("module"), str):
                continue
            module, name = entry["module"], entry.get("name")
            if isinstance(entry.get("version"), str):
                self.versions.setdefault(module.split(".")[0], entry["version"])
            aliases = entry.get("aliases")
            aliases = aliases if isinstance(aliases, dict) else {}
            if isinstance(name, str) and name not in aliases:
                self.modules[name] = module
            self.modules.update({k: v for k, v in aliases.items() if isinstance(v, str)})
        for entry in runtime.get("imports") or []:
            if isinstance(entry, dict) and isinstance(entry.get("version"), str):
                self.versions.setdefault(str(entry.get("module")).split(".")[0], entry["version"])
        for cell in cells:
            self._read_imports(cell)

    def _read_imports(self, cell: str) -> None:
        try:
            tree = ast.parse(cell)
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            return
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self.modules[alias.asname] = alias.name
                    else:
                        top = alias.name.split(".")[0]
                        self.modules[top] = top
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    if alias.name != "*":
                        self.imported[alias.asname or alias.name] = (node.module, alias.name)

    # -- what the probe saw -------------------------------------------------------------------------

    def entries(self) -> Iterator[dict[str, Any]]:
        stack = list(self.runtime.get("objects") or [])
        while stack:
            entry = stack.pop(0)
            if isinstance(entry, dict):
                yield entry
                stack.extend(entry.get("children") or [])

    def entry(self, expr: str) -> dict[str, Any] | None:
        return next((e for e in self.entries() if e.get("expr") == expr), None)

    @staticmethod
    def fact(entry: dict[str, Any], key: str) -> Any:
        for fact in entry.get("facts") or []:
            if isinstance(fact, dict) and fact.get("key") == key:
                return fact.get("value")
        return None

    def canonical(self, name: str) -> str:
        """The module a root name stands for (`np` -> `numpy`), else the name."""
        return self.modules.get(name, name)

    # -- answers ------------------------------------------------------------------------------------

    def params(self, call_text: str, func: ast.expr, qualname: str | None = None) -> Params | None:
        """How the call's callee takes arguments: the probe's reading in the kernel, else this
        process's reading of the same library, reaching the callee through the cell's names or, for an
        object the cell made itself, through the qualname the crash's message gives."""
        entry = self.entry(call_text)
        names = self.fact(entry, "params") if entry is not None else None
        if isinstance(names, list):
            return Params.from_names(names)
        found = self.resolve(func) or (self.qualified(qualname) if qualname else None)
        if found is None:
            return None
        obj, bound = found
        try:
            return Params.from_signature(inspect.signature(obj), drop_first=bound)
        except (TypeError, ValueError):
            return None

    def qualified(self, qualname: str) -> tuple[Any, bool] | None:
        """A callee by the qualname a message gives: `DataFrame.drop` (a method of a library class),
        `OneHotEncoder.__init__` (the class), `concat` (a top-level function of a library the cell
        uses)."""
        parts = qualname.split(".")
        if parts[-1] in ("__init__", "__new__") and len(parts) > 1:
            cls = self.class_named(parts[-2])
            return (cls, False) if cls is not None else None
        if len(parts) == 1:
            for top in self.versions:
                found = getattr(self.module(top), parts[0], None)
                if callable(found):
                    return found, False
            return None
        cls = self.class_named(parts[-2])
        if cls is None:
            return None
        try:
            static = inspect.getattr_static(cls, parts[-1])
            return getattr(cls, parts[-1]), inspect.isfunction(static)
        except AttributeError:
            return None

    def resolve(self, func: ast.expr) -> tuple[Any, bool] | None:
        """The object a callee expression names, and whether it is a function reached through an
        instance (its first parameter is the instance); None when no library of the kernel's version
        here holds it."""
        parts = dotted(func)
        if parts is None:
            return None
        root, rest = parts[0], parts[1:]
        if root in self.modules:
            return _walk(self.module(self.modules[root]), rest, self.modules[root], self)
        if root in self.imported:
            module, name = self.imported[root]
            return _walk(self.object_at(f"{module}.{name}"), rest, f"{module}.{name}", self)
        entry = self.entry(root)
        if entry is None:
            return None
        module, qualname = self.fact(entry, "module"), self.fact(entry, "qualname")
        if isinstance(module, str) and isinstance(qualname, str):  # a class or function of a library
            return _walk(self.object_at(f"{module}.{qualname}"), rest, None, self)
        cls = self.object_at(str(entry.get("type") or ""))  # an instance: its class's attribute
        if not isinstance(cls, type) or not rest:
            return None
        try:
            static = inspect.getattr_static(cls, rest[0])
            attr = getattr(cls, rest[0])
        except AttributeError:
            return None
        bound = inspect.isfunction(static)  # not a staticmethod; a classmethod comes back bound
        return _walk(attr, rest[1:], None, self) if len(rest) > 1 else (attr, bound)

    def module(self, name: str) -> types.ModuleType | None:
        """The module, imported here when its library here is the kernel's version; None otherwise."""
        top = name.split(".")[0]
        if top not in self.versions or not same_version(top, self.versions[top]):
            return None
        try:
            return importlib.import_module(name)
        except Exception:  # a submodule that is not there, or fails to import here
            return None

    def object_at(self, path: str) -> Any:
        """The object at a dotted path (a module, then attributes); None when there is none."""
        parts = path.split(".")
        if parts[0] not in self.versions:
            return None
        for k in range(len(parts), 0, -1):
            module = self.module(".".join(parts[:k]))
            if module is None:
                continue
            obj: Any = module
            try:
                for attr in parts[k:]:
                    obj = getattr(obj, attr)
            except Exception:
                return None
            return obj
        return None

    def class_named(self, name: str) -> type | None:
        """The library class a message names by its bare name (`'Series' object has no attribute`):
        an object's class the probe saw, a `from` import, else a top-level name of a library the cell
        uses."""
        for entry in self.entries():
            kind = str(entry.get("type") or "")
            if kind.rsplit(".", 1)[-1] == name:
                found = self.object_at(kind)
                if isinstance(found, type):
                    return found
        if name in self.imported:
            found = self.object_at(".".join(self.imported[name]))
            if isinstance(found, type):
                return found
        tops = [m for m in map(self.module, self.versions) if m is not None]
        for module in tops:
            found = getattr(module, name, None)
            if isinstance(found, type):
                return found
        # A base class the message names by its own name (`NDFrame.to_csv`): through a public class
        for module in tops:
            for value in list(vars(module).values()):
                if isinstance(value, type):
                    base = next((b for b in value.__mro__ if b.__name__ == name), None)
                    if base is not None:
                        return base
        return None

    def absent_text(self, module: str, name: str) -> str | None:
        """What the module itself says when asked for a name it no longer has (a PEP 562 `__getattr__`
        naming the replacement); None when it has the name or says nothing more than that."""
        mod = self.module(module)
        if mod is None:
            return None
        try:
            getattr(mod, name)
        except (AttributeError, ImportError) as exc:
            text = str(exc)
            return (
                text
                if name in text and len(text) > len(f"module '{module}' has no attribute '{name}'")
                else None
            )
        except Exception:
            return None
        return None

    def elsewhere(self, module: str, name: str) -> list[str]:
        """Public modules of the same package that define `name`: the probe's answer from the kernel's
        loaded modules, else this process's search of the package's direct submodules."""
        found: list[str] = []
        for entry in self.runtime.get("imports") or []:
            if isinstance(entry, dict) and entry.get("module") == module and entry.get("name") == name:
                found += [m for m in entry.get("elsewhere") or [] if isinstance(m, str)]
        top = module.split(".")[0]
        if not found and self.module(top) is not None:
            found = [m for m in _package_index(top).get(name, []) if m != module]
        return list(dict.fromkeys(found))


def _walk(obj: Any, rest: list[str], path: str | None, lib: Library) -> tuple[Any, bool] | None:
    """Attribute steps from obj (a step a module lacks may be a submodule not imported yet)."""
    if obj is None:
        return None
    for attr in rest:
        try:
            obj = getattr(obj, attr)
        except AttributeError:
            if path is None or not isinstance(obj, types.ModuleType):
                return None
            obj = lib.module(f"{path}.{attr}")
            if obj is None:
                return None
        except Exception:
            return None
        path = f"{path}.{attr}" if path is not None else None
    return obj, False


@cache
def _distributions() -> dict[str, list[str]]:
    return dict(importlib.metadata.packages_distributions())


def same_version(top: str, version: str) -> bool:
    """Whether this process has the library `top` installed at `version`, from that distribution's own
    folder (not a module of the same name that shadows it)."""
    return _installed(top) == version


@cache
def _installed(top: str) -> str | None:
    if top in sys.stdlib_module_names or hasattr(builtins, top):
        return None
    for dist_name in _distributions().get(top, []):
        try:
            dist = importlib.metadata.distribution(dist_name)
            spec = importlib.util.find_spec(top)
        except (importlib.metadata.PackageNotFoundError, ImportError, ValueError):
            continue
        origin = spec.origin if spec is not None else None
        home = Path(str(dist.locate_file(""))).resolve()
        if origin is None or not Path(origin).resolve().is_relative_to(home):
            continue
        return str(dist.version)
    return None


def _package_index(top: str) -> dict[str, list[str]]:
    """name -> the package's public direct submodules defining it (imported here once per process)."""
    with _SEARCH_LOCK:
        if top in _SEARCHED:
            return _SEARCHED[top]
        index: dict[str, list[str]] = {}
        package = sys.modules.get(top)
        paths = getattr(package, "__path__", None) or []
        subs = [m.name for m in pkgutil.iter_modules(paths) if not m.name.startswith("_")]
        for sub in subs[:MAX_SUBMODULES]:
            if sub in ("tests", "test", "testing", "conftest", "setup"):
                continue
            try:
                module = importlib.import_module(f"{top}.{sub}")
            except Exception:  # an optional dependency missing here: that module is not searched
                continue
            for name in public(vars(module)):
                index.setdefault(name, []).append(f"{top}.{sub}")
        _SEARCHED[top] = index
        return index
