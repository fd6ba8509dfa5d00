"""Keras objects copied to a trial worker (transfer.py): which of the notebook's classes go with them, and
the notebook functions of their Lambda layers, which Keras rebuilds with its own module's globals.

Keras rebuilds a model from its config, naming the classes of its layers, metrics and losses: the
notebook's own must be rebuilt and registered before it. A Lambda layer's function is saved as bytecode and
loaded with the globals of a Keras module, where the kernel's reads the notebook's (`tf`, a constant):
the names it reads go with the inputs and, in the worker, it gets the namespace's globals back. Stdlib
only; nothing is imported.
"""

from __future__ import annotations

import types
from typing import Any

KERAS = ("keras", "tf_keras")


def keras_class(value: Any, ns: dict[str, Any]) -> bool:
    """A class of the notebook's own that derives from a Keras class (a model, layer, metric, loss...)."""
    if not isinstance(value, type) or not _notebooks(value):
        return False
    try:
        return any(_root_of(base) in KERAS for base in type.__dict__["__mro__"].__get__(value)[1:])
    except Exception:
        return False


def keras_object(value: Any) -> bool:
    try:
        return any(_root_of(base) in KERAS for base in type.__dict__["__mro__"].__get__(type(value)))
    except Exception:
        return False


def keras_model(value: Any) -> bool:
    """An instance of a Keras Model class (a notebook's subclass included)."""
    try:
        mro = type.__dict__["__mro__"].__get__(type(value))
    except Exception:
        return False
    return any(type.__dict__["__name__"].__get__(c) == "Model" and _root_of(c) in KERAS for c in mro)


def lambda_functions(value: Any) -> list[types.FunctionType]:
    """The Python functions of the Keras Lambda layers a Keras model or layer holds (Keras saves them as
    bytecode and loads them with its own module's globals: `rebuild` gives them the namespace's)."""
    if not keras_object(value):
        return []
    try:
        layers = list(value._flatten_layers())
    except Exception:
        return []
    found = []
    for layer in layers:
        kind = type(layer)
        if kind.__name__ == "Lambda" and _root_of(kind) in KERAS:
            fn = getattr(layer, "function", None)
            if type(fn) is types.FunctionType:
                found.append(fn)
    return found


def lambdas_in(value: Any, ns: dict[str, Any]) -> None:  # pragma: no cover - worker only
    """A Keras Lambda layer's function as the notebook has it: Keras loaded its bytecode with the globals of
    its own module, where the kernel's function reads the notebook's (`tf`, a constant)."""
    for layer_fn in lambda_functions(value):
        globs = layer_fn.__globals__
        if globs is ns or not str(globs.get("__name__", "")).startswith(KERAS):
            continue
        for layer in value._flatten_layers():
            if getattr(layer, "function", None) is layer_fn:
                rebuilt = types.FunctionType(
                    layer_fn.__code__, ns, layer_fn.__name__, layer_fn.__defaults__, layer_fn.__closure__
                )
                rebuilt.__kwdefaults__ = layer_fn.__kwdefaults__
                layer.function = rebuilt


def _notebooks(cls: type) -> bool:
    return bool(type.__dict__["__module__"].__get__(cls) == "__main__")


def _root_of(cls: type) -> str:
    module = type.__dict__["__module__"].__get__(cls)
    return module.split(".", 1)[0] if isinstance(module, str) else ""
