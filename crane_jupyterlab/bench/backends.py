"""The prediction backends `crane-bench` can measure, built by name.

`checks`, `trial` and `hybrid` apply the product's verdict policy (crane_jupyterlab.policy) to the
deterministic checks alone, to the trial run alone (a crash only when one was observed), or to everything
the server uses (an observed trial outcome, then the checks, then a model), so the benchmark measures
what the server ships; `replay` answers with the CRANE-LLM paper's recorded answers; `litellm` is the
product's model backend. The trial's outcome comes in the request (`PredictionRequest.trial`): the
caller runs the trial, since it needs the live kernel.
"""

from __future__ import annotations

import time
from typing import Any

from .. import policy
from ..checks import check_view, replica
from ..checks.view import RuntimeView, from_probe
from ..llm.base import Backend
from ..llm.factory import make_backend as make_model_backend
from ..models import Finding, PredictionRequest, Verdict
from .junobench_adapter import from_junobench
from .replay import ReplayBackend

BACKENDS = ("none", "checks", "trial", "litellm", "replay", "hybrid")
FORMATS = ("probe", "junobench")


def findings_of(request: PredictionRequest, replicas: bool = True) -> list[Finding]:
    """The checks' findings for a request whose runtime is a probe result or a JunoBench record: the
    rules, then (where they find nothing) the libraries' own judgement on replicas of the inputs."""
    if request.runtime_format not in FORMATS:
        raise ValueError(
            f"runtime_format must be one of {', '.join(FORMATS)}, not {request.runtime_format!r}"
        )
    if request.runtime_format == "junobench":
        view = from_junobench(request.runtime, request.target_cell, request.executed_cells)
    else:
        view = from_probe(request.runtime) if isinstance(request.runtime, dict) else RuntimeView()
    findings = check_view(request.target_cell, view)
    if findings or not replicas:
        return findings
    replica.warm_up(120)  # a benchmark waits for the process once; the server's judge abstains meanwhile
    return replica.judge(request.target_cell, view, request.executed_cells)


class ChecksBackend:
    """The verdict without a model: a certain crash, or "no certain crash found" (not a proof of safety)."""

    name = "checks"

    async def predict(self, request: PredictionRequest) -> Verdict:
        start = time.perf_counter()
        verdict = policy.without_model(findings_of(request))
        return verdict.model_copy(update={"latency_ms": round((time.perf_counter() - start) * 1000.0, 3)})


class TrialBackend:
    """The trial run alone: a crash when one was observed, no crash otherwise (a trial that was blocked,
    timed out or could not run counts as no detection; `crane-bench live` lists those cases)."""

    name = "trial"

    async def predict(self, request: PredictionRequest) -> Verdict:
        return policy.from_trial_alone(request.trial)


class HybridBackend:
    """An observed trial outcome, else the checks; the model decides whatever they cannot prove (the
    server's policy)."""

    name = "hybrid"

    def __init__(self, llm: Backend) -> None:
        self.llm = llm

    async def predict(self, request: PredictionRequest) -> Verdict:
        certain = policy.certain(findings_of(request), request.trial)
        if certain is not None:
            return certain
        return policy.from_model(await self.llm.predict(request))


def make_backend(name: str, **options: Any) -> Backend | None:
    """The backend called `name` (one of BACKENDS), configured by `options`; None for `none`.

    replay: path (paper_outputs.jsonl), llm (default gpt-5), setting (-RT or +RT, default +RT), and the
    prompt options of `llm.factory`. hybrid: `llm_backend` (litellm, the default, or replay) built from
    the other options. litellm: see `llm.factory.make_backend`.
    """
    options = {k: v for k, v in options.items() if v is not None}
    if name in ("checks", "trial"):
        if options:
            raise ValueError(f"the {name} backend takes no options, got {', '.join(sorted(options))}")
        return ChecksBackend() if name == "checks" else TrialBackend()
    if name == "replay":
        path = options.pop("path", None)
        if not path:
            raise ValueError("the replay backend needs path= the paper_outputs.jsonl file")
        llm, setting = options.pop("llm", "gpt-5"), options.pop("setting", "+RT")
        prompt = None
        if options:
            from ..llm.factory import prompt_settings

            prompt = prompt_settings(options)
        return ReplayBackend(path, llm, setting, prompt)
    if name == "hybrid":
        inner = options.pop("llm_backend", "litellm")
        if inner not in ("litellm", "replay"):
            raise ValueError(f"hybrid needs llm_backend litellm or replay, got {inner!r}")
        model = make_backend(inner, **options)
        assert model is not None
        return HybridBackend(model)
    if name in ("none", "litellm"):
        return make_model_backend(name, **options)
    raise ValueError(f"unknown backend {name!r}; choose one of {', '.join(BACKENDS)}")
