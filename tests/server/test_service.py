"""AnalysisService without a server: verdict assembly, busy/superseded/not-found paths, client caching.

The kernel here is a fake (an object with `execution_state` and `client()`), and so are the parts:
these tests are about the orchestration; tests/test_handlers.py runs the same paths with real kernels.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from jupyter_client.session import Session

from crane_jupyterlab.api import AnalyzeRequest, AnalyzeSettings
from crane_jupyterlab.models import Finding, PredictionRequest, TrialOutcome, Verdict
from crane_jupyterlab.server import service
from crane_jupyterlab.server.config import ServiceConfig
from crane_jupyterlab.server.errors import (
    ExtractionTimeout,
    KernelBusy,
    KernelNotFound,
    ModelFailure,
    ModelNotAllowed,
    Superseded,
)
from crane_jupyterlab.server.parts import ModelSpec, Parts
from crane_jupyterlab.server.service import AnalysisService

FINDING = Finding(rule="undefined-name", message="NameError: name 'y' is not defined", line=1)


class FakeClient:
    def __init__(self) -> None:
        self.started = False
        self.stopped = False

    def start_channels(self, **channels: bool) -> None:
        self.started = True

    def stop_channels(self) -> None:
        self.stopped = True


class FakeKernel:
    def __init__(self) -> None:
        self.execution_state = "idle"
        self.provisioner = object()
        self.session = Session(key=b"secret")
        self.clients: list[FakeClient] = []
        self.sessions: list[Session] = []

    def client(self, session: Session) -> FakeClient:
        self.sessions.append(session)
        self.clients.append(FakeClient())
        return self.clients[-1]


class FakeKernels:
    def __init__(self) -> None:
        self.kernels: dict[str, FakeKernel] = {}

    def __contains__(self, kernel_id: str) -> bool:
        return kernel_id in self.kernels

    def get_kernel(self, kernel_id: str) -> FakeKernel:
        return self.kernels[kernel_id]


class FakeBackend:
    name = "fake"

    def __init__(self, verdict: Verdict | None = None, error: ModelFailure | None = None, delay: float = 0):
        self.verdict = verdict or Verdict(detection=False, reasoning="runs", source="llm", prompt_tokens=7)
        self.error = error
        self.delay = delay
        self.requests: list[PredictionRequest] = []
        self.cancelled = 0

    async def predict(self, request: PredictionRequest) -> Verdict:
        self.requests.append(request)
        try:
            await asyncio.sleep(self.delay)
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        if self.error:
            raise self.error
        return self.verdict


class Harness:
    """A service over fake kernels and fake parts, recording what the parts were called with."""

    def __init__(self, config: ServiceConfig | None = None, **runtime: Any) -> None:
        self.kernels = FakeKernels()
        self.kernels.kernels["k1"] = FakeKernel()
        self.runtime: dict[str, Any] = {"objects": [], "history": ["a = 1", "b = 2"], **runtime}
        self.findings: list[Finding] = []
        self.backend = FakeBackend()
        self.specs: list[ModelSpec] = []
        self.extract_delay = 0.0
        self.extracts: list[tuple[Any, str, dict[str, Any]]] = []
        self.parts = Parts(
            extract=self._extract,
            render=lambda result, cats: f"runtime[{cats}] {len(result.get('objects', []))}",
            check=self._check,
            render_docs=lambda docs: "docs",
            make_backend=self._make_backend,
        )
        self.service = AnalysisService(
            config or ServiceConfig(model="openai/m"), self.kernels, parts=self.parts
        )

    async def _extract(self, kc: Any, source: str, options: dict[str, Any], timeout: float) -> dict[str, Any]:
        self.extracts.append((kc, source, options))
        await asyncio.sleep(self.extract_delay)
        return dict(self.runtime)

    def _check(self, source: str, runtime: dict[str, Any]) -> list[Finding]:
        try:
            compile(source, "<cell>", "exec")
        except SyntaxError as exc:
            return [Finding(rule="syntax-error", message=f"SyntaxError: {exc.msg} (line {exc.lineno}).")]
        return list(self.findings)

    def _make_backend(self, spec: ModelSpec) -> FakeBackend:
        self.specs.append(spec)
        return self.backend

    async def analyze(self, source: str = "a + b", **fields: Any) -> Any:
        return await self.service.analyze(AnalyzeRequest(kernel_id="k1", source=source, **fields))


# -- verdict assembly -------------------------------------------------------------------------------


async def test_a_certain_finding_decides_without_the_model() -> None:
    h = Harness()
    h.findings = [FINDING]
    result = await h.analyze("y")
    assert result.status == "ok" and result.verdict.source == "checks" and result.verdict.detection
    assert result.verdict.findings == [FINDING] and "NameError" in result.verdict.reasoning
    assert h.backend.requests == [] and h.specs == []  # the model was not consulted


REPLICA = Finding(rule="replica", message="ValueError: X has 3 features", line=1)


@pytest.mark.parametrize(
    ("config", "tier", "asked"),
    [
        (ServiceConfig(model=None, trial="off"), "full", True),  # no trial decides: the replicas judge
        (ServiceConfig(model="openai/m", trial="off"), "full", True),  # and outrank the model
        (ServiceConfig(model=None, trial="off"), "checks", False),  # never in the checks' quick tier
        (ServiceConfig(model=None, trial="off", replicas=False), "full", False),  # switched off
    ],
)
async def test_the_replicas_judge_where_no_trial_and_no_rule_decides(
    config: ServiceConfig, tier: str, asked: bool
) -> None:
    h = Harness(config)
    calls: list[tuple[str, list[str]]] = []

    def judge(source: str, runtime: dict[str, Any], executed: list[str]) -> list[Finding]:
        calls.append((source, executed))
        return [REPLICA]

    h.parts.judge_replicas = judge
    result = await h.analyze("m.predict(X)", tier=tier)
    assert calls == ([("m.predict(X)", ["a = 1", "b = 2"])] if asked else [])
    if asked:
        assert result.verdict.source == "checks" and result.verdict.findings == [REPLICA]
        assert result.timing.replica_ms > 0 and h.backend.requests == []
    else:
        assert not result.verdict.detection and result.timing.replica_ms == 0


async def test_a_rule_finding_is_not_judged_again_and_a_failing_judge_costs_nothing() -> None:
    h = Harness(ServiceConfig(model=None, trial="off"))
    h.parts.judge_replicas = lambda *args: (_ for _ in ()).throw(AssertionError("not asked"))
    h.findings = [FINDING]
    assert (await h.analyze("y")).verdict.findings == [FINDING]
    h.findings = []
    result = await h.analyze("y")  # the judge raises: logged, no finding, the answer still comes
    assert result.status == "no_model" and not result.verdict.detection


def test_only_a_crash_or_a_whole_run_decides() -> None:
    assert not service._trial_decides(None)
    assert service._trial_decides(TrialOutcome(status="crashed", exception="KeyError"))
    assert service._trial_decides(TrialOutcome(status="finished"))
    for status in ("blocked", "timed_out", "out_of_memory", "unavailable"):
        assert not service._trial_decides(TrialOutcome(status=status))  # type: ignore[arg-type]


# -- request validation -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "field"),
    [
        ({"categories": "SX"}, "categories"),
        ({"categories": "SS"}, "categories"),
        ({"votes": 2}, "votes"),
        ({"votes": 0}, "votes"),
        ({"temperature": 3}, "temperature"),
        ({"max_columns": 0}, "max_columns"),
        ({"runtime": "maybe"}, "runtime"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_settings_validation_names_the_field(settings: dict[str, Any], field: str) -> None:
    with pytest.raises(ValueError, match=field):
        AnalyzeSettings.model_validate(settings)


def test_categories_are_canonical() -> None:
    assert AnalyzeSettings(categories="VS").categories == "SV"
    assert AnalyzeSettings.model_validate({"categories": ["R", "S"]}).categories == "SR"
    assert AnalyzeSettings(categories="").categories == ""


# -- the paths --------------------------------------------------------------------------------------


async def test_ok_path_sends_history_runtime_and_settings_to_the_backend() -> None:
    h = Harness()
    result = await h.analyze(settings={"categories": "SR", "votes": 3, "temperature": 0.5})
    assert result.status == "ok" and result.verdict.source == "llm" and result.verdict.model == "openai/m"
    assert result.runtime_text == "runtime[SR] 0"
    assert "history" not in result.runtime  # the browser gets facts, not its own cells back
    assert result.executed_cells == 2 and result.tokens.prompt == 7
    (request,) = h.backend.requests
    assert request.executed_cells == ["a = 1", "b = 2"] and request.target_cell == "a + b"
    assert request.runtime_text == "runtime[SR] 0"
    assert h.specs == [ModelSpec("openai/m", 3, 0.5, "SR", True, False)]
    (_, _, options) = h.extracts[0]
    assert options["history"] is True and options["docs"] is False and options["max_columns"] == 20
    await h.analyze(settings={"max_columns": 3})
    assert h.extracts[-1][2]["max_columns"] == 3


async def test_runtime_off_is_the_minus_rt_baseline() -> None:
    h = Harness()
    await h.analyze(settings={"runtime": False})
    assert h.backend.requests[0].runtime_text is None


async def test_backends_are_reused_per_spec_and_bounded() -> None:
    h = Harness()
    await h.analyze()
    await h.analyze()
    await h.analyze(settings={"votes": 3})
    assert len(h.specs) == 2
    for i in range(40):
        await h.analyze(settings={"temperature": i / 20})
    assert len(h.service._backends) == service.MAX_BACKENDS


async def test_syntax_error_needs_no_model() -> None:
    h = Harness(syntax_error={"line": 2, "col": 5, "msg": "invalid syntax"})
    result = await h.analyze("x = 1\nx = (1,")
    assert result.status == "ok" and result.verdict.detection and result.verdict.source == "syntax"
    assert "line 2" in result.verdict.reasoning and "SyntaxError" in result.verdict.reasoning
    assert h.backend.requests == []


async def test_no_model_answers_with_the_checks_and_a_hint() -> None:
    h = Harness(ServiceConfig(model=""))
    h.findings = [FINDING]
    result = await h.analyze("y")
    assert result.status == "no_model" and result.model is None
    assert result.verdict.detection and result.verdict.source == "checks"
    assert "CraneExtension.model" in result.hint and "CRANE_MODEL" in result.hint
    assert h.specs == []


async def test_llm_failure_keeps_the_facts() -> None:
    h = Harness()
    h.backend.error = ModelFailure("auth", "invalid api key")
    result = await h.analyze("z")
    assert result.status == "llm_error" and result.error.kind == "auth"
    assert result.verdict is None and result.runtime_text


async def test_llm_overrunning_its_timeout_is_an_llm_error() -> None:
    h = Harness(ServiceConfig(model="openai/m", llm_timeout=0.05))
    h.backend.delay = 10
    started = time.perf_counter()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(service, "LLM_TIMEOUT_GRACE_S", 0.0)  # the guard's margin over the backend's timeout
        result = await h.analyze()
    assert result.status == "llm_error" and result.error.kind == "timeout"
    assert time.perf_counter() - started < 2


async def test_disallowed_model_is_refused_before_any_work() -> None:
    h = Harness(ServiceConfig(model="openai/m", allowed_models=["openai/other"]))
    with pytest.raises(ModelNotAllowed, match="allowed_models"):
        await h.analyze(settings={"model": "anthropic/expensive"})
    assert h.extracts == []
    await h.analyze(settings={"model": "openai/other"})
    await h.analyze(settings={"model": "openai/m"})
    assert [s.model for s in h.specs] == ["openai/other", "openai/m"]


async def test_unknown_and_dead_kernels_are_not_found() -> None:
    h = Harness()
    with pytest.raises(KernelNotFound, match="no running kernel"):
        await h.service.analyze(AnalyzeRequest(kernel_id="nope", source="1"))
    h.kernels.kernels["k1"].execution_state = "dead"
    with pytest.raises(KernelNotFound, match="dead"):
        await h.analyze()


async def test_a_kernel_busy_with_user_code_is_refused_at_once() -> None:
    h = Harness()
    h.kernels.kernels["k1"].execution_state = "busy"
    started = time.perf_counter()
    with pytest.raises(KernelBusy):
        await h.analyze()
    assert time.perf_counter() - started < 0.1
    assert h.extracts == []


async def test_our_own_probe_being_busy_does_not_refuse_the_next_request() -> None:
    h = Harness()
    kernel = h.kernels.kernels["k1"]
    h.extract_delay = 0.05

    async def extract_marks_busy(kc: Any, source: str, options: dict[str, Any], timeout: float) -> Any:
        kernel.execution_state = "busy"  # what jupyter_server records for our execute_request
        try:
            return await Harness._extract(h, kc, source, options, timeout)
        finally:
            kernel.execution_state = "idle"

    h.parts.extract = extract_marks_busy
    results = await asyncio.gather(*(h.analyze(f"a + {i}") for i in range(4)))
    assert all(r.status == "ok" for r in results)
    assert [source for _, source, _ in h.extracts] == [f"a + {i}" for i in range(4)]  # one at a time


async def test_a_newer_request_for_the_same_cell_supersedes_the_older() -> None:
    h = Harness()
    h.backend.delay = 5
    older = asyncio.ensure_future(h.analyze(cell_id="c1"))
    while not h.backend.requests:
        await asyncio.sleep(0.005)
    h.backend.delay = 0
    started = time.perf_counter()
    newer = asyncio.ensure_future(h.analyze("a * b", cell_id="c1"))
    with pytest.raises(Superseded):
        await older
    assert time.perf_counter() - started < 0.5
    assert h.backend.cancelled == 1  # the older LLM call was cancelled, not left running
    assert (await newer).status == "ok"
    # Other cells are independent.
    h.backend.delay = 0.05
    a, b = await asyncio.gather(h.analyze(cell_id="c2"), h.analyze(cell_id="c3"))
    assert a.status == b.status == "ok"


async def test_superseded_during_extraction_leaves_the_probe_to_finish() -> None:
    h = Harness()
    h.extract_delay = 0.2
    older = asyncio.ensure_future(h.analyze(cell_id="c1"))
    await asyncio.sleep(0.05)
    h.extract_delay = 0
    newer = asyncio.ensure_future(h.analyze("a * b", cell_id="c1"))
    with pytest.raises(Superseded):
        await older
    assert (await newer).status == "ok"
    await asyncio.sleep(0.01)  # the lock is released by a task once the kernel is seen idle
    assert len(h.extracts) == 2 and not h.service.pool._links["k1"].lock.locked()


async def test_extraction_errors_propagate_typed() -> None:
    h = Harness()

    async def slow(kc: Any, source: str, options: dict[str, Any], timeout: float) -> Any:
        raise ExtractionTimeout("no answer")

    h.parts.extract = slow
    with pytest.raises(ExtractionTimeout):
        await h.analyze()
    await asyncio.sleep(0.01)
    assert not h.service.pool._links["k1"].lock.locked()


async def test_one_client_per_kernel_renewed_after_a_restart() -> None:
    h = Harness()
    kernel = h.kernels.kernels["k1"]
    await h.analyze()
    await h.analyze()
    assert len(kernel.clients) == 1 and kernel.clients[0].started
    # Its own session id (the zmq identity replies are routed by), the kernel's signing key.
    assert kernel.sessions[0].session != kernel.session.session and kernel.sessions[0].key == b"secret"
    kernel.provisioner = object()  # what a restart does
    await h.analyze()
    assert len(kernel.clients) == 2 and kernel.clients[0].stopped
    assert {id(kc) for kc, _, _ in h.extracts} == {id(kernel.clients[0]), id(kernel.clients[1])}


async def test_prune_and_close_release_clients() -> None:
    h = Harness()
    await h.analyze()
    assert h.service.prune() == 0
    client = h.kernels.kernels.pop("k1").clients[0]
    assert h.service.prune() == 1 and client.stopped
    h.kernels.kernels["k1"] = FakeKernel()
    h.backend.delay = 10
    pending = asyncio.ensure_future(h.analyze())
    while len(h.backend.requests) < 2:
        await asyncio.sleep(0.005)
    await h.service.close()
    assert h.kernels.kernels["k1"].clients[0].stopped
    with pytest.raises(asyncio.CancelledError):
        await pending


async def test_a_failing_renderer_or_check_costs_only_its_own_part() -> None:
    h = Harness()

    def broken(*args: Any) -> Any:
        raise RuntimeError("bug")

    h.parts.render = broken
    h.parts.check = broken
    result = await h.analyze()
    assert result.status == "ok" and result.runtime_text == "" and result.verdict.source == "llm"


async def test_a_model_the_factory_refuses_is_an_llm_error() -> None:
    h = Harness()

    def refuse(spec: ModelSpec) -> Any:
        raise ValueError("the litellm backend needs a model")

    h.parts.make_backend = refuse
    result = await h.analyze()
    assert result.status == "llm_error" and result.error.kind == "bad_request"


async def test_a_client_dropped_mid_probe_is_closed_after_the_probe() -> None:
    h = Harness()
    kernel = h.kernels.kernels["k1"]
    h.extract_delay = 0.1
    pending = asyncio.ensure_future(h.analyze())
    while not h.extracts:
        await asyncio.sleep(0.005)
    kernel.provisioner = object()  # restarted while our probe runs
    h.extract_delay = 0
    second = await h.analyze("a * b")  # a new client for the new kernel process
    assert second.status == "ok" and len(kernel.clients) == 2
    assert not kernel.clients[0].stopped  # still in use by the first probe
    await pending
    await asyncio.sleep(0.01)
    assert kernel.clients[0].stopped
