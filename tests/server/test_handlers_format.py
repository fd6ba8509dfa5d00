"""The `response_format` trait travels from the server config to the model request (llama.cpp's
server takes JSON mode with a schema, not OpenAI's json_schema)."""

from __future__ import annotations

from typing import Any

import pytest
from llm_stub import StubLLM
from support import analyze

pytestmark = pytest.mark.integration  # real kernels or a real jupyter_server


@pytest.fixture
def crane_config(llm_stub: StubLLM, crane_env: None) -> dict[str, Any]:
    return {
        "model": "openai/stub-model",
        "api_base": llm_stub.url,
        "llm_timeout": 20.0,
        "response_format": "json_object_schema",
        "trial": "off",  # the model's answer is what this checks
    }


async def test_response_format_reaches_the_model(jp_fetch: Any, kernels: Any, llm_stub: StubLLM) -> None:
    k = await kernels.start("a = 1")
    code, body = await analyze(jp_fetch, k.id, "a + 1")
    assert code == 200 and body["status"] == "ok", body
    sent = llm_stub.requests[-1]["body"]["response_format"]
    assert sent["type"] == "json_object"
    assert set(sent["schema"]["properties"]) == {"reasoning", "detection"}
