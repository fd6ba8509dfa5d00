"""The replica judge through the real server and a real kernel: with no trial, a crash the rules cannot
list (inside a function the notebook defined) is reported as certain from replicas of the cell's inputs,
its fixed twin is not, and the kernel never runs the cell."""

from __future__ import annotations

from typing import Any

import pytest
from support import analyze

pytestmark = pytest.mark.integration

SETUP = (
    "import numpy as np\nX = np.arange(120.0).reshape(40, 3)",
    "def add_bias(a):\n    return np.hstack([a, np.ones((len(a) + 1, 1))])",
    "def add_bias_fixed(a):\n    return np.hstack([a, np.ones((len(a), 1))])",
)


@pytest.fixture
def crane_config(crane_env: None) -> dict[str, Any]:
    return {"trial": "off"}


async def test_a_crash_inside_notebook_code_is_certain_from_replicas(jp_fetch: Any, kernels: Any) -> None:
    k = await kernels.start(*SETUP)
    code, body = await analyze(jp_fetch, k.id, "Z = add_bias(X)\nprint(Z.shape)")
    assert code == 200, body
    verdict = body["verdict"]
    assert verdict["detection"] is True and verdict["source"] == "checks", verdict
    assert [f["rule"] for f in verdict["findings"]] == ["replica"]
    assert verdict["findings"][0]["message"].startswith("ValueError: all the input array dimensions")
    assert verdict["findings"][0]["line"] == 1
    assert body["timing"]["replica_ms"] > 0
    assert await k.value("'Z' in globals()") == "False"  # the kernel never ran it

    code, body = await analyze(jp_fetch, k.id, "Z = add_bias_fixed(X)\nprint(Z.shape)")
    assert code == 200 and body["verdict"]["detection"] is False, body
