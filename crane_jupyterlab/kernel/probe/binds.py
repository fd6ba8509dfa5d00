"""Which notebook globals calling an object's code may bind (the `binds_globals` fact).

A read of an undefined name after a call into notebook code is a certain NameError only when the called
code cannot bind that name. This module reads the bytecode of the notebook code reachable from one
object (a function, a class and its methods, an instance of a notebook class, a container, a bound
method, a `functools.partial`), transitively: the globals each function reads are looked up in the
notebook namespace and followed, and so are closures, defaults, class attributes, bases and instance
attributes. The answer is the set of names the code declares `global` and assigns (`STORE_GLOBAL`), or
None ("any name") when the code can reach the namespace in a way that names cannot be listed:
`exec`/`eval`/`globals()`/`vars()`/`locals()`/`setattr`/`__import__`/`get_ipython`, `__builtins__`,
frame or function-globals attributes (`f_globals`, `__globals__`, `user_ns`, `sys`, `modules`, ...),
an import of anything but an already loaded trusted library, the `builtins`, `__main__` or any untrusted
module, code outside the notebook and the trusted libraries (a helper module's function: its source
may do anything), an object this walk does not know how to read, or a walk over its bounds.

Trusted-library code is assumed not to bind the notebook's globals (the same assumption the checks make
when they call a library function "not user code"); library objects are read one level deep
(`FunctionTransformer(func=f)`, a Keras `Lambda`, a `partial`, a wrapper's closure), so notebook
functions they hold are followed too. Nothing here calls notebook code: every read goes through the
interpreter's own slots. Never raises (an error means None).
"""

from __future__ import annotations

import builtins
import dis
import functools
import sys
import types
from typing import Any

from .access import _trusted_callable
from .safe import (
    _FUNCTION_CODE,
    _MISSING,
    TRUSTED_ROOTS,
    _class_dict,
    _inst_dict,
    _isbuiltin,
    _isclass,
    _isfunction,
    _isinst,
    _ismethod,
    _method_func,
    _module_dict,
    _mro,
    _trusted,
)

# Global names whose use can bind any global.
DYNAMIC_NAMES = frozenset(
    {"exec", "eval", "compile", "globals", "vars", "locals", "setattr", "delattr", "__import__",
     "get_ipython", "__builtins__", "breakpoint", "__main__", "__dict__"}
)  # fmt: skip
# Attributes through which code can reach a namespace (a module's, a frame's, a function's, IPython's).
DYNAMIC_ATTRS = frozenset(
    {"__globals__", "f_globals", "f_locals", "f_back", "f_builtins", "tb_frame", "gi_frame", "cr_frame",
     "user_ns", "user_global_ns", "user_module", "__builtins__", "__subclasses__", "_getframe",
     "currentframe", "stack", "sys", "modules", "builtins", "__main__", "importlib", "import_module",
     "run_cell", "run_line_magic", "run_cell_magic", "push", "ex", "ev", "__setattr__", "__delattr__",
     "setattr", "exec", "eval", "globals", "get_ipython", "inspect", "__import__", "reload"}
)  # fmt: skip
# Trusted modules through which code can still reach the notebook's namespace.
UNSAFE_MODULES = frozenset({"builtins", "types", "__main__"})
SCALARS = (type(None), bool, int, float, complex, str, bytes, range, type(Ellipsis), type(NotImplemented))

_STORE_GLOBALS = frozenset({"STORE_GLOBAL", "DELETE_GLOBAL"})
_LOAD_GLOBALS = frozenset({"LOAD_GLOBAL", "LOAD_NAME", "LOAD_FROM_DICT_OR_GLOBALS"})
_ATTR_OPS = frozenset(
    {"LOAD_ATTR", "LOAD_METHOD", "STORE_ATTR", "DELETE_ATTR", "IMPORT_FROM", "LOAD_SUPER_ATTR"}
)
_STEPS = 20_000  # objects and elements visited for one entry
_LIBRARY_DEPTH = 3  # how deep a library object's attributes are followed

_FUNC_GLOBALS = types.FunctionType.__dict__["__globals__"]
_FUNC_CLOSURE = types.FunctionType.__dict__["__closure__"]
_FUNC_DEFAULTS = types.FunctionType.__dict__["__defaults__"]
_FUNC_KWDEFAULTS = types.FunctionType.__dict__["__kwdefaults__"]
_METHOD_SELF = types.MethodType.__dict__["__self__"]
_BUILTIN_SELF = types.BuiltinFunctionType.__dict__["__self__"]
_BUILTIN_NAME = types.BuiltinFunctionType.__dict__["__name__"]
_STATIC_FUNC = staticmethod.__dict__["__func__"]
_CLASS_FUNC = classmethod.__dict__["__func__"]
_PROPERTY_PARTS = tuple(property.__dict__[k] for k in ("fget", "fset", "fdel"))
_PARTIAL_PARTS = tuple(functools.partial.__dict__[k] for k in ("func", "args", "keywords"))
_CELL_CONTENTS = types.CellType.__dict__["cell_contents"] if hasattr(types, "CellType") else None


class _Any(Exception):
    """Raised inside the walk: the code can bind names this walk cannot list."""


class _Walk:
    def __init__(self, namespace: dict[str, Any] | None) -> None:
        main = sys.modules.get("__main__")
        main_dict = _module_dict(main) if main is not None else {}
        self.namespaces = [d for d in (namespace, main_dict) if type(d) is dict]
        self.names: set[str] = set()
        self.seen: set[Any] = set()
        self.steps = 0

    def notebook(self, scope: Any) -> bool:
        return any(scope is ns for ns in self.namespaces)

    def step(self) -> None:
        self.steps += 1
        if self.steps > _STEPS:
            raise _Any("too much to read")

    def visit(self, obj: Any, lib_depth: int = 0) -> None:
        self.step()
        tp = type(obj)
        if tp in SCALARS:
            return
        if self.notebook(obj):
            raise _Any("the notebook namespace itself")
        key = id(obj)
        if key in self.seen:
            return
        self.seen.add(key)
        if tp in (list, tuple, set, frozenset):
            for item in list(obj):
                self.visit(item, lib_depth)
        elif tp is dict:
            for item in list(dict.values(obj)):
                self.visit(item, lib_depth)
        elif _isfunction(obj):
            self.function(obj, lib_depth)
        elif _ismethod(obj):
            self.visit(_method_func(obj), lib_depth)
            self.visit(_METHOD_SELF.__get__(obj, types.MethodType), lib_depth)
        elif _isbuiltin(obj):
            if _BUILTIN_NAME.__get__(obj, types.BuiltinFunctionType) in DYNAMIC_NAMES:
                raise _Any("a dynamic builtin")
            owner = _BUILTIN_SELF.__get__(obj, types.BuiltinFunctionType)
            if not _isinst(owner, types.ModuleType):
                self.visit(owner, lib_depth)  # `ns_update = some_dict.update`
            elif owner is not builtins:
                self.module(owner)
        elif _isinst(obj, types.ModuleType):
            self.module(obj)
        elif _isclass(obj):
            self.cls(obj, lib_depth)
        elif tp in (staticmethod, classmethod):
            self.visit((_STATIC_FUNC if tp is staticmethod else _CLASS_FUNC).__get__(obj, tp), lib_depth)
        elif tp is property:
            for part in _PROPERTY_PARTS:
                self.visit(part.__get__(obj, property), lib_depth)
        elif tp is functools.partial:
            for part in _PARTIAL_PARTS:
                self.visit(part.__get__(obj, functools.partial), lib_depth)
        elif _CELL_CONTENTS is not None and tp is types.CellType:
            self.cell(obj, lib_depth)
        elif _trusted(tp):
            # A library object: its methods are library code; what notebook code it holds is followed a
            # few levels deep (a transformer's func, a Keras Lambda's function, a pipeline's steps).
            if lib_depth < _LIBRARY_DEPTH:
                for item in list(_inst_dict(obj).values()):
                    self.visit(item, lib_depth + 1)
        else:
            # An instance of a notebook (or an untrusted) class: its class's code, then its attributes.
            self.cls(tp, lib_depth)
            for item in list(_inst_dict(obj).values()):
                self.visit(item, lib_depth)

    def cell(self, cell: Any, lib_depth: int) -> None:
        try:
            value = _CELL_CONTENTS.__get__(cell, type(cell)) if _CELL_CONTENTS is not None else _MISSING
        except ValueError:  # an empty cell
            return
        self.visit(value, lib_depth)

    def module(self, mod: Any) -> None:
        d = _module_dict(mod)
        mod_name = d.get("__name__")
        if type(mod_name) is not str:
            raise _Any("a module without a name")
        root = mod_name.split(".", 1)[0]
        if root not in TRUSTED_ROOTS or root in UNSAFE_MODULES or self.notebook(d):
            raise _Any(f"module {mod_name}")

    def cls(self, cls: Any, lib_depth: int) -> None:
        if cls is object or cls is type:
            return
        meta = type(cls)
        if meta is not type and not _trusted(meta):
            self.cls(meta, lib_depth)
        for klass in _mro(cls):
            if klass is object or _trusted(klass):
                continue  # library code; a notebook subclass's own methods are read below
            key = ("class", id(klass))
            if key in self.seen:
                continue
            self.seen.add(key)
            for value in list(_class_dict(klass).values()):
                self.visit(value, lib_depth)

    def function(self, fn: Any, lib_depth: int) -> None:
        scope = _FUNC_GLOBALS.__get__(fn, types.FunctionType)
        closure = _FUNC_CLOSURE.__get__(fn, types.FunctionType) or ()
        for cell in closure:
            self.cell(cell, lib_depth)  # a decorator's wrapper holds the notebook function it wraps
        wrapped = _inst_dict(fn).get("__wrapped__", _MISSING)
        if wrapped is not _MISSING:
            self.visit(wrapped, lib_depth)
        if not self.notebook(scope):
            if _trusted_callable(fn):
                return  # library code
            raise _Any("code outside the notebook and the trusted libraries")
        for value in _FUNC_DEFAULTS.__get__(fn, types.FunctionType) or ():
            self.visit(value, lib_depth)
        for value in (_FUNC_KWDEFAULTS.__get__(fn, types.FunctionType) or {}).values():
            self.visit(value, lib_depth)
        for value in list(_inst_dict(fn).values()):
            self.visit(value, lib_depth)
        self.code(_FUNCTION_CODE.__get__(fn, types.FunctionType), scope, lib_depth)

    def code(self, code: types.CodeType, scope: dict[str, Any], lib_depth: int) -> None:
        stack = [code]
        while stack:
            cur = stack.pop()
            self.step()
            if ("code", id(cur)) in self.seen:
                continue
            self.seen.add(("code", id(cur)))
            for ins in dis.get_instructions(cur):
                op, arg = ins.opname, ins.argval
                if op in _STORE_GLOBALS and isinstance(arg, str):
                    self.names.add(arg)
                elif op in _LOAD_GLOBALS and isinstance(arg, str):
                    self.load(arg, scope, lib_depth)
                elif op in _ATTR_OPS and isinstance(arg, str) and arg in DYNAMIC_ATTRS:
                    raise _Any(f"attribute {arg}")
                elif op == "IMPORT_NAME" and isinstance(arg, str):
                    self.imported(arg)
            stack.extend(c for c in cur.co_consts if isinstance(c, types.CodeType))

    def load(self, name: str, scope: dict[str, Any], lib_depth: int) -> None:
        if name in DYNAMIC_NAMES:
            raise _Any(f"name {name}")
        value = dict.get(scope, name, _MISSING)
        if value is _MISSING:
            value = builtins.__dict__.get(name, _MISSING)
            if value is _MISSING:
                return  # nothing defines it: reading it raises NameError, it binds nothing
        self.visit(value, lib_depth)

    def imported(self, module: str) -> None:
        root = module.split(".", 1)[0]
        if root not in TRUSTED_ROOTS or root in UNSAFE_MODULES or module not in sys.modules:
            raise _Any(f"import {module}")  # an import may run any module's code


def global_binds(obj: Any, namespace: dict[str, Any] | None) -> list[str] | None:
    """The notebook globals that calling code reachable from `obj` may bind, sorted; None when any."""
    walk = _Walk(namespace)
    try:
        walk.visit(obj)
    except Exception:  # _Any, or anything unexpected: unknown
        return None
    return sorted(walk.names)
