"""Pydantic models shared by the prompt builder, the backends, the checks, the server and the benchmarks."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, get_args

from pydantic import AfterValidator, BaseModel, Field

Categories = str  # any subset of "SRV", e.g. "SR"

# Terminal control sequences (CSI such as colours, OSC such as hyperlinks) that libraries put in their
# messages (Keras bolds the layer's name): a person reads the words, never the codes.
_TERMINAL = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")


def plain(text: str) -> str:
    """`text` without terminal control sequences."""
    return _TERMINAL.sub("", text) if "\x1b" in text else text


# Text a person reads (the badge, the panel, the history, the prompt): control sequences removed.
Plain = Annotated[str, AfterValidator(plain)]

# Who decided a verdict, strongest evidence first: "trial" (the cell crashed, or ran to its end, in a
# sandboxed fork of the kernel: observed), "syntax" and "checks" (certain from the facts), "llm" (a
# prediction); "quick" (a crash seen in a quick trial, loops cut short, that does not depend on how many
# iterations ran: certain) and "quick_may" (one that may depend on it: a warning, not a certainty). See
# crane_jupyterlab.policy.
VerdictSource = Literal["trial", "syntax", "checks", "llm", "quick", "quick_may"]

# How a model is asked for JSON (see llm.litellm_backend.response_format_for); the server trait and the
# crane-bench options offer exactly these.
ResponseFormat = Literal["auto", "json_schema", "json_object", "json_object_schema", "none"]
RESPONSE_FORMATS: tuple[str, ...] = get_args(ResponseFormat)


class Finding(BaseModel):
    """A certain crash found by a deterministic check."""

    rule: str
    message: Plain
    evidence: list[Plain] = Field(default_factory=list)
    line: int | None = None


# Where a fix came from: the probe's or the library's close names, an import, the renamed-API table, a
# replacement the crash's message names, the callee's signature (a keyword renamed or dropped, an argument
# given by keyword), the model.
FixOrigin = Literal["close-name", "import", "renamed-api", "message", "signature", "model"]


class Fix(BaseModel):
    """An edit of the cell that a trial ran without an error, on the same kernel state: offered with an
    Apply button. Never one that no trial ran (crane_jupyterlab/fixes)."""

    title: Plain  # the change in a few characters: "df['Agee'] → df['Age']"
    source: str  # the whole new cell
    origin: FixOrigin  # where it came from (FixOrigin)
    line: int | None = None  # the first line changed
    tried: Plain  # what ran: "the edited cell ran to its end in a trial"
    shortened: bool = False  # a quick trial: long loops ran their first iterations only
    trial_ms: float = 0.0


TrialStatus = Literal["crashed", "finished", "blocked", "timed_out", "out_of_memory", "unavailable"]


class TrialFrame(BaseModel):
    """One frame of an observed traceback that lies in the target cell."""

    line: int  # 1-based line of the cell
    text: Plain  # that line's source, stripped


class TrialLoop(BaseModel):
    """One loop of the cell in a trial: how many iterations ran (over all its runs), whether it was cut
    short (a quick trial), its length when known (`len` of what it iterates, or Keras' epochs)."""

    line: int
    kind: str  # "for", "while", "comprehension", "fit" (Keras Model.fit's epochs)
    iterations: int
    runs: int = 1
    cut: bool = False
    total: int | None = None
    seconds: float | None = None  # what its iterations took in the trial
    full_s: float | None = None  # its runs whole, projected from those (None: unknown)


# How a crash seen in a quick trial relates to the cut: "certain" (it does not depend on how many
# iterations ran: no loop was cut before it, or the crashing statement reads nothing the cut loops
# touched), "depends" (it may), "shortened" (a failure a shortened run makes by itself: no evidence).
QuickCrash = Literal["certain", "depends", "shortened"]


class QuickTrial(BaseModel):
    """What the loops did in a trial whose long loops were cut after k iterations (kernel/trial/quick.py)."""

    k: int
    loops: list[TrialLoop] = Field(default_factory=list)
    cut: bool = False  # a loop was cut: the run was shortened
    crash: QuickCrash | None = None  # crashed: how the crash relates to the cut
    # Lines of the cell's asserts passed over: they checked what the cut loops built (a crash seen after
    # one depends on the cut).
    skipped_asserts: list[int] = Field(default_factory=list)


class TrialProgress(BaseModel):
    """How far a trial that ran out of time got: the cell's line it was on, its outer loops so far."""

    line: int | None = None
    loops: list[TrialLoop] = Field(default_factory=list)
    elapsed_ms: float | None = None


class TrialWorker(BaseModel):
    """A trial run in a fresh worker process on a copy of the cell's inputs (kernel/trial/worker.py), where
    a fork of the kernel could not run the cell (TensorFlow's runtime, the GPU)."""

    reason: str | None = None  # why the worker and not a fork
    spare: str | None = None  # "warm" (a spare was waiting), "warming" (one was starting), "cold"
    names: int | None = None  # the names copied (the cell's working set)
    inputs_mb: float | None = None  # their size, as copied
    pack_ms: float | None = None  # copying them, in a sandboxed fork of the kernel
    rebuild_ms: float | None = None  # rebuilding them in the worker
    handover_ms: float | None = None  # from the copy to the job: taking the spare (or starting one)
    warm_ms: float | None = None  # the spare's start: an interpreter with the kernel's libraries


# What became of a code cell below the edited one in the chain (kernel/trial/chain.py): "shortened" ran to
# its end with long loops cut; "skipped": it reads nothing the chain changed and the kernel already ran
# the same text; "not_reached": the chain stopped before it (a crash above, its budget).
BelowStatus = Literal[
    "crashed", "finished", "shortened", "skipped", "not_reached", "blocked", "timed_out", "out_of_memory",
    "unavailable",
]  # fmt: skip


class BelowOutcome(BaseModel):
    """One code cell below the edited one, run after it in the same trial (the chain)."""

    cell_id: str | None = None
    status: BelowStatus
    exception: str | None = None  # crashed: the exception's class name
    message: Plain | None = None  # crashed: its message (bounded)
    line: int | None = None  # crashed: the cell's line where it raised
    reads: list[str] = Field(default_factory=list)  # the names it reads that the chain changed
    elapsed_ms: float | None = None
    reason: Plain | None = None  # why it was skipped, not reached, blocked or ended
    # crashed: a loop of an earlier step (or of the edited cell) was cut, so the crash may depend on the
    # cut; or the step's own crash depends on its own cut (quick.crash): a prediction, not an observation
    after_cut: bool = False
    quick: QuickTrial | None = None
    # crashed: a trial of this cell alone on the kernel as it is (without the edit) crashed the same way:
    # the edit is not to blame (None: not asked)
    without_edit: bool | None = None
    # Names it reads that the edited cell bound when it last ran and binds no more (nor a cell between):
    # it runs only on the kernel's old value, and a run from the top fails there
    unbound: list[str] = Field(default_factory=list)
    forecast: Forecast | None = None  # its time whole (memory: the chain's peak is not per cell)
    installs: Plain | None = None  # its package installs, answered from this environment (not run)

    @property
    def observed(self) -> bool:
        """A crash the chain saw that depends on no cut loop."""
        own = self.quick is None or not self.quick.cut or self.quick.crash == "certain"
        return self.status == "crashed" and not self.after_cut and own


class ForecastBasis(BaseModel):
    """One loop a forecast projected from: what the trial measured of it."""

    line: int | None = None
    kind: str | None = None
    iterations: int | None = None  # that ran in the trial
    total: int | None = None  # its length per run (None: unknown)
    runs: int | None = None
    seconds_per_iteration: float | None = None  # steady: the warm-up iteration left out
    memory_kb_per_iteration: float | None = None  # what each iteration after the first kept in memory


class ForecastThreads(BaseModel):
    """Torch's compute, run on fewer threads in the trial than the kernel's: scaled to the kernel's."""

    trial: int  # the trial's threads (a fork runs torch on one)
    kernel: int  # the kernel's: what the real run uses
    share: float  # of the trial's time, torch's compute took this share


class RunsOutAt(BaseModel):
    """Where a cell projected to run out of memory would: its loop's line and iteration."""

    line: int | None = None
    iteration: int
    of: int


class Forecast(BaseModel):
    """Before the cell runs: how long it takes whole and what the kernel's memory peaks at, from what its
    trial measured (kernel/trial/forecast.py). `observed`: the trial ran it whole (or to its crash);
    `projected`: from the first iterations of loops it cut, or from fewer threads than the kernel's.
    Never a claim that the cell crashes."""

    seconds: float | None = None  # the full cell's wall time (to its crash, for one that crashes)
    seconds_low: float | None = None
    seconds_high: float | None = None  # None with `at_least`
    at_least: bool = False  # a loop of unknown length or a sampled library call: `seconds` is a lower bound
    basis: Literal["observed", "projected"] = "observed"
    projected_from: list[ForecastBasis] = Field(default_factory=list)
    threads: ForecastThreads | None = None  # the times scaled from the trial's threads to the kernel's
    peak_memory_mb: float | None = None  # the kernel's resident memory at the cell's peak
    memory_available_mb: float | None = (
        None  # what the kernel may hold: now, plus the machine's or cgroup's room
    )
    gpu_peak_mb: float | None = None
    gpu_available_mb: float | None = None
    out_of_memory: bool = False  # the projected peak exceeds what is available
    runs_out_at: RunsOutAt | None = None


class TrialOutcome(BaseModel):
    """What happened when the target cell ran in a sandbox before the user ran it (a trial run): in a fork
    of the kernel, or in a fresh worker process on a copy of the cell's inputs (`worker`).

    Only `crashed` is a crash; `finished` means the cell ran to its end. `blocked` (the sandbox refused a
    side effect), `timed_out`, `out_of_memory` and `unavailable` say nothing about a crash: the checks and
    the model decide then, and the UI says why the trial could not.
    """

    status: TrialStatus
    exception: str | None = None  # crashed: the exception's class name, e.g. "KeyError"
    message: Plain | None = None  # crashed: its message (bounded)
    line: int | None = None  # crashed: the cell's line where it raised
    frames: list[TrialFrame] = Field(default_factory=list)  # crashed: frames inside the cell, outermost first
    elapsed_ms: float | None = None  # how long the cell ran in the fork
    sandbox: str | None = None  # what enforced the sandbox, e.g. "landlock+seccomp+netns"
    reason: Plain | None = None  # blocked: the refused side effect; otherwise why the trial did not conclude
    extra_memory_mb: float | None = None  # the trial's own memory (beyond what it shared with the kernel)
    # What the cell wrote to its private copy-on-write copy of the files, discarded with the trial:
    # "wrote 2 files (1.2 MB) in a private copy, discarded: the real files did not change".
    writes: str | None = None
    # A package install the cell asks for (`!pip install`), answered from this environment, never run:
    # "the install was answered from this environment, not run: already installed: numpy 2.4.6".
    installs: Plain | None = None
    quick: QuickTrial | None = None  # the loops, in a trial that may cut long ones short
    progress: TrialProgress | None = None  # timed_out: how far it got
    worker: TrialWorker | None = None  # the trial ran in a fresh process on a copy of the cell's inputs
    # The chain: the code cells below, run after the target in the same trial when they were sent
    below: list[BelowOutcome] = Field(default_factory=list)
    forecast: Forecast | None = None  # how long the cell takes whole and its memory peak

    @property
    def shortened(self) -> bool:
        """Whether a loop was cut short: what ran is not the whole cell."""
        return self.quick is not None and self.quick.cut

    @property
    def observed(self) -> bool:
        """Whether the trial saw what the cell does: it crashed, or it ran to its end, whole (a shortened
        run's crash counts only when it does not depend on the cut)."""
        if self.shortened:
            return self.status == "crashed" and self.quick is not None and self.quick.crash == "certain"
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
    reasoning: Plain
    source: VerdictSource
    votes: list[bool] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list)
    model: str | None = None
    latency_ms: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None
    cached: bool = False  # answered from the verdict cache: no model call, latency 0
