"""Two pairs of the shared live crash suite through the whole server path: each case's cells run in a
kernel of the server, POST /crane/analyze reads it, and every decisive fact of the case is carried by
the answer's runtime_text (by the suite's own scorer). The deterministic checks may claim a crash only
where there is one.
"""

from __future__ import annotations

import importlib.util
import json
from types import ModuleType
from typing import Any

import pytest
from support import SHARED, analyze

pytestmark = pytest.mark.integration  # real kernels or a real jupyter_server

LIVE = SHARED / "live"
PAIRS = ("numpy_01", "pandas_03")  # light libraries: the suite's heavy pairs belong to crane-bench live

if not (LIVE / "cases.jsonl").exists() or not (LIVE / "score.py").exists():
    pytest.skip(f"the shared live suite is not at {LIVE}", allow_module_level=True)


def _scorer() -> ModuleType:
    spec = importlib.util.spec_from_file_location("live_score", LIVE / "score.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _cases() -> list[dict[str, Any]]:
    with (LIVE / "cases.jsonl").open(encoding="utf-8") as f:
        return [case for line in f if (case := json.loads(line))["id"] in PAIRS]


# No model and no trial run: the checks decide, nothing is mocked.
@pytest.mark.parametrize("crane_config", [{"trial": "off"}])
async def test_live_pairs_carry_their_decisive_facts(crane_env: None, jp_fetch: Any, kernels: Any) -> None:
    score = _scorer()
    cases = _cases()
    assert len(cases) == 2 * len(PAIRS)
    for case in cases:
        k = await kernels.start(*case["executed_cells"])
        code, body = await analyze(jp_fetch, k.id, case["target_cell"])
        name = f"{case['id']}/{case['version']}"
        assert code == 200 and body["status"] == "no_model", (name, body)
        missing = [f for f in case["decisive_facts"] if not score.covers(body["runtime_text"], f)]
        assert missing == [], (name, body["runtime_text"])
        if body["verdict"]["detection"]:
            assert case["crash"], (name, body["verdict"])
        await kernels.manager.shutdown_kernel(k.id)
