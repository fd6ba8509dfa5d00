"""TensorFlow in a trial's forked child: a graph function would wait forever, so say so at once.

TensorFlow creates its thread pools with its eager context; a fork copies the context but not the
threads. Measured in a child forked after the kernel ran TensorFlow (2.21, CPU): small eager ops run on
the calling thread and finish; a `tf.function`, and so Keras' `fit`/`predict`/`evaluate` (their steps
are graph functions), is handed to the executor's pool and waits forever, and so do big eager ops that
TensorFlow shards over its intra-op pool (a 2000x2000 matmul, a sum over 10^6 elements). The
deadlock detector of `stuck.py` notices those after about a second. A graph function call is known
for certain when it starts (`Context.call_function`, which every concrete function call goes
through), so the child ends there with `GraphFunctionCall`: everything before it (argument checks,
tracing, shape errors raised while the model is built) still runs and is observed, and nothing after
it could be.
"""

from __future__ import annotations

import sys
from typing import Any

REASON = (
    "TensorFlow ran a graph function (tf.function; Keras runs fit, predict and evaluate as one): it runs "
    "on TensorFlow's thread pools, which do not survive the fork, so it would wait forever"
)


class GraphFunctionCall(BaseException):
    """The cell reached a TensorFlow graph function call (a BaseException, so `except Exception` in the
    cell does not swallow it)."""


def initialised_context() -> Any:
    """TensorFlow's eager context when it exists in this process with its runtime (and pools) created;
    None otherwise. Looked up in sys.modules only: nothing is imported."""
    module = sys.modules.get("tensorflow.python.eager.context")
    context = getattr(module, "_context", None) if module is not None else None
    if context is None or getattr(context, "_context_handle", None) is None:
        return None
    return context


def arm() -> bool:  # pragma: no cover - runs in the forked child
    """In the child: make a graph function call end the trial at once. True when armed (the kernel had
    initialised TensorFlow before the fork)."""
    context = initialised_context()
    if context is None:
        return False

    def call_function(*args: Any, **kwargs: Any) -> Any:
        raise GraphFunctionCall(REASON)

    try:
        type(context).call_function = call_function
    except (AttributeError, TypeError):
        return False
    return True
