"""The REST contract of `/crane/*`: request and reply bodies, as pydantic models.

This module is the one source of the wire format: the handlers validate and serialise with it, and the
frontend's TypeScript types are generated from its JSON schema.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .models import BelowOutcome, Fix, Forecast, QuickTrial, TrialOutcome, Verdict

MAX_SOURCE_CHARS = 1_000_000

TrialMode = Literal["off", "on-demand", "auto"]


def _check_categories(value: str | None) -> str | None:
    if value is None:
        return None
    if any(c not in "SRV" for c in value) or len(set(value)) != len(value):
        raise ValueError("categories must be a subset of 'S', 'R', 'V' without repeats, e.g. 'SRV' or 'SR'")
    return "".join(c for c in "SRV" if c in value)  # canonical order


class AnalyzeSettings(BaseModel):
    """Per-request overrides of the server defaults."""

    model_config = ConfigDict(extra="forbid")

    model: str | None = Field(default=None, min_length=1, max_length=200)
    categories: str | None = None
    runtime: bool | None = None
    docs: bool | None = None
    votes: int | None = Field(default=None, ge=1, le=15)
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    max_columns: int | None = Field(default=None, ge=1, le=500)  # of a data frame, for the probe
    # Run the cell in a sandboxed fork of the kernel with this analysis: True (the "Trial-Run Cell"
    # command), False (never), None (the server's `trial` mode decides: only `auto` runs one).
    trial: bool | None = None
    # Try fix candidates of a certain or observed crash in trials: None: the server's `fixes` decides.
    fixes: bool | None = None

    @field_validator("categories", mode="before")
    @classmethod
    def _categories(cls, value: Any) -> Any:
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            value = "".join(value)  # ["S", "R"] is as natural as "SR"
        return _check_categories(value) if isinstance(value, str) else value

    @field_validator("votes")
    @classmethod
    def _odd_votes(cls, value: int | None) -> int | None:
        if value is not None and value % 2 == 0:
            raise ValueError("votes must be odd so the majority is strict")
        return value


# The most code cells below the target a request may send for the chain, and their text's bound.
MAX_BELOW = 200


class BelowCell(BaseModel):
    """A code cell below the target, as the frontend has it, for the chain."""

    model_config = ConfigDict(extra="forbid")

    cell_id: str | None = Field(default=None, max_length=200)
    source: str = Field(max_length=MAX_SOURCE_CHARS)


class AnalyzeRequest(BaseModel):
    """Body of `POST /crane/analyze`."""

    model_config = ConfigDict(extra="forbid")

    kernel_id: str = Field(min_length=1, max_length=200)
    source: str = Field(max_length=MAX_SOURCE_CHARS)
    cell_id: str | None = Field(default=None, max_length=200)
    settings: AnalyzeSettings = Field(default_factory=AnalyzeSettings)
    # Asked while the user types (the automatic check after a pause): a cell still being typed (an open
    # bracket, block or string: IPython's completeness check) gets `{"status": "incomplete"}`, no verdict.
    # An explicit check says "syntax error" of the same text, as running it would.
    typing: bool = False
    # "checks": the first of two tiers, the probe and the deterministic checks alone (no trial, no model),
    # answered in the time of one probe so a badge shows while the trial runs; "full" (default): everything
    # the settings ask for. A checks-tier answer is status "ok" (no model hint: the full tier follows).
    tier: Literal["checks", "full"] = "full"
    # The code cells after the target, in notebook order: when the full tier runs a trial and the target
    # runs to its end, the same trial goes on with them (the chain); absent, nothing changes.
    below: list[BelowCell] | None = Field(default=None, max_length=MAX_BELOW)
    # The target's text when the kernel last ran it (None: unknown): the names it no longer binds are
    # hidden state for the cells below that read them.
    previous_source: str | None = Field(default=None, max_length=MAX_SOURCE_CHARS)

    @field_validator("below")
    @classmethod
    def _below_size(cls, value: list[BelowCell] | None) -> list[BelowCell] | None:
        if value is not None and sum(len(c.source) for c in value) > MAX_SOURCE_CHARS:
            raise ValueError(f"the cells below may hold at most {MAX_SOURCE_CHARS} characters in all")
        return value


class Timing(BaseModel):
    extraction_ms: float = 0.0
    llm_ms: float = 0.0
    trial_ms: float = 0.0  # from starting the trial run to collecting its outcome (0: none)
    fix_ms: float = 0.0  # trying fix candidates in trials (0: none tried)
    replica_ms: float = 0.0  # running the cell on replicas of its inputs (0: not asked)
    below_ms: float = 0.0  # the chain: the cells below the target, in the trial after it (0: none)
    total_ms: float = 0.0


class Tokens(BaseModel):
    prompt: int | None = None
    completion: int | None = None


class ErrorInfo(BaseModel):
    kind: str
    message: str


AnalyzeStatus = Literal["ok", "llm_error", "no_model"]


class AnalyzeResult(BaseModel):
    """A 200 answer that carries an analysis (`ok`, `llm_error`, `no_model`)."""

    status: AnalyzeStatus
    verdict: Verdict | None  # None only for llm_error without a certain finding
    runtime: dict[str, Any] | None
    runtime_text: str
    executed_cells: int
    model: str | None
    timing: Timing
    tokens: Tokens
    error: ErrorInfo | None = None
    hint: str | None = None
    # The trial run's outcome when one was asked for (None: no trial with this analysis).
    trial: TrialOutcome | None = None
    # Edits of the cell a trial ran without an error (at most one; empty when none was found or tried).
    fixes: list[Fix] = Field(default_factory=list)
    # One entry per cell of the request's `below`, in its order (None: no chain was asked for).
    below: list[BelowOutcome] | None = None
    # How long the cell takes whole and what the kernel's memory peaks at (None: no trial decided).
    forecast: Forecast | None = None


# The most code cells a run from the top takes.
MAX_NOTEBOOK_CELLS = 1000


class NotebookSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    full: bool = False  # no cuts: every loop and library call runs whole (nbmake's job, in our sandbox)
    budget_s: float | None = Field(default=None, gt=0, le=3600)  # None: the server's notebook_budget


class NotebookRequest(BaseModel):
    """Body of `POST /crane/notebook`: will this notebook run from the top, in a fresh kernel?"""

    model_config = ConfigDict(extra="forbid")

    kernel_id: str = Field(min_length=1, max_length=200)
    cells: list[BelowCell] = Field(max_length=MAX_NOTEBOOK_CELLS)
    settings: NotebookSettings = Field(default_factory=NotebookSettings)

    @field_validator("cells")
    @classmethod
    def _size(cls, value: list[BelowCell]) -> list[BelowCell]:
        if sum(len(c.source) for c in value) > 4 * MAX_SOURCE_CHARS:
            raise ValueError(f"the cells may hold at most {4 * MAX_SOURCE_CHARS} characters in all")
        return value


NotebookCellStatus = Literal[
    "ran", "shortened", "crashed", "blocked", "unavailable", "timed_out", "out_of_memory", "not_reached"
]


class NotebookCell(BaseModel):
    """One code cell of a run from the top."""

    cell_id: str | None = None
    status: NotebookCellStatus
    exception: str | None = None
    message: str | None = None
    line: int | None = None
    elapsed_ms: float | None = None
    shortened: bool = False  # its long loops or library calls were cut: what ran is not all of it
    quick: QuickTrial | None = None  # its loops: which were cut, after how many iterations
    # crashed after a cell above was shortened: the crash may come from the cut (not claimed)
    after_cut: bool = False
    reason: str | None = None  # why it was blocked, unavailable, ended or not reached
    # a NameError whose name the live kernel does hold: hidden state (a cell that no longer defines it)
    hidden: bool | None = None
    forecast: Forecast | None = None  # its time whole, from what the run measured
    installs: str | None = None  # its package installs, answered from this environment (not run)


class NotebookRun(BaseModel):
    """`GET /crane/notebook/{id}`: a run from the top, while it runs and after."""

    id: str
    kernel_id: str
    state: Literal["running", "done", "cancelled", "error"]
    done: int = 0  # cells with an outcome
    total: int = 0
    running: int | None = None  # the index of the cell running now
    elapsed_ms: float = 0.0
    cells: list[NotebookCell] = Field(default_factory=list)  # once done: one per cell sent
    first_crash: NotebookCell | None = None  # the first observed crash (none after a cut above)
    first_crash_index: int | None = None
    message: str | None = None  # state error: why; otherwise what the run was (sandbox, full or quick)
    forecast: Forecast | None = None  # once done: a full run's time to where it ends, and its memory peak


class StatusReply(BaseModel):
    """Every answer without an analysis: superseded, incomplete (code still being typed), busy, and the
    errors."""

    status: Literal["superseded", "incomplete", "busy", "error"]
    message: str | None = None
    field: str | None = None


class ConfigReply(BaseModel):
    """Body of `GET /crane/config`: the server defaults a settings UI starts from. Never a key."""

    model: str | None
    allowed_models: list[str]
    categories: str
    votes: int
    temperature: float
    auto_check: bool
    docs: bool
    key_configured: bool  # whether the default model's provider has a key (or needs none)
    missing_env: list[str]  # environment variables the provider still lacks (names only)
    trial: TrialMode = "off"  # the server's trial-run mode (an administrator's choice)
    trial_available: bool = False  # whether this server can run trials at all (an OS sandbox, ...)
    trial_unavailable_reason: str | None = None  # why not, in words a user can act on
