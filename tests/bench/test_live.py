"""`crane-bench live` end to end: real kernels, the real probe and renderer, a results file score.py reads."""

from __future__ import annotations

import fnmatch
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support import SHARED

from crane_jupyterlab.bench import cli

pytestmark = pytest.mark.integration  # real kernels or a real jupyter_server

LIVE = SHARED / "live"
KEYS = {"id", "version", "runtime_text", "extraction_ms", "prediction", "error", "trial"}


def needs_suite() -> None:
    if not (LIVE / "cases.jsonl").exists():
        pytest.skip(f"the live suite is absent ({LIVE}/cases.jsonl): it is shared data, not in the repo")


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def write_cases(path: Path, *cases: dict[str, Any]) -> Path:
    path.write_text("".join(json.dumps(c) + "\n" for c in cases))
    return path


def test_pandas_cases_end_to_end(tmp_path: Path) -> None:
    needs_suite()
    out = tmp_path / "results.jsonl"
    code = cli.main(["live", "--cases", str(LIVE / "cases.jsonl"), "--out", str(out), "--ids", "pandas_0*"])
    assert code == 0
    expected = {
        (c["id"], c["version"])
        for c in map(json.loads, (LIVE / "cases.jsonl").read_text().splitlines())
        if fnmatch.fnmatch(c["id"], "pandas_0*")
    }
    results = rows(out)
    assert {(r["id"], r["version"]) for r in results} == expected
    in_suite_order = [
        (c["id"], c["version"])
        for c in map(json.loads, (LIVE / "cases.jsonl").read_text().splitlines())
        if (c["id"], c["version"]) in expected
    ]
    assert [(r["id"], r["version"]) for r in results] == in_suite_order
    for r in results:
        assert set(r) == KEYS
        assert r["error"] is None and r["prediction"] is None
        assert isinstance(r["runtime_text"], str) and r["runtime_text"]
        assert isinstance(r["extraction_ms"], float) and r["extraction_ms"] > 0
    score = subprocess.run(
        [sys.executable, str(LIVE / "score.py"), str(LIVE / "cases.jsonl"), str(out), "--json", "--quiet"],
        capture_output=True,
        text=True,
        check=True,
    )
    summary = json.loads(score.stdout.strip().splitlines()[-1])
    assert summary["errors"] == 0
    assert summary["missing"] == summary["cases"] - len(expected)


def test_target_never_runs_and_failing_cell_is_recorded(tmp_path: Path) -> None:
    touched = tmp_path / "touched"
    cases = write_cases(
        tmp_path / "cases.jsonl",
        {
            "id": "own_01",
            "version": "buggy",
            "executed_cells": ["values = [1, 2, 3]", "mean = sum(values) / len(values)"],
            "target_cell": f"open({str(touched)!r}, 'w').write('ran')\nvalues[mean]",
        },
        {
            "id": "own_02",
            "version": "buggy",
            "executed_cells": ["ok = 1", "1 / 0", "never = 2"],
            "target_cell": "ok + never",
        },
    )
    out = tmp_path / "results.jsonl"
    assert cli.main(["live", "--cases", str(cases), "--out", str(out), "--jobs", "1"]) == 1
    by_id = {r["id"]: r for r in rows(out)}
    assert not touched.exists()
    good = by_id["own_01"]
    assert good["error"] is None and "values" in good["runtime_text"]
    bad = by_id["own_02"]
    assert bad["error"].startswith("executed cell 1: ZeroDivisionError")
    assert bad["runtime_text"] == "" and bad["extraction_ms"] is None


def test_out_may_not_overwrite_the_cases(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = write_cases(
        tmp_path / "cases.jsonl", {"id": "x", "version": "b", "executed_cells": [], "target_cell": "t"}
    )
    before = cases.read_text()
    assert cli.main(["live", "--cases", str(cases), "--out", str(cases)]) == 2
    assert "overwritten" in capsys.readouterr().err
    assert cases.read_text() == before


@pytest.mark.parametrize(
    ("content", "extra", "message"),
    [
        ('{"id": "x"}\n', [], "missing version, executed_cells, target_cell"),
        ("not json\n", [], ":1: not JSON"),
        ('{"id": "x", "version": "b", "executed_cells": "a", "target_cell": "t"}\n', [], "list of strings"),
        (
            '{"id": "x", "version": "b", "executed_cells": [], "target_cell": "t"}\n',
            ["--categories", "SX"],
            "SRV",
        ),
        (
            '{"id": "x", "version": "b", "executed_cells": [], "target_cell": "t"}\n',
            ["--ids", "nope*"],
            "no case",
        ),
    ],
)
def test_bad_input_is_refused_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, extra: list[str], message: str
) -> None:
    cases = tmp_path / "cases.jsonl"
    cases.write_text(content)
    out = tmp_path / "results.jsonl"
    assert cli.main(["live", "--cases", str(cases), "--out", str(out), *extra]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize("spelling", [["--setting=-RT"], ["--setting", "-RT"]])
def test_setting_minus_rt_parses(spelling: list[str]) -> None:
    args = cli.build_parser().parse_args(["live", "--cases", "c", "--out", "o", *spelling])
    assert "-RT" in (args.setting, "-RT" if args.minus_rt else None)
    assert args.backend == "none"


def test_checks_backend_fills_predictions(tmp_path: Path) -> None:
    cases = write_cases(
        tmp_path / "cases.jsonl",
        {
            "id": "own_03",
            "version": "buggy",
            "executed_cells": ["numbers = [1, 2, 3]"],
            "target_cell": "print(undefined_variable)",
        },
    )
    out = tmp_path / "results.jsonl"
    assert cli.main(["live", "--cases", str(cases), "--out", str(out), "--backend", "checks", "--docs"]) == 0
    (row,) = rows(out)
    assert set(row["prediction"]) == {"detection", "reasoning", "source"}
    assert row["prediction"]["detection"] is True


# --- crane-bench speed (structure only: timings are reported, never asserted) -----------------------


def test_speed_measures_a_small_scenario() -> None:
    import asyncio

    from crane_jupyterlab.bench import speed

    row = asyncio.run(
        speed.measure(speed.Scenario(setup="xs = list(range(10))", target="xs[3]", goal_ms=1e9), 3)
    )
    assert row["reps"] == 3 and row["entries"] >= 1
    for key in ("bare_ms", "extract_ms", "probe_ms", "ratio"):
        assert set(row[key]) == {"p50", "p95"} and row[key]["p50"] > 0
    assert "small" in speed.table({"small": row})


def test_speed_measures_a_trial_run() -> None:
    import asyncio

    from crane_jupyterlab.bench import speed
    from crane_jupyterlab.server.trial import platform_sandbox

    if not platform_sandbox().available:
        pytest.skip(f"no OS sandbox for trial runs here: {platform_sandbox().reason}")
    scenario = speed.Scenario(setup="xs = list(range(10))", target="xs[30]")
    row = asyncio.run(speed.measure_trial(scenario, 2, {"CRANE_SPEED_TEST": "1"}))
    assert row["outcomes"] == {"crashed": 2} and row["trial_still_running"] is True
    for key in ("blocked_ms", "fork_ms", "fork_cpu_ms", "start_round_trip_ms", "cell_alone_ms"):
        assert set(row[key]) == {"p50", "p95"} and row[key]["p50"] > 0
    assert row["fork_ms"]["p50"] <= row["blocked_ms"]["p50"]
    assert row["extra_memory_mb"]["p50"] > 0 and len(row["goals"]) == 2
    assert "kernel blocked by trial.start" in speed.trial_table({"small": row})


def test_speed_refuses_unknown_scenarios(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["speed", "--scenarios", "typical,huge"]) == 2
    assert "huge" in capsys.readouterr().err
    assert cli.main(["speed", "--env", "NOEQUALS"]) == 2


def test_litellm_backend_sees_runtime_only_with_plus_rt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the real litellm backend to a stub server (the network edge): the value below exists only
    at runtime, so only +RT prompts carry it."""
    from llm_stub import StubLLM, answer

    def rule(body: dict[str, Any]) -> Any:
        prompt = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        return answer("zebrara4921" in prompt, "read the runtime")

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    cases = write_cases(
        tmp_path / "cases.jsonl",
        {
            "id": "own_04",
            "version": "buggy",
            "executed_cells": ["marker = 'zeb' + 'ra' * 2 + str(4921)"],
            "target_cell": "int(marker)",
        },
    )
    detections = {}
    with StubLLM(rule) as stub:
        for setting in ("+RT", "-RT"):
            out = tmp_path / f"results{setting}.jsonl"
            argv = ["live", "--cases", str(cases), "--out", str(out), "--backend", "litellm"]
            argv += ["--model", "openai/stub", "--api-base", stub.url, f"--setting={setting}"]
            assert cli.main(argv) == 0
            (row,) = rows(out)
            assert "zebrara4921" in row["runtime_text"]  # extracted either way, for the score
            assert row["prediction"]["source"] == "llm"
            detections[setting] = row["prediction"]["detection"]
    assert detections == {"+RT": True, "-RT": False}


def test_the_trial_backend_observes_and_counts_outcomes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from crane_jupyterlab.server.trial import platform_sandbox

    if not platform_sandbox().available:
        pytest.skip(f"no OS sandbox for trial runs here: {platform_sandbox().reason}")
    target = tmp_path / "written.csv"
    base = {"library": "own", "executed_cells": ["import pandas as pd\ndf = pd.DataFrame({'a': [1, 2]})"]}
    cases = write_cases(
        tmp_path / "cases.jsonl",
        {**base, "id": "own_01", "version": "buggy", "target_cell": "x = df['b']", "crash": True},
        {**base, "id": "own_01", "version": "fixed", "target_cell": "x = df['a']", "crash": False},
        {
            **base,
            "id": "own_02",
            "version": "fixed",
            "target_cell": f"df.to_csv({str(target)!r})",
            "crash": False,
        },
        {
            **base,
            "id": "own_03",
            "version": "fixed",
            "target_cell": "import socket\nsocket.create_connection(('127.0.0.1', 9), 1)",
            "crash": False,
        },
    )
    out = tmp_path / "results.jsonl"
    assert cli.main(["live", "--cases", str(cases), "--out", str(out), "--backend", "trial"]) == 0
    found = {(r["id"], r["version"]): r for r in rows(out)}
    buggy, fixed = found["own_01", "buggy"], found["own_01", "fixed"]
    writes, spawn = found["own_02", "fixed"], found["own_03", "fixed"]
    assert buggy["trial"]["status"] == "crashed" and buggy["trial"]["exception"] == "KeyError"
    assert buggy["prediction"]["detection"] is True and buggy["prediction"]["source"] == "trial"
    assert fixed["trial"]["status"] == "finished" and fixed["prediction"]["detection"] is False
    # The write lands in the trial's private copy where the kernel allows one (overlay.py), else the
    # sandbox refuses it: either way the real file is untouched and nothing is claimed.
    if writes["trial"].get("writes"):
        assert writes["trial"]["status"] == "finished" and "private copy" in writes["trial"]["writes"]
    else:
        assert writes["trial"]["status"] == "blocked"
    assert writes["prediction"]["detection"] is False
    assert not target.exists()
    assert spawn["trial"]["status"] == "blocked" and spawn["prediction"]["detection"] is False
    report = capsys.readouterr().err
    private = writes["trial"]["status"] == "finished"
    counted = "crashed 1, finished 2, blocked 1" if private else "crashed 1, finished 1, blocked 2"
    assert f"trial outcomes: {counted}" in report
    assert "own_03/fixed (crash: False): blocked: " in report


def test_quick_trials_are_counted_apart(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from crane_jupyterlab.server.trial import platform_sandbox

    if not platform_sandbox().available:
        pytest.skip(f"no OS sandbox for trial runs here: {platform_sandbox().reason}")
    base = {
        "library": "own",
        "executed_cells": ["import time\nimport pandas as pd\ndf = pd.DataFrame({'a': [1]})"],
    }
    loop = "for epoch in range(100):\n    time.sleep(0.1)\n"  # 10 s whole
    cases = write_cases(
        tmp_path / "cases.jsonl",
        {**base, "id": "long_01", "version": "buggy", "target_cell": loop + "df['b']", "crash": True},
        {**base, "id": "long_01", "version": "fixed", "target_cell": loop + "df['a']", "crash": False},
    )
    out = tmp_path / "results.jsonl"
    assert cli.main(["live", "--cases", str(cases), "--out", str(out), "--backend", "trial"]) == 0
    found = {(r["id"], r["version"]): r for r in rows(out)}
    buggy, fixed = found["long_01", "buggy"], found["long_01", "fixed"]
    assert buggy["trial"]["quick"]["crash"] == "certain" and buggy["prediction"]["source"] == "quick"
    # cut after its first iterations: 2, or 3 where those 2 took less than the 0.25 s a loop runs first
    assert buggy["trial"]["quick"]["loops"][0]["iterations"] in (2, 3) and buggy["trial_ms"] < 5000
    # A shortened run that finished is no "no crash" observed: the trial alone says it did not conclude.
    assert fixed["trial"]["status"] == "finished" and fixed["prediction"]["detection"] is False
    assert fixed["prediction"]["source"] == "trial"
    assert "first iterations ran without an error" in fixed["prediction"]["reasoning"]
    report = capsys.readouterr().err
    assert "quick trials (a loop cut short): 2" in report
    assert "crashed (certain): 1 on crashing cases, 0 on fixed cases" in report
    assert "finished: 0 on crashing cases, 1 on fixed cases" in report
