"""Prediction backends built on the deterministic checks: `checks` alone, and `hybrid` (checks, then LLM)."""

from __future__ import annotations

import time
from typing import Any

from ..llm.base import Backend
from ..models import Finding, PredictionRequest, Verdict
from .core import check

NO_FINDING = "No certain crash found by the deterministic checks (they report only certain crashes)"


def _findings(request: PredictionRequest) -> list[Finding]:
    return check(
        request.target_cell,
        request.runtime,
        runtime_format=request.runtime_format,
        executed_cells=request.executed_cells,
    )


class ChecksBackend:
    """Crash only when a check proves it; otherwise "no crash" (which is not a proof of safety)."""

    name = "checks"

    def __init__(self, **options: Any) -> None:
        if options:
            raise ValueError(f"the checks backend takes no options, got {', '.join(sorted(options))}")

    async def predict(self, request: PredictionRequest) -> Verdict:
        start = time.perf_counter()
        findings = _findings(request)
        return Verdict(
            detection=bool(findings),
            reasoning=findings[0].message if findings else NO_FINDING,
            source="checks",
            findings=findings,
            latency_ms=round((time.perf_counter() - start) * 1000.0, 3),
        )


class HybridBackend:
    """The checks first; the LLM decides whatever they cannot prove.

    A certain finding is the answer (source "checks") and, by default, the LLM is not called for it: the
    finding is already certain, and skipping the call saves its cost and latency. With
    `consult_llm_on_findings=True` the LLM is asked anyway and the verdict's source becomes "both" when
    it also predicts the crash (the finding still decides, and stays the reason shown).
    """

    name = "hybrid"

    def __init__(self, checks: Backend, llm: Backend, consult_llm_on_findings: bool = False) -> None:
        self.checks = checks
        self.llm = llm
        self.consult_llm_on_findings = consult_llm_on_findings

    async def predict(self, request: PredictionRequest) -> Verdict:
        certain = await self.checks.predict(request)
        if not certain.detection:
            verdict = await self.llm.predict(request)
            return verdict.model_copy(update={"source": "llm", "findings": []})
        if not self.consult_llm_on_findings:
            return certain
        opinion = await self.llm.predict(request)
        return certain.model_copy(
            update={
                "source": "both" if opinion.detection else "checks",
                "votes": opinion.votes,
                "model": opinion.model,
                "prompt_tokens": opinion.prompt_tokens,
                "completion_tokens": opinion.completion_tokens,
                "cost_usd": opinion.cost_usd,
            }
        )
