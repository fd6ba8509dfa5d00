"""Kernel side of `crane_jupyterlab.server.payload`: installs the payload and carries results back as JSON.

Executed first, into `<package>.envelope`; `install` then creates the rest of the payload (the modules of
`MANIFEST`) as a private package in `sys.modules` (never the user namespace), and `invoke` calls one of
its functions. Stdlib only, and only modules a running ipykernel has already imported.

No function here lets an exception escape: an exception raised by a user expression makes IPython
overwrite `sys.last_traceback`, the user's own post-mortem (`%debug`) state.
"""

from __future__ import annotations

import json
import math
import sys
import types
from typing import Any

# The package's name in `sys.modules` starts with this; the server appends a hash of all the sources.
PREFIX = "_crane_jupyterlab_probe_"
# Key of the one-entry object that reports a failure instead of a result.
ERROR_KEY = "__crane_error__"

# Set by `install`: the package root, or why it could not be installed.
_root: types.ModuleType | None = None
_install_error: str | None = None

# (manifest name such as "probe/summarize/pandas", file name for tracebacks, source)
Source = tuple[str, str, str]
# Set by `install`: the sources it installed, which a spawned trial worker installs again.
kept_sources: list[Source] = []


class JSONResult:
    """IPython's display formatter puts this under `application/json` in the reply.

    Through `_repr_mimebundle_`, so it holds even where a user disabled the JSONFormatter; `_repr_json_`
    covers a disabled mimebundle formatter.
    """

    __slots__ = ("data",)

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    def __repr__(self) -> str:
        # The formatter also computes text/plain: keep it constant and cheap.
        return "<crane-jupyterlab probe result>"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return {"application/json": self.data}

    def _repr_json_(self) -> dict[str, Any]:
        return self.data


def install(root: types.ModuleType, envelope: types.ModuleType, sources: list[Source]) -> types.ModuleType:
    """Install the payload as the package `root` (this module, already executed, is `root.envelope`).

    Every module object is created and registered in `sys.modules` before any executes, as importlib
    does (dataclasses look their module up there), and then executed in the order given, so relative
    imports between them resolve as they do in the source tree. On failure nothing stays registered
    and `envelope` is returned carrying the reason, so `invoke` reports it and the next request
    installs again.
    """
    global _root, _install_error, kept_sources
    name = root.__name__
    root.__path__ = []
    root.__package__ = name
    envelope.__package__ = name
    created: dict[str, types.ModuleType] = {name: root, envelope.__name__: envelope}
    order: list[tuple[types.ModuleType, str, str]] = []
    for manifest_name, filename, source in sources:
        if manifest_name == "envelope":
            continue
        parts = manifest_name.split("/")
        package = parts[-1] == "__init__"
        dotted = ".".join([name, *(parts[:-1] if package else parts)])
        module = created.get(dotted) or types.ModuleType(dotted)
        module.__file__ = filename
        if package:
            module.__path__ = []
        module.__package__ = dotted if package else dotted.rpartition(".")[0]
        created[dotted] = module
        order.append((module, filename, source))
    for dotted, module in created.items():
        parent, _, child = dotted.rpartition(".")
        if parent in created:
            setattr(created[parent], child, module)
    sys.modules.update(created)
    try:
        for module, filename, source in order:
            exec(compile(source, filename, "exec"), module.__dict__)
    except BaseException as exc:
        for dotted in created:
            sys.modules.pop(dotted, None)
        _install_error = "payload failed to load: " + _describe(exc)
        return envelope
    _root = root
    kept_sources = list(sources)
    for stale in [key for key in sys.modules if key.startswith(PREFIX) and key.split(".")[0] != name]:
        sys.modules.pop(stale, None)  # an older payload version
    return envelope


def invoke(target: str, *args: Any) -> JSONResult:
    """Call `target` ("module.function", e.g. "probe.run", "trial.start") of the payload; failures come
    back as an error object, never as an exception in the kernel."""
    if _root is None:
        return JSONResult({ERROR_KEY: _install_error or "payload not installed"})
    module_name, _, function = target.rpartition(".")
    module = sys.modules.get(f"{_root.__name__}.{module_name}")
    fn = getattr(module, function, None) if module is not None else None
    if fn is None:
        return JSONResult({ERROR_KEY: f"the payload has no {target}"})
    try:
        result = fn(*args)
    except BaseException as exc:  # KeyboardInterrupt too: an interrupt aimed at the payload ends it here
        return JSONResult({ERROR_KEY: f"{target} raised: " + _describe(exc)})
    if not isinstance(result, dict):
        return JSONResult({ERROR_KEY: f"{target} returned {type(result).__name__}, not dict"})
    return JSONResult(json_safe(result))


def json_safe(value: dict[str, Any]) -> dict[str, Any]:
    """`value` made strictly JSON-compliant (NaN and inf become strings, tuples lists, others str).

    jupyter_client serialises with allow_nan=False and, on failure, warns on the kernel's stderr,
    which would reach the user's notebook as output.
    """
    try:
        json.dumps(value, allow_nan=False, check_circular=False)  # a cycle ends in RecursionError
    except (TypeError, ValueError, RecursionError):
        cleaned = _clean(value, 0)
        return cleaned if isinstance(cleaned, dict) else {ERROR_KEY: "probe result is not an object"}
    return value


def _clean(value: Any, depth: int) -> Any:
    if depth > 64:
        return "<too deep>"
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if math.isfinite(value):
            return float(value)
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, dict):
        return {str(key): _clean(item, depth + 1) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(item, depth + 1) for item in value]
    return f"<{type(value).__name__}>"


def _describe(exc: BaseException) -> str:
    try:
        text = str(exc)
    except Exception:
        text = "<unprintable>"
    return f"{type(exc).__name__}: {text}"[:500]
