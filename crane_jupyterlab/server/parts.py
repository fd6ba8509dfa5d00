"""The collaborators of the analysis service (`service.py`), and the real ones wired together.

`Parts` names each collaborator the service calls (the kernel payload, the renderer, the checks, the
replica judge, the LLM backends, a fix's model), so a test can substitute any of them; `default_parts`
builds the real ones, importing each only when first needed (litellm takes seconds to import).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ..llm import litellm
from ..llm.base import Backend
from ..models import Finding, PredictionRequest, Verdict
from .config import ServiceConfig
from .errors import ExtractionFailed, ExtractionTimeout, KernelNotFound, ModelFailure

# Added to llm_timeout for the service's own guard around a backend call.
LLM_TIMEOUT_GRACE_S = 5.0


@dataclass(frozen=True)
class ModelSpec:
    """Everything that selects one backend instance (the key of the backend cache): the model, its
    sampling, and the prompt settings the backend builds its prompts with."""

    model: str
    votes: int
    temperature: float
    categories: str
    runtime: bool
    docs: bool


ExtractFn = Callable[[Any, str, dict[str, Any], float], Awaitable[dict[str, Any]]]
RenderFn = Callable[[dict[str, Any], str], str]
CheckFn = Callable[[str, dict[str, Any]], list[Finding]]
DocsFn = Callable[[list[dict[str, Any]]], str]
BackendFactory = Callable[[ModelSpec], Backend]
# invoke(client, target, arguments, timeout): one silent payload call (the trial run's requests).
InvokeFn = Callable[[Any, str, str, float], Awaitable[dict[str, Any]]]
FixFn = Callable[[str, list[dict[str, str]]], Awaitable[str]]


@dataclass
class Parts:
    """The collaborators of the service. Every callable raises only the errors of this module."""

    extract: ExtractFn
    render: RenderFn
    check: CheckFn
    render_docs: DocsFn
    make_backend: BackendFactory
    invoke: InvokeFn | None = None  # None: this service runs no trials
    # (model, chat messages) -> the model's answer text, asked for the fix schema; None: no model fixes
    suggest_fix: FixFn | None = None
    # (source, probe result, executed cells) -> the replicas' findings; None: no replica judgement
    judge_replicas: Callable[[str, dict[str, Any], list[str]], list[Finding]] | None = None


def default_parts(config: ServiceConfig) -> Parts:
    """The real parts. Imported here, not at module import, so the server starts without litellm's
    multi-second import and the service stays testable while a part is still being written."""
    from .. import runtime_text
    from ..checks import check as run_checks
    from ..prompt import render_docs
    from . import payload

    async def extract(kc: Any, source: str, options: dict[str, Any], timeout: float) -> dict[str, Any]:
        try:
            return await payload.extract(kc, source, options, timeout)
        except payload.KernelTimeout as exc:
            raise ExtractionTimeout(f"the kernel did not answer the probe within {timeout:g} s") from exc
        except payload.KernelDead as exc:
            raise KernelNotFound(f"the kernel died or is restarting: {exc}") from exc
        except payload.ProbeError as exc:
            raise ExtractionFailed(f"the runtime probe failed in the kernel: {exc}") from exc

    async def invoke(kc: Any, target: str, arguments: str, timeout: float) -> dict[str, Any]:
        try:
            return await payload.invoke(kc, target, arguments, timeout)
        except payload.KernelDead as exc:
            raise KernelNotFound(f"the kernel died or is restarting: {exc}") from exc

    def check(source: str, runtime: dict[str, Any]) -> list[Finding]:
        findings: list[Finding] = run_checks(source, runtime)
        return findings

    def judge_replicas(source: str, runtime: dict[str, Any], executed: list[str]) -> list[Finding]:
        from ..checks import replica
        from ..checks.view import from_probe
        from .trial import platform_sandbox

        if not platform_sandbox().available:  # replicas run notebook code: only inside the OS sandbox
            return []
        view = from_probe(runtime)
        if replica.other_environment(view) is not None:
            return []
        return replica.judge(source, view, executed, budget_s=config.replica_budget)

    def make_backend(spec: ModelSpec) -> Backend:
        from ..llm.factory import make_backend as factory

        litellm()  # called in a thread: the backend's first predict must not import it
        backend = factory(
            "litellm",
            model=spec.model,
            api_base=config.api_base or None,
            api_key=config.api_key.get_secret_value() if config.api_key else None,
            response_format=config.response_format,
            votes=spec.votes,
            temperature=spec.temperature,
            timeout=config.llm_timeout,
            runtime=spec.runtime,
            categories=spec.categories,
            docs=spec.docs,
            max_prompt_tokens=config.token_budget,
        )
        assert backend is not None  # only the "none" backend is None
        return _TranslatedBackend(backend)

    async def suggest_fix(model: str, messages: list[dict[str, str]]) -> str:
        from ..fixes.model import FIX_SCHEMA
        from ..llm.errors import LLMError
        from ..llm.litellm_backend import LiteLLMBackend

        await asyncio.to_thread(litellm)  # its first import takes seconds: not on the event loop
        backend = LiteLLMBackend(
            model,
            api_base=config.api_base or None,
            api_key=config.api_key.get_secret_value() if config.api_key else None,
            response_format=config.response_format,
            temperature=0.0,
            timeout=config.llm_timeout,
            schema=("cell_fix", FIX_SCHEMA),
        )
        try:
            return (await backend.complete(messages)).content
        except LLMError as exc:
            raise ModelFailure(str(getattr(exc, "kind", "unknown")), str(exc)) from exc

    return Parts(
        extract=extract,
        render=runtime_text.render,
        check=check,
        render_docs=render_docs,
        make_backend=make_backend,
        invoke=invoke,
        suggest_fix=suggest_fix,
        judge_replicas=judge_replicas,
    )


class _TranslatedBackend:
    """Turns the LLM layer's typed errors into `ModelFailure`, so the service knows one error type."""

    def __init__(self, inner: Backend) -> None:
        self.inner = inner
        self.name = inner.name

    async def predict(self, request: PredictionRequest) -> Verdict:
        from ..llm.errors import LLMError

        try:
            return await self.inner.predict(request)
        except LLMError as exc:
            raise ModelFailure(str(getattr(exc, "kind", "unknown")), str(exc)) from exc
