"""Analysis orchestration: one target cell against its notebook's live kernel.

Independent of tornado so it can be tested without a server: the handlers validate the body, call
`AnalysisService.analyze` and map its typed errors to HTTP statuses. The parts written elsewhere (the
kernel payload, the renderer, the checks, the LLM backends) are reached through `Parts` (parts.py), so a
test can substitute any of them; `default_parts()` wires the real ones. The cells below a target (the
chain) are chain.py's. Which evidence decides the verdict is
`crane_jupyterlab.policy`'s, the same policy `crane-bench` measures.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from dataclasses import dataclass, replace
from typing import Any

from .. import fixes, policy
from ..api import (
    AnalyzeRequest,
    AnalyzeResult,
    AnalyzeSettings,
    AnalyzeStatus,
    BelowCell,
    ErrorInfo,
    NotebookRequest,
    NotebookRun,
    Timing,
    Tokens,
)
from ..llm.base import Backend
from ..models import Finding, Fix, PredictionRequest, TrialOutcome, Verdict
from . import chain, fromtop
from . import trial as trials
from .config import NO_MODEL_HINT, ServiceConfig
from .errors import (
    ExtractionFailed,
    ExtractionTimeout,
    KernelBusy,
    ModelFailure,
    ModelNotAllowed,
    Superseded,
    TrialsOff,
)
from .kernels import KernelLink, KernelPool, KernelSource
from .parts import LLM_TIMEOUT_GRACE_S, ModelSpec, Parts, default_parts

log = logging.getLogger(__name__)

# Backends kept at once (see AnalysisService._backend).
MAX_BACKENDS = 16


@dataclass
class _Effective:
    model: str | None
    categories: str
    runtime: bool
    docs: bool
    votes: int
    temperature: float
    max_columns: int
    trial: bool  # run a trial with this analysis
    fixes: bool = False  # try fix candidates of a certain or observed crash in trials
    checks_tier: bool = False  # the probe and the checks only: the full answer follows
    replicas: bool = False  # where no trial decides, run the cell on replicas of its inputs


class AnalysisService:
    """Analyzes cells against live kernels. One instance per server."""

    def __init__(
        self,
        config: ServiceConfig,
        kernels: KernelSource,
        parts: Parts | None = None,
        logger: logging.Logger | None = None,
    ) -> None:
        self.config = config
        self.pool = KernelPool(kernels)
        self._parts = parts
        self.log = logger or log
        self._backends: dict[ModelSpec, Backend] = {}
        self._inflight: dict[tuple[str, str], asyncio.Task[AnalyzeResult]] = {}
        self._superseded: set[asyncio.Task[AnalyzeResult]] = set()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._runs: fromtop.Runs | None = None

    @property
    def parts(self) -> Parts:
        if self._parts is None:
            self._parts = default_parts(self.config)
        return self._parts

    def prune(self) -> int:
        """Drop the clients of kernels that went away or restarted; returns how many were dropped."""
        return self.pool.prune()

    # -- entry point ------------------------------------------------------------------------------

    async def analyze(self, request: AnalyzeRequest) -> AnalyzeResult:
        """Analyze one cell. Raises `AnalysisError` subclasses, or `Superseded` when a newer request
        for the same (kernel_id, cell_id) replaced this one."""
        eff = self.effective(request.settings)  # refuse a disallowed model before any work
        if request.tier == "checks":
            eff = replace(eff, model=None, trial=False, fixes=False, checks_tier=True)
        task = asyncio.ensure_future(self._analyze_and_fix(request, eff))
        self._tasks.add(task)
        key = (request.kernel_id, request.cell_id) if request.cell_id else None
        if key is not None:
            older = self._inflight.get(key)
            if older is not None and not older.done():
                self._superseded.add(older)
                older.cancel()
            self._inflight[key] = task
        try:
            return await task
        except asyncio.CancelledError:
            if task in self._superseded:
                raise Superseded() from None
            raise
        finally:
            self._tasks.discard(task)
            self._superseded.discard(task)
            if key is not None and self._inflight.get(key) is task:
                del self._inflight[key]

    def effective(self, settings: AnalyzeSettings) -> _Effective:
        """Request overrides over server defaults; refuses models outside the allow-list."""
        cfg = self.config
        model = settings.model if settings.model is not None else (cfg.model or None)
        if settings.model is not None and settings.model not in cfg.allowed():
            allowed = ", ".join(cfg.allowed()) or "none configured"
            raise ModelNotAllowed(
                f"model {settings.model!r} is not allowed on this server (allowed: {allowed}); "
                "an administrator can add it to c.CraneExtension.allowed_models"
            )
        return _Effective(
            model=model,
            categories=settings.categories if settings.categories is not None else cfg.categories,
            runtime=settings.runtime if settings.runtime is not None else True,
            docs=settings.docs if settings.docs is not None else cfg.docs,
            votes=settings.votes if settings.votes is not None else cfg.votes,
            temperature=settings.temperature if settings.temperature is not None else cfg.temperature,
            max_columns=settings.max_columns if settings.max_columns is not None else cfg.max_columns,
            # True: the user asked ("Trial-Run Cell"); None: the server's mode decides.
            trial=settings.trial if settings.trial is not None else cfg.trial == "auto",
            fixes=settings.fixes if settings.fixes is not None else cfg.fixes,
            replicas=cfg.replicas,
        )

    async def _analyze_and_fix(self, request: AnalyzeRequest, eff: _Effective) -> AnalyzeResult:
        executed: list[str] = []  # filled by _analyze: the cells the kernel ran, from the probe
        result = await self._analyze(request, eff, executed)
        verdict = result.verdict
        if (
            not eff.fixes
            or verdict is None
            or not verdict.detection
            or verdict.source not in FIXABLE
            or self.parts.invoke is None
            or self.config.trial == "off"
        ):
            return result
        started = time.perf_counter()
        crashes = [
            fixes.Crash(f"{t.exception}: {t.message}", t.line)
            for t in [result.trial]
            if t and t.status == "crashed"
        ]
        crashes += [fixes.Crash(f.message, f.line) for f in verdict.findings]
        crashes += [fixes.Crash(note) for note in fixes.notes(result.runtime or {})]
        # Off the event loop: reading the library's signatures may import it in this process.
        found = await asyncio.to_thread(
            fixes.candidates, request.source, result.runtime or {}, crashes, executed=executed
        )
        offered = await self._first_that_runs(request.kernel_id, found)
        if not offered and eff.model is not None and self.parts.suggest_fix is not None:
            # Nothing from the facts ran: the model, once, for the smallest edit.
            crash = crashes[0].message if crashes else verdict.reasoning
            proposed = await self._model_fix(eff.model, request.source, crash, result.runtime_text, executed)
            offered = await self._first_that_runs(request.kernel_id, [proposed] if proposed else [])
            found = found + ([proposed] if proposed else [])
        if not found:
            return result  # no candidate: fix_ms stays 0
        fix_ms = (time.perf_counter() - started) * 1000
        timing = result.timing.model_copy(
            update={"fix_ms": fix_ms, "total_ms": result.timing.total_ms + fix_ms}
        )
        return result.model_copy(update={"fixes": offered, "timing": timing})

    async def _first_that_runs(self, kernel_id: str, found: list[fixes.Candidate]) -> list[Fix]:
        """The first candidate whose trial ran to its end (or ran a quick trial's first iterations), as
        the one fix offered; none when every trial failed."""
        found = [c for c in found if trials.parses(c.source)]
        if not found:
            return []
        link = await self.pool.link(kernel_id)
        for candidate in found:
            outcome, trial_ms = await self._trial(link, candidate.source)
            if outcome.status == "finished":
                return [_offer(candidate, outcome, trial_ms)]
        return []

    async def _model_fix(
        self, model: str, cell: str, crash: str, runtime_text: str, executed: list[str]
    ) -> fixes.Candidate | None:
        """The model's smallest edit, validated; None when it failed, answered malformed, or rewrote the
        cell (each logged: a fix is extra, never a reason to lose the verdict)."""
        from ..fixes import model as fix_model
        from ..llm.errors import MalformedAnswer

        assert self.parts.suggest_fix is not None
        asked = fix_model.messages(cell, crash, runtime_text, executed)
        try:
            text = await asyncio.wait_for(
                self.parts.suggest_fix(model, asked), self.config.llm_timeout + LLM_TIMEOUT_GRACE_S
            )
            proposed = fix_model.candidate(cell, fix_model.parse(text))
        except (ModelFailure, MalformedAnswer, asyncio.TimeoutError) as exc:
            self.log.warning("crane: model %s proposed no usable fix (%s)", model, type(exc).__name__)
            return None
        if proposed is None:
            self.log.info("crane: model %s proposed no edit or a rewrite; not tried", model)
        return proposed

    async def _analyze(
        self, request: AnalyzeRequest, eff: _Effective, executed: list[str] | None = None
    ) -> AnalyzeResult:
        started = time.perf_counter()
        link = await self.pool.link(request.kernel_id)

        options = {
            "max_columns": eff.max_columns,
            "probe_samples": self.config.probe_samples,
            "docs": eff.docs,
            "history": True,
        }
        # The trial starts first, so the cell runs in its fork while the probe reads the kernel.
        below = request.below if request.below and not eff.checks_tier else None
        trial, trial_task = self._start_trial(link, request.source, eff, below)
        try:
            try:
                runtime, extraction_ms = await self._extract(link, request.source, options)
            except ExtractionTimeout:
                # The usual cause: user code started right after our busy check and the probe queued
                # behind it. That is a busy kernel, not a broken one.
                if getattr(link.kernel, "execution_state", None) == "busy":
                    raise KernelBusy("the kernel started running code") from None
                raise
            # The checks parse the cell as IPython will (magics included) and report a syntax error as
            # their only finding.
            findings = self._check(request.source, runtime)
            trial_ms = 0.0
            if trial_task is not None:
                trial, trial_ms = await trial_task
        finally:
            if trial_task is not None and not trial_task.done():
                trial_task.cancel()
        found, below_ms = None, 0.0
        if below is not None and trial_task is not None and trial is not None:
            # a crash below that a cut loop may have caused is asked again, with nothing cut, where a
            # full run to it fits the chain's budget (server/chain.py)
            trial = await chain.answer_hedge(
                trial,
                lambda budget_s: self._trial(link, request.source, below, full_s=budget_s),
                self.config.chain_budget,
            )
        if below is not None:  # the cells below, as the trial's chain met them (server/chain.py)
            found = chain.entries(below, trial if trial_task is not None else None)
            ran = [c for c in runtime.get("history") or [] if isinstance(c, str)]
            found = await chain.blame(below, found, lambda source: self._trial(link, source), ran)
            chain.unbound(request.previous_source, request.source, below, found)
            below_ms = chain.elapsed_ms(found)
            if trial is not None:
                trial = trial.model_copy(update={"below": []})  # said once, in `below`

        parts = self.parts
        history = [c for c in runtime.get("history") or [] if isinstance(c, str)]
        replica_ms = 0.0
        if not findings and not eff.checks_tier and eff.replicas and not _trial_decides(trial):
            t0 = time.perf_counter()
            findings = await self._replicas(request.source, runtime, history)
            replica_ms = (time.perf_counter() - t0) * 1000
        if executed is not None:
            executed.extend(history)
        text = self._render(runtime, eff.categories)
        # The browser needs the facts, not the notebook's own cells back.
        shown = {k: v for k, v in runtime.items() if k != "history"}

        def result(
            status: AnalyzeStatus, verdict: Verdict | None, llm_ms: float = 0.0, **extra: Any
        ) -> AnalyzeResult:
            tokens = Tokens(
                prompt=verdict.prompt_tokens if verdict else None,
                completion=verdict.completion_tokens if verdict else None,
            )
            total_ms = (time.perf_counter() - started) * 1000
            return AnalyzeResult(
                status=status,
                verdict=verdict,
                runtime=shown,
                runtime_text=text,
                executed_cells=len(history),
                model=eff.model,
                tokens=tokens,
                timing=Timing(
                    extraction_ms=extraction_ms,
                    llm_ms=llm_ms,
                    trial_ms=trial_ms,
                    replica_ms=replica_ms,
                    below_ms=below_ms,
                    total_ms=total_ms,
                ),
                trial=trial,
                below=found,
                forecast=trial.forecast if trial is not None else None,
                **extra,
            )

        certain = policy.certain(findings, trial)
        if certain is not None and (certain.source in ("syntax", "trial", "quick") or eff.model is not None):
            return result("ok", certain)
        maybe = policy.maybe_quick(trial) if certain is None else None
        if maybe is not None:  # seen in a quick trial, may depend on the cut: a warning, no model needed
            if eff.model is None:
                return result("no_model", maybe, hint=NO_MODEL_HINT)
            return result("ok", maybe)
        if eff.checks_tier:
            return result("ok", policy.without_model(findings, trial))
        if eff.model is None:
            # Said beside a certain crash too: the user should know a model could tell more.
            return result("no_model", policy.without_model(findings, trial), hint=NO_MODEL_HINT)

        docs_text = None
        if eff.docs and runtime.get("docs"):
            docs_text = parts.render_docs(runtime["docs"])
        prediction = PredictionRequest(
            executed_cells=history,
            target_cell=request.source,
            runtime_text=text if eff.runtime else None,
            runtime=runtime,
            docs_text=docs_text,
            trial=trial,
        )
        t1 = time.perf_counter()
        try:
            backend = await self._backend(
                ModelSpec(eff.model, eff.votes, eff.temperature, eff.categories, eff.runtime, eff.docs)
            )
            # The backend has its own timeout; this one only guards against a backend that ignores it.
            guard = self.config.llm_timeout + LLM_TIMEOUT_GRACE_S
            llm = await asyncio.wait_for(backend.predict(prediction), guard)
        except (ModelFailure, asyncio.TimeoutError) as exc:
            failure = (
                exc
                if isinstance(exc, ModelFailure)
                else ModelFailure("timeout", f"no answer within {self.config.llm_timeout:g} s")
            )
            self.log.warning("crane: model %s failed (%s)", eff.model, failure.kind)
            return result(
                "llm_error",
                None,
                (time.perf_counter() - t1) * 1000,
                error=ErrorInfo(kind=failure.kind, message=failure.message),
            )
        llm_ms = (time.perf_counter() - t1) * 1000
        verdict = policy.from_model(llm).model_copy(update={"model": eff.model})
        return result("ok", verdict, llm_ms)

    # The renderer and the checks only add to a verdict: a bug in either is logged and the analysis
    # goes on without it, rather than costing the user the whole answer.

    def _render(self, runtime: dict[str, Any], categories: str) -> str:
        try:
            return self.parts.render(runtime, categories)
        except Exception:
            self.log.exception("crane: rendering the runtime text failed")
            return ""

    async def _replicas(self, source: str, runtime: dict[str, Any], history: list[str]) -> list[Finding]:
        judge = self.parts.judge_replicas
        if judge is None:
            return []
        try:
            return await asyncio.to_thread(judge, source, runtime, history)
        except Exception:
            self.log.exception("crane: the replica judgement failed")
            return []

    def _check(self, source: str, runtime: dict[str, Any]) -> list[Finding]:
        try:
            return self.parts.check(source, runtime)
        except Exception:
            self.log.exception("crane: the deterministic checks failed")
            return []

    async def _extract(
        self, link: KernelLink, source: str, options: dict[str, Any]
    ) -> tuple[dict[str, Any], float]:
        """The probe result and the kernel round trip in ms."""

        async def probe(client: Any) -> tuple[dict[str, Any], float]:
            started = time.perf_counter()
            runtime = await self.parts.extract(client, source, options, self.config.extract_timeout)
            return runtime, (time.perf_counter() - started) * 1000

        return await self.pool.call(link, probe)

    # -- the trial run ----------------------------------------------------------------------------

    def _start_trial(
        self, link: KernelLink, source: str, eff: _Effective, below: list[BelowCell] | None = None
    ) -> tuple[TrialOutcome | None, asyncio.Task[tuple[TrialOutcome, float]] | None]:
        """(an outcome known without running, the running trial): (None, None) when no trial is wanted."""
        if not eff.trial or self.parts.invoke is None:
            return None, None
        if self.config.trial == "off":
            return trials.unavailable("Trial runs are off on this server (c.CraneExtension.trial)."), None
        if not trials.parses(source):
            return None, None  # a syntax error: the checks say so, and no trial could start
        return None, asyncio.ensure_future(self._trial(link, source, below))

    async def _trial(
        self, link: KernelLink, source: str, below: list[BelowCell] | None = None, full_s: float | None = None
    ) -> tuple[TrialOutcome, float]:
        """The trial's outcome and its wall time in ms; each request through the pool (one at a time,
        and never while user code runs). `full_s`: nothing cut, the cell and its chain within that many
        seconds each."""
        invoke = self.parts.invoke
        assert invoke is not None
        timeout = self.config.extract_timeout

        async def call(target: str, arguments: str) -> dict[str, Any]:
            return await self.pool.call(link, lambda client: invoke(client, target, arguments, timeout))

        options = self._trial_options(below)
        if full_s is not None:
            options = dataclasses.replace(
                options, quick_k=0, chain_quick=False, budget_s=max(options.budget_s, full_s), chain_s=full_s
            )
        started = time.perf_counter()
        outcome = await trials.run(call, source, options)
        return outcome, (time.perf_counter() - started) * 1000

    def _trial_options(self, below: list[BelowCell] | None = None) -> trials.TrialOptions:
        return trials.TrialOptions(
            budget_s=self.config.trial_budget,
            memory_mb=self.config.trial_memory_mb,
            hooks_only=self.config.trial_hooks_only,
            private_writes=self.config.trial_private_writes,
            quick_k=self.config.trial_quick_iterations,
            worker=self.config.trial_worker,
            worker_max_mb=self.config.trial_worker_max_mb,
            worker_gpu_fraction=self.config.trial_worker_gpu_fraction,
            below=tuple((c.cell_id, c.source) for c in below or ()),
            chain_s=self.config.chain_budget,
        )

    # -- models -----------------------------------------------------------------------------------

    async def _backend(self, spec: ModelSpec) -> Backend:
        backend = self._backends.get(spec)
        if backend is None:
            # In a thread: the first backend imports litellm, seconds the event loop must not stall.
            try:
                backend = await asyncio.to_thread(self.parts.make_backend, spec)
            except ValueError as exc:  # the factory's word for a model string or option it refuses
                raise ModelFailure("bad_request", str(exc)) from exc
            backend = self._backends.setdefault(spec, backend)
            # Requests choose temperature, votes and categories: keep the most recent few backends
            # (each holds a verdict cache), not one per combination ever asked for.
            while len(self._backends) > MAX_BACKENDS:
                del self._backends[next(iter(self._backends))]
        return backend

    # -- from the top (fromtop.py) -----------------------------------------------------------------

    @property
    def runs(self) -> fromtop.Runs:
        """The runs of notebooks from the top, in fresh workers of their kernels' Python."""
        if self._runs is None:
            options = self._trial_options().as_dict()
            self._runs = fromtop.Runs(self._invoke_on, self._undefined, self.config.notebook_budget, options)
        return self._runs

    def start_notebook(self, request: NotebookRequest) -> NotebookRun:
        """Start a run from the top; KernelNotFound for an unknown kernel, fromtop.Conflict while one runs."""
        self.pool.kernel(request.kernel_id)
        if self.config.trial == "off":
            raise TrialsOff("trial runs are off on this server (c.CraneExtension.trial): no run from the top")
        return self.runs.start(request)

    async def _invoke_on(self, kernel_id: str, target: str, arguments: str) -> dict[str, Any]:
        invoke = self.parts.invoke
        if invoke is None:
            raise ExtractionFailed("this service runs nothing in kernels")
        link = await self.pool.link(kernel_id)
        timeout = self.config.extract_timeout
        return await self.pool.call(link, lambda client: invoke(client, target, arguments, timeout))

    async def _undefined(self, kernel_id: str, name: str) -> list[str]:
        link = await self.pool.link(kernel_id)
        runtime, _ = await self._extract(link, name, {"max_columns": 1, "probe_samples": 1})
        return [n for n in runtime.get("undefined") or [] if isinstance(n, str)]

    async def close(self) -> None:
        """Cancel the analyses in flight and close every kernel client."""
        if self._runs is not None:
            await self._runs.close()
        pending = list(self._tasks)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        await self.pool.close()
        self._backends.clear()


# The verdicts a fix is looked for: a certain or observed crash (a prediction is not enough to edit for).
FIXABLE = frozenset({"trial", "checks", "quick"})


def _trial_decides(trial: TrialOutcome | None) -> bool:
    """Whether the trial settled the question: it crashed, or ran the whole cell to its end."""
    if trial is None:
        return False
    return trial.status == "crashed" or (trial.status == "finished" and not trial.shortened)


def _offer(candidate: fixes.Candidate, outcome: TrialOutcome, trial_ms: float) -> Fix:
    ms = outcome.elapsed_ms or trial_ms
    seconds = f"{ms:.0f} ms" if ms < 1000 else f"{ms / 1000:.1f} s"
    if outcome.shortened:
        k = outcome.quick.k if outcome.quick else 0
        tried = (
            f"tried: the edited cell ran in a quick trial, its long loops cut to their first {k} "
            f"iterations, without an error ({seconds})"
        )
    else:
        tried = f"tried: the edited cell then ran to its end in a trial ({seconds})"
    return Fix(
        title=candidate.title,
        source=candidate.source,
        origin=candidate.origin,
        line=candidate.line,
        tried=tried,
        shortened=outcome.shortened,
        trial_ms=trial_ms,
    )
