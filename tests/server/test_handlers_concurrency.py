"""20 concurrent analyze requests over 4 real kernels: every answer carries its own kernel's facts."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from llm_stub import Reply, answer
from support import analyze

pytestmark = pytest.mark.integration  # real kernels or a real jupyter_server

COLUMNS = (2, 3, 4, 5)  # kernel i holds x with shape (7, COLUMNS[i])
# Crashes where x has 3 columns or fewer; inside a lambda, so the checks leave it to the model.
TARGET = "col = (lambda: x[:, 3])()"


def shape_rule(body: dict[str, Any]) -> Reply:
    """Stands for a model reading the shape from the runtime block."""
    prompt = body["messages"][-1]["content"]
    shapes = re.findall(r"x: ndarray \(7, (\d+)\)", prompt)
    assert len(shapes) == 1, prompt  # one kernel's facts per prompt, never a mix
    cols = int(shapes[0])
    return Reply(content=answer(cols <= 3, f"x has {cols} columns").content, latency=0.2)


async def test_twenty_concurrent_requests_over_four_kernels(
    jp_fetch: Any, kernels: Any, llm_stub: Any
) -> None:
    llm_stub.default = shape_rule
    started = await asyncio.gather(
        *(kernels.start(f"import numpy as np\nx = np.zeros((7, {cols}))") for cols in COLUMNS)
    )
    jobs = []
    for i in range(20):
        k = i % len(started)
        # Distinct sources and cell ids: no answer comes from the verdict cache, none supersedes another.
        source = f"{TARGET}  # request {i}"
        jobs.append((k, analyze(jp_fetch, started[k].id, source, cell_id=f"cell-{i}", timeout=120)))
    replies = await asyncio.gather(*(job for _, job in jobs))

    for (k, _), (code, body) in zip(jobs, replies, strict=True):
        cols = COLUMNS[k]
        assert code == 200 and body["status"] == "ok", body
        shapes = re.findall(r"x: ndarray \(7, (\d+)\)", body["runtime_text"])
        assert shapes == [str(cols)], body["runtime_text"]
        assert body["verdict"]["detection"] is (cols <= 3)
        assert body["verdict"]["reasoning"].startswith(f"x has {cols} columns")
    assert len(llm_stub.requests) == 20
    assert llm_stub.max_concurrent > 1  # the kernels' requests really overlapped


async def test_back_to_back_requests_never_mistake_our_probe_for_user_code(
    jp_fetch: Any, kernels: Any, llm_stub: Any
) -> None:
    """jupyter_server marks the kernel busy for our own probe too, and sees it idle again only after
    the reply: a request right behind the previous one must wait for our probe, not answer 409."""
    k = await kernels.start("import numpy as np\nx = np.zeros((7, 4))")
    for i in range(12):
        code, body = await analyze(jp_fetch, k.id, f"{TARGET}  # {i}")
        assert code == 200 and body["status"] == "ok", (i, body)
