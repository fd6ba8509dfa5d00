"""The cell's inputs, copied to a fresh process: what a spawned trial worker receives (`worker.py`).

`pack` runs where the kernel's objects are (a sandboxed fork of the kernel, or a thread of it where
CUDA is in use) and writes into one memory file: the cell's working set, the process-wide state that
changes what a cell does, and the contiguous arrays as out-of-band buffers. `rebuild` runs in the worker,
inside its sandbox: it maps the file privately (copy-on-write: the worker's writes reach nothing), and
rebuilds the namespace the cell will run in.

The working set is every name the cell reads that the kernel has, and, through the notebook's own
functions and classes it reaches, every global their code reads, transitively. Objects go through the
libraries' own pickling contracts (protocol 5: numpy and pandas hand their buffers over out of band;
Keras 3 models save themselves with their optimizer state; scikit-learn estimators...; torch storages
go as their raw bytes, out of band, once however many tensors view them: torchcopy.py);
functions and classes defined in the notebook go by value (their code through `marshal`: the worker is
the kernel's own Python), rebuilt with the worker's namespace as their globals, as in the kernel. What
cannot be copied faithfully (a generator, an open file, a lock, a tf.data pipeline, an Enum of the
notebook, anything whose pickling fails) is named with the reason and the worker never runs the cell.

Stdlib only; a library is read only where `sys.modules` has it.
"""

from __future__ import annotations

import ast
import contextlib
import io
import marshal
import os
import pickle
import struct
import sys
import types
from typing import Any

from . import kerascopy, torchcopy, unpacking
from . import state as processes

# What a worker copies at most (the inputs' in-band bytes and buffers together), unless told otherwise.
DEFAULT_LIMIT_MB = 1024
# The shell's own functions, which the worker's shell provides again (never copied). The input and output
# history (`In`, `Out`, `_`, `_3`) is the kernel's and is copied like any name.
SHELL_NAMES = frozenset({"get_ipython", "exit", "quit", "display", "__builtins__"})
_MAGIC = b"CRANEPK1"
_PAGE = 4096


class Uncopyable(Exception):
    """An input the worker cannot rebuild faithfully; the message names it and says why."""


# -- the working set ---------------------------------------------------------------------------------


def cell_names(code_text: str) -> set[str]:
    """Every name the cell's Python mentions (reads, writes, `global`): a superset of what it reads."""
    try:
        tree = ast.parse(code_text)
    except SyntaxError:
        return set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)
    return names - _bound_first(tree)


def _bound_first(tree: ast.Module) -> set[str]:
    """Names the cell binds before anything could read them: the first top-level statement that mentions
    the name is a plain assignment to it (`train_set = window(...)`) whose value does not mention it.
    The kernel's old value is never seen by the cell (it may be one no worker can take: a tf.data
    pipeline)."""
    seen: set[str] = set()
    fresh: set[str] = set()
    for stmt in tree.body:
        mentioned = {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name)}
        for node in ast.walk(stmt):
            if isinstance(node, (ast.Global, ast.Nonlocal)):
                mentioned.update(node.names)
        if isinstance(stmt, ast.Assign) and all(isinstance(t, ast.Name) for t in stmt.targets):
            value = {n.id for n in ast.walk(stmt.value) if isinstance(n, ast.Name)}
            fresh |= {t.id for t in stmt.targets if isinstance(t, ast.Name)} - seen - value
        seen |= mentioned
    return fresh


def _code_names(code: types.CodeType, found: set[str]) -> None:
    found.update(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _code_names(const, found)


def _own_functions(value: Any, ns: dict[str, Any]) -> list[types.FunctionType]:
    """The notebook functions `value` is or holds (a class's methods, properties, static methods)."""
    if type(value) is types.FunctionType:
        return [value] if value.__globals__ is ns else []
    if isinstance(value, type) and _notebook_class(value, ns):
        found: list[types.FunctionType] = []
        for item in vars(value).values():
            for fn in (item, getattr(item, "__func__", None), getattr(item, "fget", None)):
                if type(fn) is types.FunctionType and fn.__globals__ is ns:
                    found.append(fn)
        return found
    return []


def working_set(code_text: str, ns: dict[str, Any], skip: frozenset[str] = frozenset()) -> list[str]:
    """The names of `ns` the cell can reach: those it mentions, then the globals of the notebook's own
    functions and classes among them, transitively; never those in `skip` (what the shell put there)."""
    skip = skip | SHELL_NAMES
    todo = [n for n in cell_names(code_text) if n in ns and n not in skip]
    if any(kerascopy.keras_object(ns[n]) for n in todo):
        # Keras rebuilds a model from its config, naming the classes of its layers, metrics and losses:
        # the notebook's own must be rebuilt (and registered, `_fill_class`) before it, named or not.
        todo += [n for n, v in list(ns.items()) if kerascopy.keras_class(v, ns) and n not in skip]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        value = ns[name]
        for fn in _own_functions(value, ns):
            reads: set[str] = set()
            _code_names(fn.__code__, reads)
            todo.extend(n for n in reads if n in ns and n not in seen and n not in skip)
        if isinstance(value, type) and _notebook_class(value, ns):
            todo.extend(b.__name__ for b in value.__mro__[1:] if _notebook_class(b, ns) and b.__name__ in ns)
        for fn in kerascopy.lambda_functions(value):  # what a Keras Lambda layer's notebook function reads
            if fn.__globals__ is ns:
                reads = set()
                _code_names(fn.__code__, reads)
                todo.extend(n for n in reads if n in ns and n not in seen and n not in skip)
    return sorted(seen)


def _notebook_class(cls: type, ns: dict[str, Any]) -> bool:
    """A class the notebook defined: the worker cannot import it, so it goes by value."""
    return kerascopy.notebook_class(cls)


def shell_names(ns: dict[str, Any], shell: Any) -> list[str]:
    """Functions IPython put in the namespace itself (`open`, `exit`...), still holding what it put there:
    the worker's own shell provides its own."""
    hidden = getattr(shell, "user_ns_hidden", None)
    if not isinstance(hidden, dict):
        return []
    return [name for name, value in hidden.items() if name in ns and ns[name] is value and callable(value)]


# -- pickling ----------------------------------------------------------------------------------------


def _make_function(
    code: bytes, name: str, defaults: Any, kwdefaults: Any, closure: Any, extra: dict[str, Any]
) -> Any:
    """A notebook function rebuilt in the worker, with the worker's namespace as its globals."""
    fn = types.FunctionType(marshal.loads(code), unpacking.NAMESPACE[0], name, defaults, closure)
    fn.__kwdefaults__ = kwdefaults
    fn.__dict__.update(extra.get("dict") or {})
    for key in ("__qualname__", "__module__", "__doc__", "__annotations__"):
        if key in extra:
            setattr(fn, key, extra[key])
    return fn


def _make_cell() -> Any:
    return types.CellType()


def _fill_cell(cell: Any, contents: Any) -> None:
    cell.cell_contents = contents


def _make_class(meta: type, name: str, bases: tuple[type, ...], module: str, qualname: str) -> type:
    made: type = meta(name, bases, {"__module__": module, "__qualname__": qualname})
    return made


def _fill_class(cls: type, state: dict[str, Any]) -> None:
    for key, value in state.items():
        setattr(cls, key, value)
    keras = sys.modules.get("keras")
    if keras is not None and any(kerascopy.root_of(base) in kerascopy.KERAS for base in cls.__mro__[1:]):
        # A Keras model or layer of the notebook: Keras' own unpickling looks its class up by name.
        with contextlib.suppress(Exception):
            keras.saving.get_custom_objects()[cls.__name__] = cls
    import abc

    update = getattr(abc, "update_abstractmethods", None)  # Python >= 3.10
    if isinstance(cls, abc.ABCMeta) and update is not None:
        update(cls)


def _tf_function(func: Any, options: dict[str, Any]) -> Any:
    """A `tf.function` of the notebook, made again from its Python function (it is traced afresh)."""
    return sys.modules["tensorflow"].function(func, **options)


def _import(name: str) -> Any:
    import importlib

    return importlib.import_module(name)


# Class attributes a class statement makes by itself (or that the metaclass keeps), never copied.
_CLASS_SKIP = frozenset({"__dict__", "__weakref__", "__module__", "__qualname__", "_abc_impl"})


class _Counter(io.RawIOBase):
    """The pickle's in-band stream, written to the pack file, with a cap on its size."""

    def __init__(self, fh: Any, limit: int) -> None:
        self.fh = fh
        self.limit = limit
        self.n = 0

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        self.n += len(data)
        if self.n > self.limit:
            raise _TooBig(self.n)
        return int(self.fh.write(data))


class _TooBig(Exception):
    pass


class _Packer(pickle.Pickler):
    def __init__(self, file: Any, ns: dict[str, Any], buffers: list[Any], limit: int) -> None:
        super().__init__(file, protocol=5, buffer_callback=self._buffer)
        self.ns = ns
        self.buffers = buffers
        self.buffered = 0
        self.limit = limit
        self.reads: set[str] = set()  # globals the notebook code pickled here reads
        self.guarded = False  # refuse the notebook's own pickling code (see `pack`)
        self.files: set[str] = set()  # the files of the code pickled by value
        self.storages: dict[Any, Any] = {}  # torch storages by their memory (torchcopy), kept to the end

    def _buffer(self, buffer: pickle.PickleBuffer) -> bool:
        storage = torchcopy.deferred(buffer, self.storages)
        if storage is not None:  # a torch storage: `_write` copies its bytes in itself
            self.buffered += storage.nbytes
            if self.buffered > self.limit:
                raise _TooBig(self.buffered)
            self.buffers.append(storage)
            return False
        view = buffer.raw()
        if not view.contiguous:
            return True  # in band
        self.buffered += view.nbytes
        if self.buffered > self.limit:
            raise _TooBig(self.buffered)
        self.buffers.append(view)
        return False

    def reducer_override(self, obj: Any) -> Any:
        kind = type(obj)
        if kind is types.FunctionType:
            if obj.__globals__ is self.ns or obj.__module__ == "__main__":
                return self._function(obj)
            return NotImplemented
        if kind is types.ModuleType:
            name = obj.__name__
            if name == "__main__" or sys.modules.get(name) is not obj:
                raise Uncopyable(f"the module object {name!r} is not the one `import {name}` gives")
            return (_import, (name,))
        if kind is types.CodeType:
            return (marshal.loads, (marshal.dumps(obj),))
        if kind is types.CellType:
            try:
                contents = obj.cell_contents
            except ValueError:
                return (_make_cell, ())
            return (_make_cell, (), contents, None, None, _fill_cell)
        if isinstance(obj, type) and _notebook_class(obj, self.ns):
            return self._class(obj)
        reduced = torchcopy.reduce_storage(obj, self.storages)
        if reduced is not NotImplemented:
            return reduced
        try:
            reduced = kerascopy.reduce_model(
                obj, self.ns, self.guarded
            )  # NotImplemented: not a Keras 3 model
        except kerascopy.NotMadeAgain as exc:
            raise Uncopyable(str(exc)) from None
        if reduced is not NotImplemented:
            return reduced
        if self.guarded and _pickles_itself(kind, self.ns):
            raise Uncopyable(
                f"the notebook's class {kind.__qualname__} pickles itself with its own code, which would run "
                "in the kernel (inputs of a GPU kernel's trial are copied by a thread of the kernel)"
            )
        if (
            kerascopy.root_of(kind) == "tensorflow"
            and kind.__qualname__ == "Function"
            and hasattr(obj, "python_function")
        ):
            options = {
                "input_signature": obj.input_signature,
                "autograph": getattr(obj, "_autograph", True),
                "jit_compile": getattr(obj, "_jit_compile", None),
                "reduce_retracing": getattr(obj, "_reduce_retracing", False),
            }
            return (_tf_function, (obj.python_function, options))
        if kind is property:  # a notebook class's members (pickle takes these by reference only)
            return (property, (obj.fget, obj.fset, obj.fdel, obj.__doc__))
        if kind in (staticmethod, classmethod):
            return (kind, (obj.__func__,))
        return NotImplemented

    def _function(self, fn: types.FunctionType) -> Any:
        if fn.__globals__ is self.ns:
            _code_names(fn.__code__, self.reads)
        self.files.add(fn.__code__.co_filename)
        extra: dict[str, Any] = {"__qualname__": fn.__qualname__, "__module__": fn.__module__}
        if fn.__doc__ is not None:
            extra["__doc__"] = fn.__doc__
        if fn.__dict__:
            extra["dict"] = dict(fn.__dict__)
        args = (
            marshal.dumps(fn.__code__),
            fn.__name__,
            fn.__defaults__,
            fn.__kwdefaults__,
            fn.__closure__,
            extra,
        )
        return (_make_function, args)

    def _class(self, cls: type) -> Any:
        meta = type(cls)
        import abc

        if meta not in (type, abc.ABCMeta):
            raise Uncopyable(
                f"the notebook's class {cls.__qualname__} has the metaclass {meta.__qualname__} "
                "(an Enum, a model framework's class...), which cannot be rebuilt in another process"
            )
        state = {k: v for k, v in vars(cls).items() if k not in _CLASS_SKIP}
        if "__slots__" in state:
            for slot in [state["__slots__"]] if isinstance(state["__slots__"], str) else state["__slots__"]:
                state.pop(slot, None)  # the slots' descriptors come back with the class
        args = (meta, cls.__name__, cls.__bases__, "__main__", cls.__qualname__)
        return (_make_class, args, state, None, None, _fill_class)


_SELF_PICKLING = ("__reduce__", "__reduce_ex__", "__getstate__", "__getnewargs__", "__getnewargs_ex__")


def _pickles_itself(kind: type, ns: dict[str, Any]) -> bool:
    """A notebook class (or a notebook base of it) that defines how its objects pickle."""
    try:
        mro = type.__dict__["__mro__"].__get__(kind)
    except Exception:
        return False
    return any(_notebook_class(c, ns) and any(n in vars(c) for n in _SELF_PICKLING) for c in mro)


def estimate(value: Any) -> int:
    """The bytes an object's data holds, as its library counts them (no data is read)."""
    kind = type(value)
    root = getattr(kind, "__module__", "").split(".")[0]
    try:
        if root == "numpy" and hasattr(value, "nbytes"):
            return int(value.nbytes)
        if root == "pandas" and hasattr(value, "memory_usage"):
            usage = value.memory_usage(index=True, deep=False)
            return int(usage.sum()) if hasattr(usage, "sum") else int(usage)
        if root == "torch" and hasattr(value, "element_size"):
            return int(value.element_size() * value.nelement())
    except Exception:
        return 0
    if kind in (list, tuple, set, frozenset):
        return sum(estimate(v) for v in list(value)[:100_000])
    if kind is dict:
        return sum(estimate(v) for v in list(value.values())[:100_000])
    return 0


def pack(
    fd: int,
    code_text: str,
    ns: dict[str, Any],
    limit_mb: float = DEFAULT_LIMIT_MB,
    shell: Any = None,
    guarded: bool = False,
) -> dict[str, Any]:
    """Write the cell's inputs into the file `fd` (a memfd); returns what was packed, in numbers and
    names. Raises `Uncopyable` with the reason where an input cannot be copied faithfully. `guarded`
    (packing in the kernel itself, not in a sandboxed fork): an object of the notebook's own class that
    pickles itself with its own code is not copied (that code would run in the kernel).

    The notebook code met while pickling (the methods of an object's class, a function in a list) may
    read globals the cell never names: they are added and the pack is written again, until none is
    missing, so the worker never lacks a name the kernel has."""
    skip = frozenset(shell_names(ns, shell))
    names = set(working_set(code_text, ns, skip))
    limit = int(limit_mb * 1024 * 1024)
    state = processes.read()
    for _ in range(8):
        values = {name: ns[name] for name in sorted(names)}
        total = sum(estimate(v) for v in values.values())
        if total > limit:
            raise Uncopyable(
                f"the cell's inputs are {_size(total)}; the worker copies at most {_size(limit)}"
            )
        written, missing = _write(fd, {"names": values, "state": state}, ns, limit, guarded)
        missing -= skip
        if not missing - names:
            break
        names |= missing
    return {
        "names": sorted(names),
        "package": __name__.rsplit(".", 2)[0],
        **written,
    }


def _write(
    fd: int, payload: dict[str, Any], ns: dict[str, Any], limit: int, guarded: bool = False
) -> tuple[dict[str, Any], set[str]]:
    """One pack of `payload` into `fd`; (its sizes, the globals its notebook code reads that `ns` has)."""
    buffers: list[Any] = []
    header = struct.Struct("<8sQ")
    os.ftruncate(fd, 0)
    with os.fdopen(os.dup(fd), "wb") as fh:
        fh.seek(0)
        fh.write(header.pack(_MAGIC, 0))
        counter = _Counter(fh, limit)
        packer = _Packer(counter, ns, buffers, limit)
        packer.guarded = guarded
        try:
            # The state, then each name on its own, sharing one memo: the worker binds each name as it
            # comes, so code that runs while a later one is rebuilt (a Keras model of the notebook's
            # class calls its `__init__`) finds the modules, functions and classes it reads.
            packer.dump(payload["state"])
            values = payload["names"]
            order = sorted(values, key=lambda name: (_rank(values[name]), name))
            packer.dump(len(order))
            for name in order:
                packer.dump((name, values[name]))
            # The source lines of the notebook code rebuilt by value (IPython keeps a cell's in linecache,
            # not on disk): tracebacks and TensorFlow's autograph, which converts a function from its source.
            packer.dump(_lines(packer.files))
        except _TooBig:
            raise Uncopyable(
                f"the cell's inputs are over {_size(limit)}, which is what the worker copies at most"
            ) from None
        except Uncopyable:
            raise
        except BaseException as exc:
            raise Uncopyable(_culprit(payload["names"], ns, exc)) from None
        else:
            pickled = counter.n
            offsets = []
            position = header.size + pickled
            for view in buffers:
                position = -(-position // _PAGE) * _PAGE  # page-aligned: the worker maps each in place
                if isinstance(view, memoryview):
                    fh.seek(position)
                    fh.write(view)
                else:
                    fh.flush()
                    view.write_at(fd, position)
                offsets.append((position, view.nbytes))
                position += view.nbytes
            index = pickle.dumps({"pickle": (header.size, pickled), "buffers": offsets}, protocol=5)
            fh.seek(position)
            fh.write(index)
            fh.seek(0)
            fh.write(header.pack(_MAGIC, position))
        finally:
            _let_go(packer, buffers)
    sizes = {"inputs_bytes": pickled + sum(n for _, n in offsets), "buffers": len(offsets)}
    missing = {name for name in packer.reads if name in ns and name not in SHELL_NAMES}
    return sizes, missing


def _let_go(packer: _Packer, buffers: list[Any]) -> None:
    """Drop what the pack held now, not when the garbage collector finds the cycle the packer makes with
    its buffer callback (in a GPU kernel, which packs on its own thread, the kernel's storages)."""
    for view in buffers:
        if isinstance(view, memoryview):
            view.release()
    buffers.clear()
    packer.clear_memo()
    packer.storages.clear()


def _lines(files: set[str]) -> dict[str, Any]:
    """linecache's entries for `files`, where it holds them (a cell's code, in IPython)."""
    import linecache

    return {name: linecache.cache[name] for name in sorted(files) if name in linecache.cache}


def _rank(value: Any) -> int:
    """Modules first, then functions and classes, then everything else (see `_write`)."""
    if type(value) is types.ModuleType:
        return 0
    if isinstance(value, type) or type(value) is types.FunctionType:
        return 1
    return 2


def _culprit(values: dict[str, Any], ns: dict[str, Any], exc: BaseException) -> str:
    """Which input could not be pickled, and why, in words."""
    for name, value in values.items():
        try:
            _Packer(io.BytesIO(), ns, [], 1 << 62).dump(value)
        except Uncopyable as inner:
            return f"`{name}`: {inner}"
        except BaseException as inner:
            return f"`{name}` ({_type_name(value)}) cannot be copied to another process: {_why(inner)}"
    return f"the cell's inputs cannot be copied to another process: {_why(exc)}"


def _why(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:300]


def _type_name(value: Any) -> str:
    kind = type(value)
    module = type.__dict__["__module__"].__get__(kind)
    name = type.__dict__["__qualname__"].__get__(kind)
    return name if module == "builtins" else f"{module}.{name}"


def _size(n: float) -> str:
    for unit in ("bytes", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"


class _Unpacker(pickle.Unpickler):
    """Reads the pack with this process's payload package in place of the kernel's."""

    def __init__(self, file: Any, buffers: list[Any], kernel_package: str) -> None:
        super().__init__(file, buffers=buffers)
        self.kernel_package = kernel_package
        self.here = __name__.rsplit(".", 2)[0]

    def find_class(self, module: str, name: str) -> Any:
        if module == self.kernel_package or module.startswith(self.kernel_package + "."):
            module = self.here + module[len(self.kernel_package) :]
        return super().find_class(module, name)


def rebuild(fd: int, ns: dict[str, Any], kernel_package: str) -> dict[str, Any]:  # pragma: no cover
    """In the worker: map the pack privately and rebuild its names into `ns`; returns the state (for
    `state.restore`) and the names."""
    import mmap

    with os.fdopen(os.dup(fd), "rb") as fh:
        header = struct.Struct("<8sQ")
        fh.seek(0)  # the packer left the shared offset at its end
        magic, index_at = header.unpack(fh.read(header.size))
        if magic != _MAGIC:
            raise ValueError("not a pack of the inputs")
        size = os.fstat(fh.fileno()).st_size
        whole = mmap.mmap(fh.fileno(), size, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ | mmap.PROT_WRITE)
    view = memoryview(whole)
    index = pickle.loads(view[index_at:])
    start, length = index["pickle"]
    buffers = [view[offset : offset + n] for offset, n in index["buffers"]]
    unpacking.NAMESPACE[0] = ns
    unpacker = _Unpacker(io.BytesIO(view[start : start + length]), buffers, kernel_package)
    state = unpacker.load()
    processes.early(state)
    names = []
    for _ in range(unpacker.load()):
        name, value = unpacker.load()
        ns[name] = value
        names.append(name)
    for name in names:
        with contextlib.suppress(Exception):  # a layer we cannot walk keeps Keras' own globals
            kerascopy.lambdas_in(ns[name], ns)
    import linecache

    for filename, entry in unpacker.load().items():
        linecache.cache.setdefault(filename, entry)
    return {"state": state, "names": sorted(names)}
