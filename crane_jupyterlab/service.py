"""Analysis orchestration: one target cell against its notebook's live kernel.

Independent of tornado so it can be tested without a server: the handlers validate the body, call
`AnalysisService.analyze` and map its typed errors to HTTP statuses. The parts written elsewhere (the
kernel client, the renderer, the checks, the LLM backends) are reached through `Parts`, so a test can
substitute any of them; `default_parts()` wires the real ones.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from jupyter_client.session import Session
from pydantic import SecretStr

from .api import (
    AnalyzeRequest,
    AnalyzeResult,
    AnalyzeSettings,
    AnalyzeStatus,
    ConfigReply,
    ErrorInfo,
    Timing,
    Tokens,
)
from .llm.base import Backend
from .models import Finding, PredictionRequest, Verdict

log = logging.getLogger(__name__)

MODEL_ENV = "CRANE_MODEL"
API_KEY_ENV = "CRANE_API_KEY"
NO_MODEL_HINT = (
    "No model is configured, so only the deterministic checks ran. Set one with "
    "`c.CraneExtension.model = 'openai/gpt-4o-mini'` in jupyter_server_config.py, "
    f"`--CraneExtension.model=...` on the command line or the {MODEL_ENV} environment variable; "
    f"put the provider's key in its usual environment variable (e.g. OPENAI_API_KEY) or in {API_KEY_ENV}."
)


# --------------------------------------------------------------------------------------------------
# Errors the handlers map to HTTP statuses
# --------------------------------------------------------------------------------------------------


class AnalysisError(Exception):
    """Base of the service's typed failures; `status` is the HTTP status the handler answers with."""

    status = 500

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class KernelNotFound(AnalysisError):
    status = 404


class KernelBusy(AnalysisError):
    status = 409


class ModelNotAllowed(AnalysisError):
    status = 403


class ExtractionTimeout(AnalysisError):
    status = 504


class ExtractionFailed(AnalysisError):
    status = 502


class Superseded(Exception):
    """A newer request for the same cell replaced this one."""


class ModelFailure(Exception):
    """The model failed; `kind` is one of the LLM error kinds (auth, timeout, rate_limit, ...)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


# --------------------------------------------------------------------------------------------------
# Parts written elsewhere, behind one seam
# --------------------------------------------------------------------------------------------------


class KernelSource(Protocol):
    """jupyter_server's MappingKernelManager satisfies this."""

    def __contains__(self, kernel_id: str) -> bool: ...

    def get_kernel(self, kernel_id: str) -> Any: ...


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


@dataclass
class Parts:
    """The collaborators of the service. Every callable raises only the errors of this module."""

    extract: ExtractFn
    render: RenderFn
    check: CheckFn
    render_docs: DocsFn
    make_backend: BackendFactory


@dataclass
class ServiceConfig:
    """The server defaults (the CraneExtension traits, minus tornado and traitlets)."""

    model: str = ""
    api_base: str = ""
    api_key: SecretStr | None = None
    response_format: str = "auto"
    allowed_models: list[str] = field(default_factory=list)
    votes: int = 1
    temperature: float = 0.0
    llm_timeout: float = 60.0
    extract_timeout: float = 10.0
    token_budget: int = 12000
    max_columns: int = 20
    probe_samples: int = 10
    categories: str = "SRV"
    docs: bool = False
    auto_check: bool = True

    def allowed(self) -> list[str]:
        """Models a request may ask for: the allow-list plus the default model."""
        models = list(self.allowed_models)
        if self.model and self.model not in models:
            models.insert(0, self.model)
        return models


@dataclass
class KeyStatus:
    """Whether the model's provider has what it needs; `missing` names environment variables only."""

    configured: bool
    missing: list[str]


def key_status(config: ServiceConfig) -> KeyStatus:
    """Ask litellm which environment variables the default model's provider needs. Blocking (the
    first call imports litellm): run it in a thread."""
    if config.api_key is not None:
        return KeyStatus(True, [])
    import_litellm()
    import litellm

    try:
        found = litellm.validate_environment(model=config.model)
    except Exception as exc:  # an unknown provider: say so rather than guess
        log.debug("crane: validate_environment(%s) failed: %s", config.model, type(exc).__name__)
        return KeyStatus(False, [])
    missing = [str(k) for k in found.get("missing_keys") or []]
    if config.api_base:  # an explicit endpoint stands in for the provider's *_API_BASE variable
        missing = [k for k in missing if not k.endswith("_API_BASE")]
    return KeyStatus(bool(found.get("keys_in_environment")) or not missing, missing)


def config_reply(config: ServiceConfig, keys: KeyStatus | None) -> ConfigReply:
    """`GET /crane/config`'s body: the server defaults a settings UI starts from. Never a key."""
    return ConfigReply(
        model=config.model or None,
        allowed_models=config.allowed(),
        categories=config.categories,
        votes=config.votes,
        temperature=config.temperature,
        auto_check=config.auto_check,
        docs=config.docs,
        key_configured=bool(keys and keys.configured),
        missing_env=keys.missing if keys else [],
    )


def import_litellm() -> None:
    """Import litellm (seconds); never let it fetch its model cost map from the network."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm  # noqa: F401


def default_parts(config: ServiceConfig) -> Parts:
    """The real parts. Imported here, not at module import, so the server starts without litellm's
    multi-second import and the service stays testable while a part is still being written."""
    from . import runtime_text
    from .checks import check as run_checks
    from .kernel import client as kernel_client
    from .prompt import render_docs

    async def extract(kc: Any, source: str, options: dict[str, Any], timeout: float) -> dict[str, Any]:
        try:
            return await kernel_client.extract(kc, source, options, timeout)
        except kernel_client.KernelTimeout as exc:
            raise ExtractionTimeout(f"the kernel did not answer the probe within {timeout:g} s") from exc
        except kernel_client.KernelDead as exc:
            raise KernelNotFound(f"the kernel died or is restarting: {exc}") from exc
        except kernel_client.ProbeError as exc:
            raise ExtractionFailed(f"the runtime probe failed in the kernel: {exc}") from exc

    def check(source: str, runtime: dict[str, Any]) -> list[Finding]:
        findings: list[Finding] = run_checks(source, runtime, runtime_format="probe")
        return findings

    def make_backend(spec: ModelSpec) -> Backend:
        from .llm.factory import make_backend as factory

        import_litellm()  # called in a thread: the backend's first predict must not import it
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

    return Parts(
        extract=extract,
        render=runtime_text.render,
        check=check,
        render_docs=render_docs,
        make_backend=make_backend,
    )


class _TranslatedBackend:
    """Turns the LLM layer's typed errors into `ModelFailure`, so the service knows one error type."""

    def __init__(self, inner: Backend) -> None:
        self.inner = inner
        self.name = inner.name

    async def predict(self, request: PredictionRequest) -> Verdict:
        from .llm.errors import LLMError

        try:
            return await self.inner.predict(request)
        except LLMError as exc:
            raise ModelFailure(str(getattr(exc, "kind", "unknown")), str(exc)) from exc


# --------------------------------------------------------------------------------------------------
# Verdict assembly
# --------------------------------------------------------------------------------------------------


SYNTAX_RULE = "syntax-error"  # the checks' rule for a cell that does not compile


def syntax_verdict(finding: Finding) -> Verdict:
    """A cell that does not parse always crashes: no model needed."""
    return Verdict(
        detection=True,
        reasoning=f"{finding.message} The cell cannot run until it parses.",
        source="syntax",
        findings=[finding],
    )


def checks_verdict(findings: list[Finding]) -> Verdict:
    """The verdict of the deterministic checks alone (they only ever claim certain crashes)."""
    if findings:
        return Verdict(detection=True, reasoning=_findings_text(findings), source="checks", findings=findings)
    return Verdict(
        detection=False,
        reasoning="The deterministic checks found no certain crash (they cannot prove a cell safe).",
        source="checks",
    )


def combine(llm: Verdict, findings: list[Finding]) -> Verdict:
    """A certain finding wins over the model; the model decides everything else."""
    if not findings:
        return llm.model_copy(update={"source": "llm", "findings": []})
    reasoning = _findings_text(findings)
    if llm.detection:
        reasoning = f"{reasoning}\nModel: {llm.reasoning}"
    return llm.model_copy(
        update={
            "detection": True,
            "reasoning": reasoning,
            "source": "both" if llm.detection else "checks",
            "findings": findings,
        }
    )


def _findings_text(findings: list[Finding]) -> str:
    return "\n".join(f.message for f in findings)


# --------------------------------------------------------------------------------------------------
# The service
# --------------------------------------------------------------------------------------------------


@dataclass
class _Effective:
    model: str | None
    categories: str
    runtime: bool
    docs: bool
    votes: int
    temperature: float
    max_columns: int


@dataclass(eq=False)
class _KernelLink:
    """One kernel client per kernel, reused across requests; the lock keeps probes one at a time
    because they share the client's channels."""

    kernel: Any
    provisioner: Any
    client: Any
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    probing: bool = False
    closing: bool = False  # dropped while a probe was in flight: closed when the probe is done


def _close_client(link: _KernelLink) -> None:
    try:
        link.client.stop_channels()
    except Exception:  # a client of a dead kernel may fail to close; it is gone either way
        log.debug("crane: closing a kernel client failed", exc_info=True)


def _consume(task: asyncio.Future[Any]) -> None:
    """Retrieve the outcome of a probe whose request went away, so asyncio does not warn about it."""
    if not task.cancelled():
        task.exception()


# Backends kept at once (see AnalysisService._backend).
MAX_BACKENDS = 16

# How long a request waits for jupyter_server to see a just-finished cell's "idle" before a 409.
BUSY_GRACE_S = 0.03

# Added to llm_timeout for the service's own guard around a backend call.
LLM_TIMEOUT_GRACE_S = 5.0

# How long to wait, after our own probe, for jupyter_server to see the kernel idle again; its IOPub
# watcher may lag the reply a little, and a stale "busy" would make the next request a false 409.
SETTLE_S = 1.0


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
        self.kernels = kernels
        self._parts = parts
        self.log = logger or log
        self._links: dict[str, _KernelLink] = {}
        self._backends: dict[ModelSpec, Backend] = {}
        self._inflight: dict[tuple[str, str], asyncio.Task[AnalyzeResult]] = {}
        self._superseded: set[asyncio.Task[AnalyzeResult]] = set()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._background: set[asyncio.Future[None]] = set()

    @property
    def parts(self) -> Parts:
        if self._parts is None:
            self._parts = default_parts(self.config)
        return self._parts

    # -- entry point ------------------------------------------------------------------------------

    async def analyze(self, request: AnalyzeRequest) -> AnalyzeResult:
        """Analyze one cell. Raises `AnalysisError` subclasses, or `Superseded` when a newer request
        for the same (kernel_id, cell_id) replaced this one."""
        eff = self.effective(request.settings)  # refuse a disallowed model before any work
        task = asyncio.ensure_future(self._analyze(request, eff))
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
        )

    async def _analyze(self, request: AnalyzeRequest, eff: _Effective) -> AnalyzeResult:
        started = time.perf_counter()
        link = await self._link(request.kernel_id)

        options = {
            "max_columns": eff.max_columns,
            "probe_samples": self.config.probe_samples,
            "docs": eff.docs,
            "history": True,
        }
        try:
            runtime, extraction_ms = await self._extract(link, request.source, options)
        except ExtractionTimeout:
            # The usual cause: user code started right after our busy check and the probe queued
            # behind it. That is a busy kernel, not a broken one.
            if getattr(link.kernel, "execution_state", None) == "busy":
                raise KernelBusy("the kernel started running code") from None
            raise

        parts = self.parts
        history = [c for c in runtime.get("history") or [] if isinstance(c, str)]
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
                timing=Timing(extraction_ms=extraction_ms, llm_ms=llm_ms, total_ms=total_ms),
                **extra,
            )

        # The checks parse the cell as IPython will (magics included) and report a syntax error as
        # their only finding.
        findings = self._check(request.source, runtime)
        syntax = next((f for f in findings if f.rule == SYNTAX_RULE), None)
        if syntax is not None:
            return result("ok", syntax_verdict(syntax))
        if eff.model is None:
            return result("no_model", checks_verdict(findings), hint=NO_MODEL_HINT)

        docs_text = None
        if eff.docs and runtime.get("docs"):
            docs_text = parts.render_docs(runtime["docs"])
        prediction = PredictionRequest(
            executed_cells=history,
            target_cell=request.source,
            runtime_text=text if eff.runtime else None,
            runtime=runtime,
            docs_text=docs_text,
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
                checks_verdict(findings) if findings else None,
                (time.perf_counter() - t1) * 1000,
                error=ErrorInfo(kind=failure.kind, message=failure.message),
            )
        llm_ms = (time.perf_counter() - t1) * 1000
        verdict = combine(llm, findings).model_copy(update={"model": eff.model})
        return result("ok", verdict, llm_ms)

    # The renderer and the checks only add to a verdict: a bug in either is logged and the analysis
    # goes on without it, rather than costing the user the whole answer.

    def _render(self, runtime: dict[str, Any], categories: str) -> str:
        try:
            return self.parts.render(runtime, categories)
        except Exception:
            self.log.exception("crane: rendering the runtime text failed")
            return ""

    def _check(self, source: str, runtime: dict[str, Any]) -> list[Finding]:
        try:
            return self.parts.check(source, runtime)
        except Exception:
            self.log.exception("crane: the deterministic checks failed")
            return []

    # -- kernels ----------------------------------------------------------------------------------

    def _kernel(self, kernel_id: str) -> Any:
        # Membership first: jupyter_server's get_kernel raises a tornado 404 of its own for unknown ids.
        if kernel_id not in self.kernels:
            self._drop(kernel_id)
            raise KernelNotFound(f"no running kernel with id {kernel_id!r}")
        kernel = self.kernels.get_kernel(kernel_id)
        if getattr(kernel, "execution_state", None) == "dead":
            self._drop(kernel_id)
            raise KernelNotFound(f"kernel {kernel_id!r} is dead")
        return kernel

    async def _link(self, kernel_id: str) -> _KernelLink:
        """The cached client of this kernel, refusing a kernel busy with user code; a new client when
        the kernel was replaced or restarted (a restart gives the kernel manager a new provisioner)."""
        kernel = self._kernel(kernel_id)
        link = self._links.get(kernel_id)
        provisioner = getattr(kernel, "provisioner", None)
        if link is not None and (link.kernel is not kernel or link.provisioner is not provisioner):
            self._drop(kernel_id)
            link = None
        await self._refuse_if_busy(kernel, link)
        if link is None:
            # A session of our own: the manager's session id is the zmq identity of every client made
            # with it, and the kernel would route our probe replies to any of them (or theirs to us).
            session = Session(
                config=kernel.session.config,
                key=kernel.session.key,
                signature_scheme=kernel.session.signature_scheme,
            )
            client = kernel.client(session=session)
            # Shell only: the probe reads nothing else, and an unread IOPub would queue every output.
            client.start_channels(shell=True, iopub=False, stdin=False, hb=False, control=False)
            link = _KernelLink(kernel=kernel, provisioner=provisioner, client=client)
            self._links[kernel_id] = link
        return link

    @staticmethod
    async def _refuse_if_busy(kernel: Any, link: _KernelLink | None) -> None:
        """Raise KernelBusy when the kernel runs something other than our own probe (which the server
        tracks as busy too). The server learns "idle" from IOPub a moment after a cell's reply, so a
        request right behind a finished cell gets a few milliseconds' grace instead of a false 409."""

        def user_busy() -> bool:
            ours = link is not None and (link.probing or link.lock.locked())
            return getattr(kernel, "execution_state", None) == "busy" and not ours

        deadline = time.monotonic() + BUSY_GRACE_S
        while user_busy():
            if time.monotonic() >= deadline:
                raise KernelBusy("the kernel is running code")
            await asyncio.sleep(0.002)

    async def _extract(
        self, link: _KernelLink, source: str, options: dict[str, Any]
    ) -> tuple[dict[str, Any], float]:
        await link.lock.acquire()
        try:
            # Behind our own previous probe the kernel may have started user code meanwhile.
            await self._refuse_if_busy(link.kernel, None)
        except BaseException:
            link.lock.release()
            raise
        # Shielded: a superseded request answers at once, but its probe completes and releases the
        # lock, so the shared client never has two probes in flight.
        inner = asyncio.ensure_future(self._extract_locked(link, source, options))
        inner.add_done_callback(_consume)
        return await asyncio.shield(inner)

    async def _extract_locked(
        self, link: _KernelLink, source: str, options: dict[str, Any]
    ) -> tuple[dict[str, Any], float]:
        """The probe result and the kernel round trip in ms; runs holding `link.lock`, releases it."""
        link.probing = True
        try:
            started = time.perf_counter()
            runtime = await self.parts.extract(link.client, source, options, self.config.extract_timeout)
            return runtime, (time.perf_counter() - started) * 1000
        except KernelNotFound:
            self._drop_link(link)
            raise
        finally:
            # Keep the lock until jupyter_server has seen our probe's "idle" (its IOPub watcher lags
            # the reply), so the next request never takes our busy for user code; off this request's
            # path, so the answer does not wait for it.
            release = asyncio.ensure_future(self._release_when_settled(link))
            self._background.add(release)
            release.add_done_callback(self._background.discard)

    @staticmethod
    async def _release_when_settled(link: _KernelLink) -> None:
        try:
            deadline = time.monotonic() + SETTLE_S
            while getattr(link.kernel, "execution_state", None) == "busy" and time.monotonic() < deadline:
                await asyncio.sleep(0.002)
        finally:
            link.probing = False
            link.lock.release()
            if link.closing:
                _close_client(link)

    def _drop(self, kernel_id: str) -> None:
        link = self._links.get(kernel_id)
        if link is not None:
            self._drop_link(link)

    def _drop_link(self, link: _KernelLink) -> None:
        for kernel_id, existing in list(self._links.items()):
            if existing is link:
                del self._links[kernel_id]
        if link.lock.locked():  # never pull the channels from under a probe
            link.closing = True
            return
        _close_client(link)

    def prune(self) -> int:
        """Drop the clients of kernels that went away or restarted; returns how many were dropped."""
        dropped = 0
        for kernel_id, link in list(self._links.items()):
            if link.lock.locked():
                continue
            kernel = self.kernels.get_kernel(kernel_id) if kernel_id in self.kernels else None
            if kernel is not link.kernel or getattr(kernel, "provisioner", None) is not link.provisioner:
                self._drop_link(link)
                dropped += 1
        return dropped

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

    async def close(self) -> None:
        """Cancel the analyses in flight and close every kernel client."""
        pending = [*self._tasks, *self._background]
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        for link in list(self._links.values()):
            self._drop_link(link)
        self._backends.clear()
