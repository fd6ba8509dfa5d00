"""TensorFlow trials in a forked child of a real kernel that has run TensorFlow (the worker turned off,
`worker: never`; test_worker.py runs such cells in the worker): a graph function (fit, predict, a
tf.function) ends the fork's trial as unavailable when it is called, instead of hanging until the
deadlock detector notices; what fails before it (a shape error while tracing) is still observed."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any

import pytest
import pytest_asyncio
from jupyter_client.asynchronous.client import AsyncKernelClient

from crane_jupyterlab.bench.kernels import fresh_kernel, run_cell
from crane_jupyterlab.kernel.trial import tfwork

pytestmark = [
    pytest.mark.integration,
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.usefixtures("os_layer"),
    pytest.mark.skipif(importlib.util.find_spec("tensorflow") is None, reason="tensorflow is not installed"),
]

SETUP = """
import numpy as np
import tensorflow as tf
import keras
model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
model.compile("adam", "mse")
model.fit(np.ones((8, 3)), np.ones((8, 2)), verbose=0)
double = tf.function(lambda a: a * 2)
"""


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def tf_kernel() -> AsyncIterator[AsyncKernelClient]:
    async with fresh_kernel() as (_, kc):
        await run_cell(kc, SETUP, timeout=300)
        yield kc


async def trial(kit: SimpleNamespace, kc: AsyncKernelClient, source: str) -> dict[str, Any]:
    outcome: dict[str, Any] = (await kit.run_in_kernel(kc, source, budget_s=60, worker="never"))["outcome"]
    return outcome


@pytest.mark.parametrize(
    "source",
    [
        "model.fit(np.ones((8, 3)), np.ones((8, 2)), verbose=0)",
        "model.predict(np.ones((2, 3)), verbose=0)",
        "double(tf.ones((3,)))",
        # The cell's own `except Exception` cannot turn the call into a false "finished".
        "try:\n    model.evaluate(np.ones((4, 3)), np.ones((4, 2)), verbose=0)\nexcept Exception:\n    pass",
    ],
)
async def test_a_graph_function_call_is_unavailable_at_once(
    kit: SimpleNamespace, tf_kernel: AsyncKernelClient, source: str
) -> None:
    outcome = await trial(kit, tf_kernel, source)
    assert outcome["status"] == "unavailable"
    assert outcome["reason"] == tfwork.REASON  # not the deadlock detector's, a second later


async def test_what_fails_before_the_call_is_still_observed(
    kit: SimpleNamespace, tf_kernel: AsyncKernelClient
) -> None:
    shape = await trial(kit, tf_kernel, "model.predict(np.ones((2, 5)), verbose=0)")
    assert (shape["status"], shape["exception"]) == ("crashed", "ValueError")
    lengths = await trial(kit, tf_kernel, "model.fit(np.ones((8, 3)), np.ones((7, 2)), verbose=0)")
    assert (lengths["status"], lengths["exception"]) == ("crashed", "ValueError")
    small = await trial(kit, tf_kernel, "total = float(tf.reduce_sum(tf.ones((3, 3)) @ tf.ones((3, 3))))")
    assert small["status"] == "finished"  # a small eager op runs on the calling thread


async def test_the_kernel_keeps_its_graph_functions(
    kit: SimpleNamespace, tf_kernel: AsyncKernelClient
) -> None:
    assert (await trial(kit, tf_kernel, "double(tf.ones((3,)))"))["status"] == "unavailable"
    # The patch lived in the child only: the kernel still runs graph functions.
    assert await kit.printed(
        tf_kernel, "import json\nprint(json.dumps(double(tf.ones((2,))).numpy().tolist()))"
    ) == [
        2.0,
        2.0,
    ]
    shape = "print(json.dumps(model.predict(np.ones((1, 3)), verbose=0).shape))"
    assert await kit.printed(tf_kernel, shape) == [1, 2]


async def test_nothing_is_armed_where_tensorflow_never_ran() -> None:
    if "tensorflow" in sys.modules:
        pytest.skip("this test process imported tensorflow")
    assert tfwork.initialised_context() is None
    assert tfwork.arm() is False
