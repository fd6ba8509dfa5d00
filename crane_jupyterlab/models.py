"""Pydantic models shared by the prompt builder, the backends, the checks, the server and the benchmarks."""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import BaseModel, Field

Categories = str  # any subset of "SRV", e.g. "SR"

# Who decided a verdict, strongest evidence first: "trial" (the cell crashed, or ran to its end, in a
# sandboxed fork of the kernel: observed), "syntax" and "checks" (certain from the facts), "llm" (a
# prediction). See crane_jupyterlab.policy.
VerdictSource = Literal["trial", "syntax", "checks", "llm"]

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


TrialStatus = Literal["crashed", "finished", "blocked", "timed_out", "out_of_memory", "unavailable"]


class TrialFrame(BaseModel):
    """One frame of an observed traceback that lies in the target cell."""

    line: int  # 1-based line of the cell
    text: str  # that line's source, stripped


class TrialOutcome(BaseModel):
    """What happened when the target cell ran in a sandboxed fork of the kernel (a trial run).

    Only `crashed` is a crash; `finished` means the cell ran to its end. `blocked` (the sandbox refused a
    side effect), `timed_out`, `out_of_memory` and `unavailable` say nothing about a crash: the checks and
    the model decide then, and the UI says why the trial could not.
    """

    status: TrialStatus
    exception: str | None = None  # crashed: the exception's class name, e.g. "KeyError"
    message: str | None = None  # crashed: its message (bounded)
    line: int | None = None  # crashed: the cell's line where it raised
    frames: list[TrialFrame] = Field(default_factory=list)  # crashed: frames inside the cell, outermost first
    elapsed_ms: float | None = None  # how long the cell ran in the fork
    sandbox: str | None = None  # what enforced the sandbox, e.g. "landlock+seccomp+netns"
    reason: str | None = None  # blocked: the refused side effect; otherwise why the trial did not conclude
    extra_memory_mb: float | None = None  # the trial's own memory (beyond what it shared with the kernel)
    # What the cell wrote to its private copy-on-write copy of the files, discarded with the trial:
    # "wrote 2 files (1.2 MB) in a private copy, discarded: the real files did not change".
    writes: str | None = None

    @property
    def observed(self) -> bool:
        """Whether the trial saw what the cell does: it crashed, or it ran to its end."""
        return self.status in ("crashed", "finished")


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
    # The trial run's outcome, when the cell was run in a sandboxed fork of the kernel (None: no trial).
    trial: TrialOutcome | None = None


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
