"""The replay backend: majority of recorded runs, keyed by case id."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from crane_jupyterlab.bench.replay import ReplayBackend, load_outputs
from crane_jupyterlab.llm.errors import LLMError
from crane_jupyterlab.models import PredictionRequest


def row(case: str, version: str, run: int, detection: bool, llm: str = "gpt-5", setting: str = "+RT") -> str:
    raw = json.dumps({"reasoning": f"run {run} says {detection}", "detection": detection})
    return json.dumps(
        {
            "id": case,
            "version": version,
            "llm": llm,
            "setting": setting,
            "run": run,
            "raw": raw,
            "detection": detection,
        }
    )


@pytest.fixture
def outputs(tmp_path: Path) -> Path:
    lines = [
        # Runs listed out of order on purpose: the reasoning shown is the first winning run's.
        row("a", "reproduced", 2, True),
        row("a", "reproduced", 1, False),
        row("a", "reproduced", 3, True),
        row("a", "reproduced", 4, False),
        row("a", "reproduced", 5, True),
        *(row("b", "fixed", r, False) for r in range(1, 6)),
        *(row("a", "reproduced", r, False, setting="-RT") for r in range(1, 6)),
        *(row("a", "reproduced", r, True, llm="gemini-2.5-flash") for r in range(1, 6)),
    ]
    path = tmp_path / "paper_outputs.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def req(case_id: str | None) -> PredictionRequest:
    return PredictionRequest(case_id=case_id, executed_cells=["x = 1"], target_cell="x + 1")


async def test_majority_of_recorded_runs(outputs: Path) -> None:
    verdict = await ReplayBackend(outputs, "gpt-5", "+RT").predict(req("a/reproduced"))
    assert verdict.detection is True
    assert verdict.votes == [False, True, True, False, True]  # in run order
    assert verdict.reasoning == "run 2 says True"
    assert verdict.model == "replay:gpt-5"
    assert verdict.prompt_tokens and verdict.prompt_tokens > 0


async def test_setting_and_llm_select_the_rows(outputs: Path) -> None:
    assert (await ReplayBackend(outputs, "gpt-5", "-RT").predict(req("a/reproduced"))).detection is False
    assert (
        await ReplayBackend(outputs, "gemini-2.5-flash", "+RT").predict(req("a/reproduced"))
    ).detection is True
    assert (await ReplayBackend(outputs, "gpt-5", "+RT").predict(req("b/fixed"))).detection is False


async def test_unknown_case_and_missing_id_are_bad_requests(outputs: Path) -> None:
    backend = ReplayBackend(outputs)
    for case_id in ("zzz/fixed", None):
        with pytest.raises(LLMError) as info:
            await backend.predict(req(case_id))
        assert info.value.kind == "bad_request"


def test_unknown_llm_lists_the_known_ones(outputs: Path) -> None:
    with pytest.raises(ValueError, match=r"no rows for llm 'gpt-4'.*gemini-2.5-flash, gpt-5"):
        load_outputs(outputs, "gpt-4", "+RT")


def test_bad_inputs(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="replay file not found"):
        load_outputs(tmp_path / "none.jsonl", "gpt-5", "+RT")
    with pytest.raises(ValueError, match="setting must be"):
        load_outputs(tmp_path / "none.jsonl", "gpt-5", "RT")
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"id": "a"}\n')
    with pytest.raises(ValueError, match=r"broken\.jsonl:1: not a paper output row"):
        load_outputs(broken, "gpt-5", "+RT")
