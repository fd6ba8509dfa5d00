"""Pydantic models shared by the prompt builder, the backends, the checks, the server and the benchmarks."""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import BaseModel, Field

Categories = str  # any subset of "SRV", e.g. "SR"

VerdictSource = Literal["llm", "checks", "both", "syntax"]

# How a model is asked for JSON (see llm.litellm_backend.response_format_for); the server trait and the
# crane-bench options offer exactly these.
ResponseFormat = Literal["auto", "json_schema", "json_object", "json_object_schema", "none"]
RESPONSE_FORMATS: tuple[str, ...] = get_args(ResponseFormat)


class Finding(BaseModel):
    """A certain crash found by a deterministic check."""

    rule: str
    message: str
    evidence: list[str] = Field(default_factory=list)
    line: int | None = None


class PredictionRequest(BaseModel):
    """Everything a backend may use to judge one target cell."""

    case_id: str | None = None  # benchmark case key ("id/version"), used by the replay backend
    executed_cells: list[str] = Field(default_factory=list)
    target_cell: str
    runtime_text: str | None = None  # None = the -RT baseline
    runtime: dict[str, Any] | None = None  # the structured probe result (see docs/architecture.md)
    docs_text: str | None = None  # +D grounding, already rendered
    # Shape of `runtime`: "probe" (docs/architecture.md section 1) or "junobench" (a JunoBench case's
    # `runtime_info_obj`, the paper extractor's dict), so the checks know how to read it.
    runtime_format: str = "probe"


class Verdict(BaseModel):
    """The answer shown to the user and written by the benchmarks."""

    detection: bool
    reasoning: str
    source: VerdictSource
    votes: list[bool] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list)
    model: str | None = None
    latency_ms: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None
    cached: bool = False  # answered from the verdict cache: no model call, latency 0
