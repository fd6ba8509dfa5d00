"""The interface every prediction backend implements (LLM, replay, checks, hybrid)."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from ..models import PredictionRequest, Verdict


@runtime_checkable
class Backend(Protocol):
    """Turns one prediction request into a verdict.

    Raises `crane_jupyterlab.llm.errors.LLMError` subclasses (typed: auth, timeout, rate limit,
    malformed, unreachable) when a model fails; never returns a guessed verdict.
    """

    name: str

    async def predict(self, request: PredictionRequest) -> Verdict: ...
