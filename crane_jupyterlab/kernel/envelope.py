"""Kernel side of `client.py`: keeps the probe in `sys.modules` and carries its result back as JSON.

This file is sent to the kernel as source, next to `probe.py`, and executed into a private module object
(never the user namespace); nothing here runs in the server. Stdlib only, and only modules a running
ipykernel has already imported.

No function here lets an exception escape: an exception raised by a user expression makes IPython
overwrite `sys.last_traceback`, the user's own post-mortem (`%debug`) state.
"""

from __future__ import annotations

import json
import math
import sys
import types
from typing import Any

# Module names in `sys.modules` start with this; the client appends a hash of the sources.
PREFIX = "_crane_jupyterlab_probe_"
# Key of the one-entry object that reports a failure instead of a probe result.
ERROR_KEY = "__crane_error__"

_probe: types.ModuleType | None = None
_install_error: str | None = None


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


def install(module: types.ModuleType, probe_source: str) -> types.ModuleType:
    """Load the probe beside `module` (this file, already executed into it) and register both.

    On failure `module` is returned unregistered, carrying the reason, so `call` reports it and the next
    request installs again.
    """
    global _probe, _install_error
    name = module.__name__
    probe = types.ModuleType(name + "_run")
    # Registered before it executes, as importlib does: dataclasses look their module up there.
    sys.modules[probe.__name__] = probe
    try:
        exec(compile(probe_source, f"<{probe.__name__}>", "exec"), probe.__dict__)
    except BaseException as exc:
        sys.modules.pop(probe.__name__, None)
        _install_error = "probe failed to load: " + _describe(exc)
        return module
    _probe = probe
    for stale in [key for key in sys.modules if key.startswith(PREFIX) and not key.startswith(name)]:
        sys.modules.pop(stale, None)  # an older probe version
    sys.modules[name] = module
    return module


def call(source: str, options: dict[str, Any] | None) -> JSONResult:
    """Run the probe on `source` against the user namespace; failures come back as an error object."""
    if _probe is None:
        return JSONResult({ERROR_KEY: _install_error or "probe not installed"})
    try:
        result = _probe.run(source, options, None)
    except BaseException as exc:  # KeyboardInterrupt too: an interrupt aimed at the probe ends it here
        return JSONResult({ERROR_KEY: "probe raised: " + _describe(exc)})
    if not isinstance(result, dict):
        return JSONResult({ERROR_KEY: f"probe returned {type(result).__name__}, not dict"})
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
