"""The litellm backend against the stub server, through litellm's real HTTP path (`openai/<alias>` +
`api_base`): votes, concurrency, errors, retries, cache, response formats."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from llm_stub import Reply, StubLLM, answer, closed_port_url

from crane_jupyterlab.llm.answer import ANSWER_SCHEMA
from crane_jupyterlab.llm.cache import VerdictCache
from crane_jupyterlab.llm.errors import LLMError
from crane_jupyterlab.llm.litellm_backend import LiteLLMBackend
from crane_jupyterlab.models import PredictionRequest
from crane_jupyterlab.prompt import PromptSettings, build_messages

KEY = "sk-crane-backend-test-4e8b1d2f6a9c3e7b5d1f"
REQUEST = PredictionRequest(
    executed_cells=["import pandas as pd", "df = pd.DataFrame({'a': [1, 2]})"],
    target_cell="df['b'].sum()",
    runtime_text="df: DataFrame (2, 1) columns ['a']",
)


def backend(stub: StubLLM | str, **options: Any) -> LiteLLMBackend:
    url = stub if isinstance(stub, str) else stub.url
    options.setdefault("api_key", KEY)
    options.setdefault("timeout", 20.0)
    return LiteLLMBackend("openai/stub-model", api_base=url, **options)


async def test_verdict_from_one_answer() -> None:
    with StubLLM(
        Reply(content='{"reasoning": "No column b.", "detection": true}', completion_tokens=17)
    ) as stub:
        verdict = await backend(stub).predict(REQUEST)
    assert verdict.detection is True
    assert verdict.reasoning == "No column b."
    assert verdict.source == "llm"
    assert verdict.votes == [True]
    assert verdict.model == "openai/stub-model"
    assert verdict.prompt_tokens == 100  # the provider's usage wins over our own count
    assert verdict.completion_tokens == 17
    assert verdict.latency_ms is not None and verdict.latency_ms > 0
    assert verdict.cached is False
    assert verdict.cost_usd is None  # litellm has no price for an unknown alias

    sent = stub.requests[0]
    assert sent["path"] == "/v1/chat/completions"
    assert sent["body"]["messages"] == build_messages(REQUEST)
    assert sent["headers"]["authorization"] == f"Bearer {KEY}"


async def test_cost_reported_when_litellm_knows_the_model() -> None:
    with StubLLM(answer(True), model="gpt-4o-mini") as stub:
        verdict = await LiteLLMBackend("openai/gpt-4o-mini", api_base=stub.url, api_key=KEY).predict(REQUEST)
    # litellm's bundled price map: $0.15 / M prompt tokens, $0.60 / M completion tokens.
    assert verdict.cost_usd == pytest.approx(100 * 0.15e-6 + 20 * 0.6e-6)


async def test_prompt_settings_reach_the_request() -> None:
    with StubLLM(answer(False)) as stub:
        await backend(stub, prompt=PromptSettings(runtime=False)).predict(REQUEST)
    user = stub.requests[0]["body"]["messages"][1]["content"]
    assert "df: DataFrame (2, 1)" not in user and "Runtime information" not in user


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("auto", {"type": "json_object"}),  # an unknown alias: litellm knows no schema support
        ("json_object", {"type": "json_object"}),
        ("json_object_schema", {"type": "json_object", "schema": ANSWER_SCHEMA}),
        (
            "json_schema",
            {
                "type": "json_schema",
                "json_schema": {"name": "crash_verdict", "schema": ANSWER_SCHEMA, "strict": True},
            },
        ),
        ("none", None),
    ],
)
async def test_response_format_modes(mode: str, expected: dict[str, Any] | None) -> None:
    with StubLLM(answer(False)) as stub:
        await backend(stub, response_format=mode).predict(REQUEST)
    assert stub.requests[0]["body"].get("response_format") == expected


async def test_sampling_parameters_sent() -> None:
    with StubLLM(answer(False)) as stub:
        await backend(stub, temperature=0.7, max_tokens=256).predict(REQUEST)
    body = stub.requests[0]["body"]
    assert body["temperature"] == 0.7
    assert body["max_tokens"] == 256


async def test_placeholder_key_for_keyless_local_servers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with StubLLM(answer(False)) as stub:
        await LiteLLMBackend("openai/local", api_base=stub.url).predict(REQUEST)
    assert stub.requests[0]["headers"]["authorization"] == "Bearer no-key"


async def test_five_votes_are_sent_concurrently() -> None:
    latency = 2.0
    with StubLLM(answer(True), latency=latency) as stub:
        await backend(stub).predict(REQUEST)  # warm litellm up so the timing measures the calls only
        five = backend(stub, votes=5)
        started = time.perf_counter()
        verdict = await five.predict(REQUEST)
        elapsed = time.perf_counter() - started
    assert verdict.votes == [True] * 5
    assert len(stub.requests) == 6
    assert stub.max_concurrent == 5
    assert elapsed < 3 * latency, f"5 votes took {elapsed:.1f}s; sequential would be {5 * latency:.0f}s"


async def test_majority_of_split_votes() -> None:
    script: list[Reply | str] = [
        answer(True, "crash A"),
        answer(False, "fine"),
        answer(True, "crash B"),
        answer(False, "fine"),
        answer(True, "crash C"),
    ]
    with StubLLM(script=script) as stub:
        verdict = await backend(stub, votes=5).predict(REQUEST)
    assert verdict.detection is True
    assert sorted(verdict.votes) == [False, False, True, True, True]
    assert verdict.reasoning.startswith("crash ")
    assert verdict.completion_tokens == 5 * 20


async def test_failed_votes_tolerated_when_the_rest_is_a_majority_of_n() -> None:
    script: list[Reply | str] = [
        answer(False),
        Reply(status=500),
        answer(False),
        Reply(content="oops"),
        answer(False),
    ]
    with StubLLM(script=script) as stub:
        verdict = await backend(stub, votes=5).predict(REQUEST)
    assert verdict.detection is False
    assert verdict.votes == [False, False, False]


async def test_no_majority_is_an_error_not_a_guess() -> None:
    script: list[Reply | str] = [
        answer(True),
        answer(True),
        answer(False),
        Reply(content="x"),
        Reply(content="y"),
    ]
    with StubLLM(script=script) as stub, pytest.raises(LLMError) as info:
        await backend(stub, votes=5).predict(REQUEST)
    assert info.value.kind == "malformed"
    assert "2 of 5 samples failed" in str(info.value)
    assert "no majority" in str(info.value)


def test_even_votes_rejected() -> None:
    with pytest.raises(ValueError, match="odd"):
        LiteLLMBackend("openai/x", votes=4)


@pytest.mark.parametrize(
    ("reply", "needle"),
    [
        (Reply(body="{not json"), "not valid JSON"),
        (Reply(body='{"choices": []}'), "no message"),
        (Reply(content="I think it crashes."), "no JSON object"),
        (Reply(content='{"reasoning": "the column', finish_reason="length"), "cut off at the token limit"),
        (Reply(content='{"reasoning": "r", "detection": "probably"}'), "detection"),
    ],
)
async def test_malformed_and_truncated_answers(reply: Reply, needle: str) -> None:
    with StubLLM(reply) as stub, pytest.raises(LLMError) as info:
        await backend(stub).predict(REQUEST)
    assert info.value.kind == "malformed"
    assert needle in str(info.value)


async def test_code_fence_repaired() -> None:
    fenced = '```json\n{"reasoning": "KeyError: b", "detection": true}\n```'
    with StubLLM(fenced) as stub:
        verdict = await backend(stub).predict(REQUEST)
    assert verdict.detection is True and verdict.reasoning == "KeyError: b"


async def test_timeout() -> None:
    with StubLLM(answer(True), latency=10) as stub:
        started = time.perf_counter()
        with pytest.raises(LLMError) as info:
            await backend(stub, timeout=0.5).predict(REQUEST)
        elapsed = time.perf_counter() - started
    assert info.value.kind == "timeout"
    assert elapsed < 6


async def test_auth_error_never_shows_the_key() -> None:
    body = json.dumps(
        {"error": {"message": f"Incorrect API key provided: {KEY}.", "type": "invalid_request_error"}}
    )
    with StubLLM(Reply(status=401, body=body)) as stub, pytest.raises(LLMError) as info:
        await backend(stub).predict(REQUEST)
    assert info.value.kind == "auth"
    assert KEY not in str(info.value) and KEY[:16] not in str(info.value)
    assert len(stub.requests) == 1  # an auth failure is not retried


async def test_configured_key_scrubbed_even_when_it_looks_like_a_word() -> None:
    odd_key = "letmein2024"  # matches no key pattern: only knowing the configured key catches it
    body = json.dumps({"error": {"message": f"key {odd_key} is not valid", "type": "invalid_request_error"}})
    with StubLLM(Reply(status=401, body=body)) as stub, pytest.raises(LLMError) as info:
        await backend(stub, api_key=odd_key).predict(REQUEST)
    assert odd_key not in str(info.value)


async def test_rate_limit_retried_then_answered() -> None:
    with StubLLM(answer(True), script=[Reply(status=429, headers={"Retry-After": "0"})]) as stub:
        verdict = await backend(stub, retry_base_delay=0.05).predict(REQUEST)
    assert verdict.detection is True
    assert len(stub.requests) == 2


async def test_rate_limit_retries_are_bounded() -> None:
    with StubLLM(Reply(status=429)) as stub, pytest.raises(LLMError) as info:
        await backend(stub, max_retries=2, retry_base_delay=0.01).predict(REQUEST)
    assert info.value.kind == "rate_limit"
    assert len(stub.requests) == 3


async def test_unreachable_server() -> None:
    with pytest.raises(LLMError) as info:
        await backend(closed_port_url()).predict(REQUEST)
    assert info.value.kind == "unreachable"


@pytest.mark.parametrize(
    ("status", "kind"), [(400, "bad_request"), (404, "bad_request"), (403, "auth"), (500, "unknown")]
)
async def test_http_statuses(status: int, kind: str) -> None:
    with StubLLM(Reply(status=status)) as stub, pytest.raises(LLMError) as info:
        await backend(stub).predict(REQUEST)
    assert info.value.kind == kind
    assert len(stub.requests) == 1


async def test_context_window_exceeded_says_which_budget_to_lower() -> None:
    refusal = json.dumps(
        {"error": {"message": "This model's maximum context length is 4096 tokens. However, you requested "
                   "12419 tokens.", "type": "invalid_request_error", "code": "context_length_exceeded"}}
    )  # fmt: skip
    with StubLLM(Reply(status=400, body=refusal)) as stub, pytest.raises(LLMError) as info:
        await backend(stub).predict(REQUEST)
    assert info.value.kind == "bad_request"
    assert "context window" in info.value.message and "token_budget" in info.value.message


async def test_cache_answers_the_same_question_once(tmp_path: Path) -> None:
    with StubLLM(answer(True, "cached reasoning")) as stub:
        cached = backend(stub, cache=VerdictCache(directory=tmp_path))
        first = await cached.predict(REQUEST)
        second = await cached.predict(REQUEST)
        assert len(stub.requests) == 1
        assert (first.cached, second.cached) == (False, True)
        assert second.latency_ms == 0
        assert second.detection is True and second.reasoning == "cached reasoning"

        # The on-disk copy serves a fresh backend (a new process) too.
        again = await backend(stub, cache=VerdictCache(directory=tmp_path)).predict(REQUEST)
        assert again.cached is True and len(stub.requests) == 1

        # Another question, or the same one with other settings, is asked.
        other = REQUEST.model_copy(update={"target_cell": "df['a'].sum()"})
        await cached.predict(other)
        await backend(stub, cache=VerdictCache(directory=tmp_path), temperature=0.5).predict(REQUEST)
        assert len(stub.requests) == 3


async def test_failures_are_not_cached() -> None:
    with StubLLM(answer(False), script=[Reply(status=500)]) as stub:
        cached = backend(stub, cache=VerdictCache())
        with pytest.raises(LLMError):
            await cached.predict(REQUEST)
        verdict = await cached.predict(REQUEST)
    assert verdict.cached is False and len(stub.requests) == 2


def test_cache_lru_bound_and_corrupt_files(tmp_path: Path) -> None:
    from crane_jupyterlab.models import Verdict

    cache = VerdictCache(size=2, directory=None)
    for key in "abc":
        cache.put(key, Verdict(detection=True, reasoning=key, source="llm"))
    assert len(cache) == 2 and cache.get("a") is None and cache.get("c") is not None

    disk = VerdictCache(directory=tmp_path)
    (tmp_path / "bad.json").write_text("{half", encoding="utf-8")
    assert disk.get("bad") is None  # ignored, not fatal


@pytest.mark.parametrize(
    "options",
    [{"timeout": 0}, {"max_retries": -1}, {"temperature": 3.0}, {"response_format": "xml"}, {"votes": 0}],
)
def test_bad_options_rejected(options: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        LiteLLMBackend("openai/x", **options)
