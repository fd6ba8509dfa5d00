"""ChecksBackend and HybridBackend: the verdict policy, certain findings first, the LLM for the rest."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from crane_jupyterlab.bench.backends import ChecksBackend, HybridBackend, make_backend
from crane_jupyterlab.llm.base import Backend
from crane_jupyterlab.models import PredictionRequest, Verdict
from crane_jupyterlab.policy import NO_CERTAIN_CRASH


def probe_result(undefined: list[str]) -> dict[str, Any]:
    python = ".".join(map(str, sys.version_info[:3]))
    return {"python": python, "syntax_error": None, "undefined": undefined, "modules": [], "objects": []}


class RecordingLLM:
    """A stand-in for the model edge: answers `detection` and counts its calls."""

    name = "fake-llm"

    def __init__(self, detection: bool) -> None:
        self.detection = detection
        self.calls = 0

    async def predict(self, request: PredictionRequest) -> Verdict:
        self.calls += 1
        return Verdict(
            detection=self.detection,
            reasoning="the model says so",
            source="llm",
            votes=[self.detection],
            model="fake",
        )


def request(source: str, undefined: list[str]) -> PredictionRequest:
    return PredictionRequest(target_cell=source, runtime=probe_result(undefined))


async def test_checks_backend_reports_a_certain_crash() -> None:
    backend = ChecksBackend()
    assert isinstance(backend, Backend)
    verdict = await backend.predict(request("print(x)", ["x"]))
    assert verdict.detection and verdict.source == "checks"
    assert verdict.reasoning == verdict.findings[0].message and "NameError" in verdict.reasoning


async def test_checks_backend_without_a_finding_says_so() -> None:
    verdict = await ChecksBackend().predict(request("print(x)", []))
    assert not verdict.detection and verdict.reasoning == NO_CERTAIN_CRASH and verdict.findings == []


async def test_checks_backend_reads_junobench_records() -> None:
    req = PredictionRequest(
        target_cell="model.predict(X)",
        runtime={"model": {"type": "<class 'sklearn.svm._classes.SVC'>", "is_fitted": False}},
        runtime_format="junobench",
        executed_cells=["X = 1"],
    )
    verdict = await ChecksBackend().predict(req)
    assert verdict.detection and "NotFittedError" in verdict.reasoning


def test_checks_backend_rejects_options() -> None:
    with pytest.raises(ValueError, match="no options"):
        make_backend("checks", votes=3)


async def test_unknown_runtime_format_is_a_clear_error() -> None:
    req = PredictionRequest(target_cell="x", runtime={}, runtime_format="pickle")
    with pytest.raises(ValueError, match="runtime_format"):
        await ChecksBackend().predict(req)


async def test_hybrid_finding_wins_without_calling_the_llm() -> None:
    llm = RecordingLLM(detection=False)
    verdict = await HybridBackend(llm).predict(request("print(x)", ["x"]))
    assert verdict.detection and verdict.source == "checks" and llm.calls == 0


async def test_hybrid_asks_the_llm_when_the_checks_are_silent() -> None:
    llm = RecordingLLM(detection=True)
    verdict = await HybridBackend(llm).predict(request("print(x)", []))
    assert verdict.detection and verdict.source == "llm" and verdict.reasoning == "the model says so"
    assert llm.calls == 1 and verdict.findings == []


def test_factory_builds_the_checks_backends() -> None:
    assert isinstance(make_backend("checks"), ChecksBackend)
    hybrid = make_backend("hybrid", llm_backend="litellm", model="openai/x", votes=3)
    assert isinstance(hybrid, HybridBackend) and hybrid.llm.name == "litellm"
