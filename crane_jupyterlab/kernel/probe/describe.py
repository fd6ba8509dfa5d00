"""The probe's entry point: `run(source, options, namespace)` -> the JSON-ready result."""

from __future__ import annotations

import ast
import builtins
import contextlib
import gc
import io
import sys
import time
import types
import warnings
from typing import Any

from ..cell import python_source, runnable
from .access import _trusted_callable
from .binds import SCALARS, global_binds
from .calls import _argument_checks, _path_checks
from .docs import _docs
from .facts import _add, _close, _Ctx, _entry, _trim
from .imports import import_facts
from .libraries import _modules
from .lineage import _lineage, _skip_lineage
from .refs import _chain_entries, _column_hints
from .safe import IPYTHON_NAMES, _isfunction, _isinst, _type_name
from .scan import _Scanner, formula_names, formula_strings
from .styles import _style_checks
from .summarize import summarize
from .summarize.builtins import _function_globals

PROBE_VERSION = 1


MAX_ENTRIES = 40


HISTORY_CHARS = 400_000  # executed cells returned with options.history, newest first until this size


def run(
    source: str, options: dict[str, Any] | None = None, namespace: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Describe what `source` (a cell) will use from the kernel. Never raises, never prints."""
    t0 = time.perf_counter()
    result: dict[str, Any] = {
        "probe_version": PROBE_VERSION,
        "python": ".".join(str(x) for x in sys.version_info[:3]),
        "elapsed_ms": 0.0,
        "budget_exhausted": False,
        "syntax_error": None,
        "undefined": [],
        "modules": [],
        "objects": [],
        "docs": [],
        "history": [],
        "error": None,
    }
    opts = options if isinstance(options, dict) else {}
    sink = io.StringIO()
    gc_was_enabled = gc.isenabled()
    try:
        gc.disable()  # a collection pass over a big heap would be billed to whatever object comes next
        with warnings.catch_warnings(), contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            warnings.simplefilter("ignore")
            _run(result, source, opts, namespace, t0)
    except BaseException as exc:  # the contract: never raise into the kernel, not even SystemExit
        result["error"] = _failure(exc)
    finally:
        if gc_was_enabled:
            gc.enable()
    result["elapsed_ms"] = round((time.perf_counter() - t0) * 1000.0, 2)
    return result


def _user_namespace() -> tuple[dict[str, Any], Any]:
    getter = sys.modules.get("IPython.core.getipython")
    shell = None
    if getter is not None:
        with contextlib.suppress(Exception):
            shell = getter.get_ipython()
    ns = getattr(shell, "user_ns", None) if shell is not None else None
    return (ns if isinstance(ns, dict) else {}), shell


def _history(ns: dict[str, Any], shell: Any) -> list[str]:
    hist: Any = None
    if shell is not None:
        with contextlib.suppress(Exception):
            hist = shell.history_manager.input_hist_raw
    if not isinstance(hist, list):
        hist = ns.get("In")
    if not isinstance(hist, list):
        return []
    return [h for h in hist[1:] if isinstance(h, str)]


def _run(result: dict[str, Any], source: str, opts: dict[str, Any], namespace: Any, t0: float) -> None:
    ctx = _Ctx(opts, t0)
    shell = None
    if isinstance(namespace, dict):
        ns = namespace
    else:
        ns, shell = _user_namespace()
    if shell is None and namespace is None:
        _, shell = _user_namespace()
    history = _history(ns, shell)
    if opts.get("history"):
        kept, size = [], 0
        for cell in reversed(history):  # the newest cells matter most; the result stays bounded
            size += len(cell)
            if size > HISTORY_CHARS:
                break
            kept.append(cell)
        result["history"] = kept[::-1]
        if len(kept) < len(history):
            result["history_dropped"] = len(history) - len(kept)
    if not isinstance(source, str):
        result["error"] = "source must be a str"
        return
    try:
        tree = ast.parse(python_source(source))
    except SyntaxError as exc:
        shell_tree = _as_the_shell_runs_it(source, shell)
        if shell_tree is None:
            result["syntax_error"] = {"line": exc.lineno, "col": exc.offset, "msg": str(exc.msg)}
            return
        tree = shell_tree
    except (ValueError, MemoryError, RecursionError) as exc:
        result["syntax_error"] = {"line": None, "col": None, "msg": f"{type(exc).__name__}: {exc}"}
        return
    result["parsed"] = True  # the kernel's shell parses the cell (checks/core.py trusts it)
    scan = _Scanner()
    scan.visit(tree)
    scan.finish()

    undefined = [n for n in scan.free if _undefined(n, ns)] + list(scan.deleted_reads)
    if not scan.star_import:
        result["undefined"] = undefined
        close = _undefined_close(undefined, ns)
        if close:
            result["undefined_close"] = close
        importable = _importable(undefined)
        if importable:
            result["undefined_importable"] = importable
        # variables of formula strings the kernel lacks (patsy would find them nowhere but in data=)
        in_formulas = [n for f in formula_strings(tree) for n in formula_names(f)]
        absent = [n for n in dict.fromkeys(in_formulas) if _undefined(n, ns) and n not in undefined]
        if absent:
            result["formula_undefined"] = absent
    present = [n for n in scan.free if n in ns]

    hints = _column_hints(scan, ns)
    objects: list[dict[str, Any]] = []
    module_names: list[tuple[str, Any]] = []
    for name in present:
        value = ns[name]
        if _isinst(value, types.ModuleType):
            module_names.append((name, value))
            continue
        if len(objects) >= MAX_ENTRIES:
            break
        entry = _describe(value, name, ctx, hints.get(name))
        # Only a read of a name the kernel lacks asks which globals a call may bind (checks/rules/names):
        # a cell without one does not pay for the walk.
        if undefined and type(value) not in SCALARS:
            binds = global_binds(value, ns)  # None: calling it may bind any global (no fact)
            if binds is not None:
                _add(entry, "R", "binds_globals", binds)
        objects.append(entry)
    done = {o["expr"] for o in objects}
    for ref in scan.refs:
        if len(objects) >= MAX_ENTRIES or ref.root not in ns:
            continue
        objects.extend(e for e in _chain_entries(ns[ref.root], ref, ctx) if e["expr"] not in done)
        done.update(o["expr"] for o in objects)
    objects.extend(_style_checks(scan, ctx))
    objects.extend(_argument_checks(scan, ns, ctx))
    objects.extend(_path_checks(scan, ns))
    related = _lineage(history, present, ns)[:4]
    for name in present:  # data a called user function reads from the kernel's globals
        fn = ns[name]
        if _isfunction(fn) and not _trusted_callable(fn) and fn.__globals__ is ns:
            for g in _function_globals(fn)[:20]:
                if g in ns and g not in present and not _skip_lineage(ns[g]) and len(related) < 6:
                    related.append((g, name, "read"))
    for rel, via, relation in related:
        if len(objects) >= MAX_ENTRIES or rel in done:
            continue
        entry = _describe(ns[rel], rel, ctx, hints.get(rel))
        entry["via"] = via
        entry["relation"] = relation
        objects.append(entry)
        done.add(rel)
    result["objects"] = objects
    result["modules"] = _modules(module_names, scan, ctx)
    imports = import_facts(tree)
    if imports:
        result["imports"] = imports
    if opts.get("docs"):
        result["docs"] = _docs(scan, ns, ctx)
    result["budget_exhausted"] = ctx.exhausted


def _describe(value: Any, name: str, ctx: _Ctx, hints: dict[str, Any] | None) -> dict[str, Any]:
    """summarize(), with a BaseException from the one place the probe runs notebook code on purpose
    (a map-style Dataset's `__getitem__`) costing this entry only."""
    try:
        return summarize(value, name, ctx, hints)
    except BaseException as exc:
        entry = _entry(name, _type_name(value))
        entry["error"] = _failure(exc)
        return entry


def _failure(exc: BaseException) -> str:
    """The reason text of an exception, without running its (possibly notebook-defined) __str__."""
    args = exc.args if type(exc.args) is tuple else ()
    detail = args[0] if args and type(args[0]) is str else ""
    return f"{_type_name(exc)}: {_trim(detail, 200)}" if detail else _type_name(exc)


def _undefined(name: str, ns: dict[str, Any]) -> bool:
    return name not in ns and not hasattr(builtins, name) and name not in IPYTHON_NAMES


def _importable(undefined: list[str]) -> list[str]:
    """Undefined names that are top-level modules this kernel could import (`mglearn` beside the
    notebook): found on sys.path by the import system's finders, nothing imported."""
    import importlib.machinery

    out = []
    for name in undefined[:10]:
        if not name.isidentifier() or name in sys.modules:
            continue
        try:
            if importlib.machinery.PathFinder.find_spec(name) is not None:
                out.append(name)
        except (ImportError, ValueError, OSError):
            continue
    return out


def _undefined_close(undefined: list[str], ns: dict[str, Any]) -> dict[str, list[str]]:
    """Names the kernel has that are close to each undefined one (a typo of a variable or a builtin)."""
    if not undefined:
        return {}
    names = [k for k in list(ns)[:5000] if isinstance(k, str) and not k.startswith("_")]
    names += [k for k in dir(builtins) if not k.startswith("_")]
    out = {}
    for name in undefined[:10]:
        hits = [h for h in _close(name, names) if h != name]
        if hits:
            out[name] = hits
    return out


def _as_the_shell_runs_it(source: str, shell: Any) -> ast.Module | None:
    """The cell's tree as the kernel's shell makes it (its `transform_cell`: a one-line cell goes through
    IPython's prefilter too, where automagic and aliases make `ls data/` or `cd ..` a command); None
    when that does not parse either, or there is no shell."""
    if shell is None or not callable(getattr(shell, "transform_cell", None)):
        return None
    try:
        return ast.parse(runnable(source, shell))
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
