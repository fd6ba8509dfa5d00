"""`crane-bench junobench --categories`: S/R/V ablations where they apply, and a clear refusal where not."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from llm_stub import StubLLM, answer
from support import SHARED

from crane_jupyterlab.bench.cli import main

JUNOBENCH = SHARED / "junobench"
CASES = JUNOBENCH / "cases.jsonl"
needs_data = pytest.mark.skipif(
    not CASES.is_file() or not (JUNOBENCH / "paper_outputs.jsonl").is_file(),
    reason=f"JunoBench data not found at {JUNOBENCH} (shared/ is not in the repository)",
)


def junobench(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["junobench", "--cases", str(CASES), "--quiet", *args])
    out, err = capsys.readouterr()
    return code, out + err


@needs_data
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--backend", "replay", "--categories", "SR"], "replay cannot run a category ablation"),
        (["--backend", "hybrid", "--categories", "V"], "replay cannot run a category ablation"),
        (["--backend", "checks", "--setting=-RT", "--categories", "S"], "needs --setting +RT"),
        (["--backend", "checks", "--categories", "SX"], "subset of S, R, V"),
    ],
)
def test_refusals_say_why(capsys: pytest.CaptureFixture[str], args: list[str], message: str) -> None:
    code, output = junobench(capsys, *args)
    assert code == 2 and message in output


@needs_data
def test_replay_still_runs_with_all_categories(capsys: pytest.CaptureFixture[str]) -> None:
    code, output = junobench(capsys, "--backend", "replay", "--categories", "VRS", "--limit", "4")
    assert code == 0, output
    assert "runtime facts shown (SRV)" in output


@needs_data
def test_checks_ablation_counts_the_facts_it_shows(capsys: pytest.CaptureFixture[str]) -> None:
    code, full = junobench(capsys, "--backend", "checks", "--limit", "30")
    assert code == 0, full
    counts = re.search(
        r"runtime facts shown \(SRV\): S (\d+) of (\d+), R (\d+) of (\d+), V (\d+) of (\d+)", full
    )
    assert counts is not None, full
    s, s_all, r, r_all, v, v_all = map(int, counts.groups())
    assert (s, r, v) == (s_all, r_all, v_all) and min(s, r, v) > 0
    code, ablated = junobench(capsys, "--backend", "checks", "--limit", "30", "--categories", "SR")
    assert code == 0, ablated
    assert f"runtime facts shown (SR): S {s} of {s}, R {r} of {r}, V 0 of {v_all} (30 cases)" in ablated


@needs_data
def test_the_prompt_shows_only_the_chosen_categories(capsys: pytest.CaptureFixture[str]) -> None:
    def user_messages(categories: list[str]) -> list[str]:
        with StubLLM(answer(False)) as stub:
            args = ["--backend", "litellm", "--model", "openai/stub", "--api-base", stub.url, "--limit", "6"]
            code, output = junobench(
                capsys, *args, "--concurrency", "1", "--response-format", "none", *categories
            )
            assert code == 0, output
            return [r["body"]["messages"][1]["content"] for r in stub.requests]

    cases: list[dict[str, Any]] = [
        json.loads(line) for line in CASES.read_text(encoding="utf-8").splitlines()[:6]
    ]
    full = user_messages([])
    assert any(case["runtime_info"] in " ".join(full) for case in cases if case["runtime_info"] != "{}")
    structure = user_messages(["--categories", "S"])
    with_runtime = [m for m in structure if "Runtime information" in m]
    assert with_runtime and all("Runtime information (structure) just before" in m for m in with_runtime)
    assert not any("'has_nan'" in m or "'dtype'" in m or "'type'" in m for m in structure)
    assert any("'has_nan'" in m for m in full)
