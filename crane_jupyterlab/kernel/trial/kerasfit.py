"""Keras in the quick trial: `Model.fit` cut after k epochs (`keras_fit`), and the lookups a cut fit
cannot change (`fixed_key`).

A cut fit runs fewer epochs; what it returns (a `History`) holds a list per key, shorter than a full run's,
but its keys are the loss and the metrics `compile` named, logged from the first epoch on, validation's
(`val_...`) from the first epoch that validated. A `KeyError` for one of those keys, on a History that
logged an epoch, is the full run's as well: `history.history['accuracy']` on a model compiled without
that metric. Where it ends: a `val_` key while no validation was logged yet (`validation_freq` may skip
the epochs that ran); a dict that is not a History's own; a key that is not a plain constant of the line.
Stdlib only; Keras is looked up in `sys.modules`, never imported.
"""

from __future__ import annotations

import ast
import sys
import time
from typing import Any

from . import libcalls
from .loops import Loop, Runtime


def keras_fit(runtime: Runtime) -> None:
    """Keras `Model.fit`, in the child only: a callback stops training after k epochs when the epochs
    so far project past LONG_S. Patched only when the kernel has imported Keras."""

    keras = sys.modules.get("keras")
    model_cls = getattr(keras, "Model", None)
    callback_cls = getattr(getattr(keras, "callbacks", None), "Callback", None)
    if model_cls is None or callback_cls is None:
        return
    # The library's own fit, not an earlier step's wrapper (a chain of cells prepares one runtime each).
    fit = getattr(model_cls.fit, "_crane_original", model_cls.fit)

    class _Cut(callback_cls):  # type: ignore[misc, valid-type]
        def __init__(self, loop: Loop) -> None:
            super().__init__()
            self.loop, self.started = loop, time.monotonic()

        def on_epoch_end(self, epoch: int, logs: Any = None) -> None:
            done = self.loop.iterations = epoch + 1
            self.loop.seconds = time.monotonic() - self.started
            if done == 1:
                self.loop.first_s = self.loop.seconds
            total = self.loop.total
            if done >= runtime.k and (total or 0) > done and runtime.long(self.started, done, total):
                runtime._cut(self.loop)
                self.model.stop_training = True

    def quick_fit(self: Any, *args: Any, **kwargs: Any) -> Any:
        caller: Any = sys._getframe(1)
        wrappers = (Runtime.call.__code__, libcalls.run.__code__)  # the cell's call, wrapped (libcalls)
        while caller is not None and caller.f_code in wrappers:
            caller = caller.f_back
        line = caller.f_lineno if caller is not None and caller.f_code.co_filename == runtime.filename else 0
        epochs = kwargs.get("epochs", args[4] if len(args) > 4 else 1)
        loop = Loop(line, "fit")
        loop.runs = 1
        if isinstance(epochs, int):
            loop.length(epochs)
        runtime.fits.append(loop)
        kwargs["callbacks"] = [*list(kwargs.get("callbacks") or []), _Cut(loop)]
        return fit(self, *args, **kwargs)

    quick_fit._crane_original = fit  # type: ignore[attr-defined]
    model_cls.fit = quick_fit


def fixed_key(message: str, line: str, ns: dict[str, Any]) -> bool:
    """Whether a KeyError (`message`: the key's repr) raised on `line` looks a key up in the `history`
    dict of a Keras History that the cut cannot change (see the module's doc)."""
    try:
        key = ast.literal_eval(message.strip())
        tree = ast.parse(line.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False
    if not isinstance(key, str):
        return False
    for node in ast.walk(tree):
        if not isinstance(node, ast.Subscript) or not _constant(node.slice, key):
            continue
        logged = _history_dict(node.value, ns)
        if logged is None or key in logged or not logged:
            continue
        if key.startswith("val_") and not any(str(k).startswith("val_") for k in logged):
            continue  # no validation logged yet: a full run may validate later
        return True
    return False


def _constant(node: ast.AST, key: str) -> bool:
    return isinstance(node, ast.Constant) and node.value == key


def _history_dict(node: ast.AST, ns: dict[str, Any]) -> dict[str, Any] | None:
    """The `history` dict of a Keras History the expression names: `h.history`, or a name bound to it."""
    if isinstance(node, ast.Attribute) and node.attr == "history" and isinstance(node.value, ast.Name):
        logged = _logged(ns.get(node.value.id))
        return logged
    if isinstance(node, ast.Name):
        value = ns.get(node.id)
        if isinstance(value, dict):
            for other in list(ns.values()):
                logged = _logged(other)
                if logged is value:
                    return logged
    return None


def _logged(value: Any) -> dict[str, Any] | None:
    kind = type(value)
    if kind.__name__ != "History" or not kind.__module__.startswith(("keras", "tf_keras", "tensorflow")):
        return None
    try:
        logged = vars(value).get("history")  # the instance's own attribute: no property runs
    except TypeError:
        return None
    return logged if isinstance(logged, dict) else None
