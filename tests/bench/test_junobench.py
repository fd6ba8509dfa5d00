"""`crane-bench junobench`: the paper's figures by replay, scoring, resume, and live backends on the stub."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from llm_stub import Reply, StubLLM, answer
from support import SHARED

from crane_jupyterlab.bench.cli import main
from crane_jupyterlab.bench.junocases import make_request
from crane_jupyterlab.bench.junoscore import Score, pct

JUNOBENCH = SHARED / "junobench"
needs_data = pytest.mark.skipif(
    not (JUNOBENCH / "cases.jsonl").is_file() or not (JUNOBENCH / "paper_outputs.jsonl").is_file(),
    reason=f"JunoBench data not found at {JUNOBENCH} (shared/junobench is not in the repository)",
)


def reference_rows() -> list[tuple[str, str, dict[str, float]]]:
    """The reference table of shared/junobench/README.md: (llm, setting, figures)."""
    readme = JUNOBENCH / "README.md"
    if not readme.is_file():
        return []
    rows = []
    for line in readme.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 10 and cells[1] in ("-RT", "+RT") and re.fullmatch(r"\d+", cells[2]):
            keys = ("tp", "fp", "fn", "tn", "precision", "recall", "f1", "accuracy")
            rows.append((cells[0], cells[1], {k: float(v) for k, v in zip(keys, cells[2:], strict=True)}))
    return rows


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, dict[str, Any]]:
    code = main(["junobench", *args])
    out, err = capsys.readouterr()
    last = out.strip().splitlines()[-1] if out.strip() else "{}"
    return code, out + err, json.loads(last) if last.startswith("{") else {}


@needs_data
def test_reference_table_is_six_rows() -> None:
    rows = reference_rows()
    assert len(rows) == 6
    assert {(llm, setting) for llm, setting, _ in rows} == {
        (llm, s) for llm in ("gemini-2.5-flash", "Qwen/Qwen2.5-32B-Instruct", "gpt-5") for s in ("-RT", "+RT")
    }


@needs_data
@pytest.mark.parametrize(("llm", "setting", "expected"), reference_rows() or [("-", "-", {})])
def test_replay_reproduces_the_paper_table(
    capsys: pytest.CaptureFixture[str], llm: str, setting: str, expected: dict[str, float]
) -> None:
    code, output, figures = run_cli(
        capsys,
        "--cases",
        str(JUNOBENCH / "cases.jsonl"),
        "--backend",
        "replay",
        "--replay",
        str(JUNOBENCH / "paper_outputs.jsonl"),
        "--llm",
        llm,
        f"--setting={setting}",
        "--json",
        "--quiet",
    )
    assert code == 0, output
    assert figures["n"] == 148 and figures["errors"] == 0
    assert {k: figures[k] for k in expected} == expected
    assert "Per group" in output and "Per root cause" in output and "NBspecific" in output


def test_pct_rounds_half_up() -> None:
    assert pct(1, 8) == 12.5
    assert pct(1, 3) == 33.3
    assert pct(2, 3) == 66.7
    assert pct(1, 16) == 6.3  # 6.25: half-up, where round() would give 6.2
    assert pct(0, 0) is None


def test_score_counts_crash_as_positive() -> None:
    score = Score()
    for crash, predicted in [(True, True), (True, False), (False, True), (False, False), (False, False)]:
        score.add(crash, predicted)
    assert score.figures() == {
        "n": 5,
        "tp": 1,
        "fp": 1,
        "fn": 1,
        "tn": 2,
        "precision": 50.0,
        "recall": 50.0,
        "f1": 50.0,
        "accuracy": 60.0,
    }


# ---------------------------------------------------------------- synthetic cases, live backends

CASES = [
    {
        "id": f"pandas_{i}",
        "version": version,
        "crash": version == "reproduced",
        "group": "pandas" if i < 2 else "numpy",
        "library": "pandas",
        "root_cause": "API misuse" if i % 2 else "data confusion",
        "executed_cells": ["import pandas as pd", f"df = load({i})"],
        "target_cell": f"df['col_{i}'].sum()",
        "runtime_info": f"RUNTIME-{i}-{version}: columns ['x']"
        if version == "reproduced"
        else f"RUNTIME-{i}-ok",
        "runtime_info_obj": {"df": {"type": "DataFrame"}},
    }
    for i in range(3)
    for version in ("reproduced", "fixed")
]


@pytest.fixture
def cases_file(tmp_path: Path) -> Path:
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in CASES), encoding="utf-8")
    return path


def crash_when_runtime_says_so(body: dict[str, Any]) -> Reply:
    """Stands for a model that reads the runtime block: crash iff it shows a reproduced case."""
    user = body["messages"][-1]["content"]
    return answer("-reproduced:" in user, "stub read the runtime block")


def test_make_request_per_setting() -> None:
    plus = make_request(CASES[0], "+RT")
    minus = make_request(CASES[0], "-RT")
    assert plus.case_id == "pandas_0/reproduced"
    assert plus.runtime_text == CASES[0]["runtime_info"]
    assert plus.runtime == CASES[0]["runtime_info_obj"] and plus.runtime_format == "junobench"
    assert minus.runtime_text is None and minus.runtime is None
    assert minus.executed_cells == CASES[0]["executed_cells"] and minus.target_cell == CASES[0]["target_cell"]


def test_litellm_backend_plus_rt_uses_the_runtime_block(
    capsys: pytest.CaptureFixture[str], cases_file: Path
) -> None:
    with StubLLM(crash_when_runtime_says_so) as stub:
        code, output, figures = run_cli(
            capsys, "--cases", str(cases_file), "--backend", "litellm", "--model", "openai/stub",
            "--api-base", stub.url, "--setting", "+RT", "--json", "--concurrency", "3",
        )  # fmt: skip
    assert code == 0, output
    assert figures == {
        "n": 6, "tp": 3, "fp": 0, "fn": 0, "tn": 3, "precision": 100.0, "recall": 100.0, "f1": 100.0,
        "accuracy": 100.0, "errors": 0,
    }  # fmt: skip
    assert len(stub.requests) == 6
    assert all("Runtime information" in r["body"]["messages"][-1]["content"] for r in stub.requests)
    assert "[6/6]" in output  # progress on stderr
    assert "mean prompt tokens: 100.0" in output  # the stub's usage


def test_minus_rt_sends_code_only(capsys: pytest.CaptureFixture[str], cases_file: Path) -> None:
    with StubLLM(crash_when_runtime_says_so) as stub:
        code, output, figures = run_cli(
            capsys, "--cases", str(cases_file), "--backend", "litellm", "--model", "openai/stub",
            "--api-base", stub.url, "--setting", "-RT", "--json", "--quiet",
        )  # fmt: skip
    assert code == 0, output
    assert (figures["tp"], figures["fn"], figures["tn"]) == (0, 3, 3)
    assert not any("RUNTIME-" in r["body"]["messages"][-1]["content"] for r in stub.requests)


def test_errors_reported_and_not_scored(capsys: pytest.CaptureFixture[str], cases_file: Path) -> None:
    with StubLLM(Reply(status=401)) as stub:
        code, output, figures = run_cli(
            capsys, "--cases", str(cases_file), "--backend", "litellm", "--model", "openai/stub",
            "--api-base", stub.url, "--json", "--quiet",
        )  # fmt: skip
    assert code == 1
    assert figures["n"] == 0 and figures["errors"] == 6 and figures["accuracy"] is None
    assert "errors (not scored): 6 (auth 6)" in output


def test_interrupted_run_resumes_from_out(
    capsys: pytest.CaptureFixture[str], cases_file: Path, tmp_path: Path
) -> None:
    out = tmp_path / "report.jsonl"
    common = ["--cases", str(cases_file), "--backend", "litellm", "--model", "openai/stub", "--out", str(out)]
    with StubLLM(crash_when_runtime_says_so, script=[Reply(status=500)]) as stub:
        # First run: two cases, one of which fails.
        run_cli(capsys, *common, "--api-base", stub.url, "--limit", "2", "--concurrency", "1", "--quiet")
        assert len(out.read_text().splitlines()) == 2
        code, output, figures = run_cli(capsys, *common, "--api-base", stub.url, "--json")
    assert code == 0, output
    assert "resuming: 1 of 6 cases already done" in output
    assert len(stub.requests) == 2 + 5  # the failed case is asked again, the done one is not
    assert figures["n"] == 6 and figures["accuracy"] == 100.0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 7 and all("config" in row for row in rows)


def test_resume_refuses_another_configuration(
    capsys: pytest.CaptureFixture[str], cases_file: Path, tmp_path: Path
) -> None:
    out = tmp_path / "report.jsonl"
    out.write_text(json.dumps({"case": "x/y", "config": {"setting": "-RT"}, "prediction": None}) + "\n")
    code, output, _ = run_cli(capsys, "--cases", str(cases_file), "--backend", "replay", "--out", str(out))
    assert code == 2
    assert "another configuration" in output
    assert len(out.read_text().splitlines()) == 1  # nothing lost


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--cases", "/nonexistent/cases.jsonl"], "JunoBench cases not found"),
        (["--backend", "none"], "makes no predictions"),
        (["--backend", "litellm"], "needs a model"),
        (["--backend", "litellm", "--model", "openai/x", "--votes", "2"], "odd"),
    ],
)
def test_clear_errors(
    capsys: pytest.CaptureFixture[str], cases_file: Path, args: list[str], message: str
) -> None:
    full = args if "--cases" in args else ["--cases", str(cases_file), *args]
    code, output, _ = run_cli(capsys, *full)
    assert code == 2
    assert message in output


def test_bad_case_line_named(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps(CASES[0]) + "\n" + '{"id": "x"}\n')
    code, output, _ = run_cli(capsys, "--cases", str(path))
    assert code == 2
    assert f"{path}:2: case lacks version" in output


def test_checks_backend(capsys: pytest.CaptureFixture[str], cases_file: Path) -> None:
    code, output, figures = run_cli(
        capsys, "--cases", str(cases_file), "--backend", "checks", "--json", "--quiet"
    )
    assert code == 0 and figures.get("n", 0) + figures.get("errors", 0) == 6, output


@needs_data
def test_hybrid_with_replayed_llm(capsys: pytest.CaptureFixture[str]) -> None:
    code, output, figures = run_cli(
        capsys, "--cases", str(JUNOBENCH / "cases.jsonl"), "--backend", "hybrid", "--llm", "gpt-5",
        "--setting", "+RT", "--json", "--quiet",
    )  # fmt: skip
    assert code == 0, output
    assert "backend hybrid (gpt-5)" in output
    assert figures["n"] == 148 and figures["errors"] == 0
