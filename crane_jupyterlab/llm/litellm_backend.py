"""Crash prediction with any chat model litellm can reach (OpenAI, Gemini, Anthropic, Ollama, any
OpenAI-compatible server through `api_base`).

One prediction = `votes` samples of the same prompt sent concurrently, each validated against the
answer schema, combined by strict majority (see `votes.py` for the rule). Rate limits are retried
with bounded exponential backoff; every other failure becomes a typed `LLMError` at once.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import os
import time
from dataclasses import dataclass
from typing import Any

from ..models import RESPONSE_FORMATS, PredictionRequest, Verdict
from ..prompt import PromptSettings, build_prompt
from . import litellm as _litellm
from .answer import ANSWER_SCHEMA, Answer, parse_answer
from .cache import VerdictCache, cache_key
from .errors import (
    AuthError,
    BadRequest,
    LLMError,
    LLMTimeout,
    MalformedAnswer,
    RateLimited,
    Unreachable,
)
from .votes import check_votes, majority

# Sent to local OpenAI-compatible servers that need some key but check none (llama.cpp, vLLM, ...).
PLACEHOLDER_KEY = "no-key"


def response_format_for(
    mode: str, model: str, schema: dict[str, Any] = ANSWER_SCHEMA, name: str = "crash_verdict"
) -> dict[str, Any] | None:
    """The `response_format` to send for `mode` (auto asks litellm whether the model takes a schema).

    json_object_schema is `{"type": "json_object", "schema": ...}`: what llama.cpp's server accepts
    (it rejects json_schema); OpenAI itself wants json_schema.
    """
    if mode not in RESPONSE_FORMATS:
        raise ValueError(f"response_format must be one of {', '.join(RESPONSE_FORMATS)}; got {mode!r}")
    if mode == "auto":
        supported = False
        with contextlib.suppress(Exception):
            supported = bool(_litellm().supports_response_schema(model=model))
        mode = "json_schema" if supported else "json_object"
    if mode == "json_schema":
        return {
            "type": "json_schema",
            "json_schema": {"name": name, "schema": schema, "strict": True},
        }
    if mode == "json_object":
        return {"type": "json_object"}
    if mode == "json_object_schema":
        return {"type": "json_object", "schema": schema}
    return None


def _status(exc: BaseException) -> int | None:
    code = getattr(exc, "status_code", None)
    return code if isinstance(code, int) else None


def _retry_after(exc: BaseException) -> float | None:
    """Seconds from a Retry-After header on a rate-limit error, when the provider sent one."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None) or getattr(exc, "headers", None)
    if not headers:
        return None
    with contextlib.suppress(Exception):
        value = headers.get("retry-after")
        if value is not None:
            return max(0.0, float(value))
    return None


_CONNECT_ERRORS = {"ConnectError", "ClientConnectorError", "gaierror"}


def _transport_cause(exc: BaseException) -> str | None:
    """The transport failure the cause chain shows: "malformed", "timeout", "unreachable" or None."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, json.JSONDecodeError):
            return "malformed"
        names = {cls.__name__ for cls in type(current).__mro__}
        if isinstance(current, TimeoutError) or names & {"TimeoutException", "APITimeoutError"}:
            return "timeout"
        if isinstance(current, ConnectionError) or names & _CONNECT_ERRORS:
            return "unreachable"
        current = current.__cause__ or current.__context__
    return None


def classify(exc: BaseException, model: str, secrets: tuple[str, ...] = ()) -> LLMError:
    """Turn whatever litellm (or the transport below it) raised into a typed `LLMError`."""
    if isinstance(exc, LLMError):
        return exc
    if isinstance(exc, TimeoutError):  # asyncio.wait_for's ceiling
        return LLMTimeout(f"{model}: no answer within the time limit", secrets=secrets)
    litellm = _litellm()
    detail = str(exc).strip() or type(exc).__name__
    # litellm reports refused connections and unparsable bodies as HTTP 500; the cause chain knows better.
    cause = _transport_cause(exc)
    if cause == "malformed":
        return MalformedAnswer(
            f"{model}: the server's response is not valid JSON ({detail})", secrets=secrets
        )
    if cause == "timeout" or isinstance(exc, litellm.Timeout):
        return LLMTimeout(f"{model}: no answer within the time limit ({detail})", secrets=secrets)
    if cause == "unreachable":
        return Unreachable(f"{model}: cannot reach the model server ({detail})", secrets=secrets)
    status = _status(exc)
    if isinstance(exc, (litellm.AuthenticationError, litellm.PermissionDeniedError)) or status in (401, 403):
        return AuthError(f"{model}: the provider rejected the credentials ({detail})", secrets=secrets)
    if status in (408, 504):
        return LLMTimeout(f"{model}: no answer within the time limit ({detail})", secrets=secrets)
    if isinstance(exc, litellm.RateLimitError) or status == 429:
        return RateLimited(f"{model}: rate limited by the provider ({detail})", secrets=secrets)
    if isinstance(exc, litellm.ContextWindowExceededError):
        return BadRequest(
            f"{model}: the prompt does not fit the model's context window; lower the prompt budget "
            f"(CraneExtension.token_budget, crane-bench --max-prompt-tokens) ({detail})",
            secrets=secrets,
        )
    refused = (litellm.BadRequestError, litellm.NotFoundError, litellm.UnprocessableEntityError)
    if isinstance(exc, refused) or (status is not None and 400 <= status < 500):
        return BadRequest(f"{model}: the provider refused the request ({detail})", secrets=secrets)
    if isinstance(exc, litellm.APIConnectionError) and status is None:
        return Unreachable(f"{model}: cannot reach the model server ({detail})", secrets=secrets)
    if status is not None and status >= 500:
        return LLMError(f"{model}: the model server failed with HTTP {status} ({detail})", secrets=secrets)
    return LLMError(f"{model}: {type(exc).__name__}: {detail}", secrets=secrets)


@dataclass
class Completion:
    """One chat completion's text and usage."""

    content: str
    finish_reason: str | None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None


@dataclass
class _Sample:
    answer: Answer | None
    error: LLMError | None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None


class LiteLLMBackend:
    """`Backend` over litellm. Construct once, share across requests (it holds the cache).

    model: a litellm model string (`openai/gpt-5`, `gemini/gemini-2.5-flash`, `ollama/qwen2.5`, or
        `openai/<alias>` with `api_base` for an OpenAI-compatible server).
    api_key: passed to the provider; None = litellm reads the provider's usual environment variable
        (OPENAI_API_KEY, GEMINI_API_KEY, ANTHROPIC_API_KEY, ...).
    votes: odd number of samples for the majority vote (1 = one call; 5 = the paper).
    timeout: seconds per call. max_retries / retry_base_delay / retry_max_delay: the rate-limit backoff
        (delay doubles from the base, capped; a Retry-After header wins when shorter than the cap).
    response_format: auto | json_schema | json_object | json_object_schema | none.
    cache: a `VerdictCache`, or None for no caching.
    schema: (name, JSON schema) of the answer asked for by structured output; the crash verdict's by
        default (the diagnosis judge asks for its own through `complete`).
    """

    name = "litellm"

    def __init__(
        self,
        model: str,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        votes: int = 1,
        temperature: float | None = None,
        max_tokens: int | None = None,
        timeout: float = 60.0,
        max_retries: int = 3,
        retry_base_delay: float = 1.0,
        retry_max_delay: float = 20.0,
        response_format: str = "auto",
        prompt: PromptSettings | None = None,
        cache: VerdictCache | None = None,
        extra_params: dict[str, Any] | None = None,
        schema: tuple[str, dict[str, Any]] = ("crash_verdict", ANSWER_SCHEMA),
    ):
        if not isinstance(model, str) or not model.strip():
            raise ValueError("model must be a litellm model string such as 'openai/gpt-5'")
        if timeout <= 0:
            raise ValueError(f"timeout must be positive, got {timeout}")
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}")
        if temperature is not None and not 0 <= temperature <= 2:
            raise ValueError(f"temperature must be between 0 and 2, got {temperature}")
        if response_format not in RESPONSE_FORMATS:
            raise ValueError(
                f"response_format must be one of {', '.join(RESPONSE_FORMATS)}; got {response_format!r}"
            )
        self.model = model.strip()
        self.api_base = api_base
        self.api_key = api_key
        self.votes = check_votes(votes)
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self.retry_base_delay = retry_base_delay
        self.retry_max_delay = retry_max_delay
        self.response_format_mode = response_format
        self.prompt = prompt or PromptSettings()
        self.cache = cache
        self.extra_params = dict(extra_params or {})
        self.schema = schema
        self._response_format: dict[str, Any] | None = None
        self._format_resolved = False

    @property
    def _secrets(self) -> tuple[str, ...]:
        return (self.api_key,) if self.api_key else ()

    def _format(self) -> dict[str, Any] | None:
        if not self._format_resolved:
            name, schema = self.schema
            self._response_format = response_format_for(self.response_format_mode, self.model, schema, name)
            self._format_resolved = True
        return self._response_format

    def _call_params(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "timeout": self.timeout,
            # Retries are ours (bounded, rate limits only); the OpenAI client's own would hide them.
            "num_retries": 0,
            "max_retries": 0,
            "drop_params": True,
        }
        if self.api_base:
            params["api_base"] = self.api_base
        api_key = self.api_key
        if api_key is None and self.api_base and self.model.startswith("openai/"):
            api_key = os.environ.get("OPENAI_API_KEY") or PLACEHOLDER_KEY
        if api_key is not None:
            params["api_key"] = api_key
        if self.temperature is not None:
            params["temperature"] = self.temperature
        if self.max_tokens is not None:
            params["max_tokens"] = self.max_tokens
        response_format = self._format()
        if response_format is not None:
            params["response_format"] = response_format
        params.update(self.extra_params)
        return params

    def _settings_key(self) -> dict[str, Any]:
        return {
            "api_base": self.api_base,
            "votes": self.votes,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "response_format": self.response_format_mode,
            "prompt": self.prompt.cache_key(),
            "extra": {k: repr(v) for k, v in sorted(self.extra_params.items())},
        }

    async def _complete(self, params: dict[str, Any]) -> Any:
        litellm = _litellm()
        for attempt in range(self.max_retries + 1):
            try:
                # A hard ceiling above the client's own timeout: some transports ignore it.
                return await asyncio.wait_for(litellm.acompletion(**params), timeout=self.timeout + 5)
            except Exception as exc:
                error = classify(exc, self.model, self._secrets)
                if error.kind != "rate_limit" or attempt >= self.max_retries:
                    raise error from None
                delay = min(self.retry_max_delay, self.retry_base_delay * 2**attempt)
                hinted = _retry_after(exc)
                if hinted is not None:
                    delay = min(self.retry_max_delay, hinted)
                await asyncio.sleep(delay)
        raise AssertionError("unreachable")  # the loop always returns or raises

    async def complete(self, messages: list[dict[str, str]]) -> Completion:
        """One completion of `messages` with this backend's settings; a typed `LLMError` otherwise."""
        response = await self._complete(self._call_params(messages))
        usage = getattr(response, "usage", None)
        cost: float | None = None
        with contextlib.suppress(Exception):
            cost = float(_litellm().completion_cost(completion_response=response))
        try:
            choice = response.choices[0]
            content = choice.message.content
        except (AttributeError, IndexError, TypeError):
            raise MalformedAnswer(
                f"{self.model}: the response has no message", secrets=self._secrets
            ) from None
        return Completion(
            content=content if isinstance(content, str) else "",
            finish_reason=getattr(choice, "finish_reason", None),
            prompt_tokens=getattr(usage, "prompt_tokens", None),
            completion_tokens=getattr(usage, "completion_tokens", None),
            cost_usd=cost,
        )

    async def _sample(self, messages: list[dict[str, str]]) -> _Sample:
        try:
            done = await self.complete(messages)
        except LLMError as error:
            return _Sample(None, error)
        try:
            answer = parse_answer(done.content)
        except MalformedAnswer as error:
            why = "the answer was cut off at the token limit: " if done.finish_reason == "length" else ""
            error = MalformedAnswer(f"{self.model}: {why}{error.message}", secrets=self._secrets)
            return _Sample(None, error, done.prompt_tokens, done.completion_tokens, done.cost_usd)
        return _Sample(answer, None, done.prompt_tokens, done.completion_tokens, done.cost_usd)

    async def predict(self, request: PredictionRequest) -> Verdict:
        # Off the event loop: token counting (and litellm's multi-second first import) would block it.
        prompt = await asyncio.to_thread(build_prompt, request, self.prompt)
        key = cache_key(prompt.messages, self.model, self._settings_key())
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                return hit
        started = time.perf_counter()
        samples = await asyncio.gather(*(self._sample(prompt.messages) for _ in range(self.votes)))
        latency_ms = (time.perf_counter() - started) * 1000
        decided = majority([s.answer for s in samples], self.votes)
        if decided is None:
            raise self._no_majority(samples)
        prompt_tokens = next((s.prompt_tokens for s in samples if s.prompt_tokens), prompt.prompt_tokens)
        completions = [s.completion_tokens for s in samples if s.completion_tokens is not None]
        costs = [s.cost_usd for s in samples if s.cost_usd is not None]
        verdict = Verdict(
            detection=decided.detection,
            reasoning=decided.reasoning,
            source="llm",
            votes=decided.votes,
            model=self.model,
            latency_ms=round(latency_ms, 1),
            prompt_tokens=prompt_tokens,
            completion_tokens=sum(completions) if completions else None,
            cost_usd=sum(costs) if costs else None,
        )
        if self.cache is not None:
            self.cache.put(key, verdict)
        return verdict

    def _no_majority(self, samples: list[_Sample]) -> LLMError:
        errors = [s.error for s in samples if s.error is not None]
        if not errors:  # cannot happen with odd n, kept so the caller always gets an error
            return LLMError(f"{self.model}: the samples reached no majority")
        kind, _ = collections.Counter(e.kind for e in errors).most_common(1)[0]
        first = next(e for e in errors if e.kind == kind)
        if self.votes == 1:
            return first
        valid = [s.answer.detection for s in samples if s.answer is not None]
        summary = (
            f"{len(errors)} of {self.votes} samples failed and the {len(valid)} valid answers "
            f"({sum(valid)} crash, {len(valid) - sum(valid)} no crash) are no majority of {self.votes}: "
        )
        clone = type(first)(summary + first.message, kind=first.kind)
        return clone
