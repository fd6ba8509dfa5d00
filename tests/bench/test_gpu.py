"""The GPU crash suite's format and its runner (`python -m crane_jupyterlab.bench.gpu`), on the CPU: the
pairs marked `cpu_check` run for real with "cuda" read as "cpu"; the rest needs scripts/gpu-check."""

from __future__ import annotations

import importlib.util
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from support import SHARED

from crane_jupyterlab.bench import gpu

CASES = Path(__file__).resolve().parents[2] / "suites" / "gpu" / "cases.jsonl"
LIVE_KEYS = {"id", "version", "library", "root_cause", "data_dependent", "executed_cells", "target_cell",
             "crash", "exception", "message", "diagnosis", "decisive_facts"}  # fmt: skip


def cases() -> list[dict[str, Any]]:
    return [json.loads(line) for line in CASES.read_text().splitlines() if line.strip()]


def test_the_suite_has_at_least_15_complete_pairs() -> None:
    rows = cases()
    assert all(row.keys() >= LIVE_KEYS for row in rows)
    versions = Counter(row["id"] for row in rows)
    assert len(versions) >= 15 and set(versions.values()) == {2}
    by_id: dict[str, dict[str, dict[str, Any]]] = {}
    for row in rows:
        by_id.setdefault(row["id"], {})[row["version"]] = row
    for pair in by_id.values():
        buggy, fixed = pair["buggy"], pair["fixed"]
        assert buggy["crash"] and not fixed["crash"] and fixed["exception"] is None
        assert buggy["target_cell"] == fixed["target_cell"]  # only the kernel state differs
        assert len(buggy["executed_cells"]) == len(fixed["executed_cells"])
        assert buggy["cpu_check"] == fixed["cpu_check"]


def test_fact_coverage_is_the_live_suites_definition() -> None:
    score_py = SHARED / "live" / "score.py"
    if not score_py.exists():
        pytest.skip("the live suite's score.py is shared data, absent here")
    spec = importlib.util.spec_from_file_location("score", score_py)
    assert spec is not None and spec.loader is not None
    score = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(score)
    text = (
        "x: Tensor (4, 3) float16 cuda:0\n"
        "model: Sequential train mode, params float32 cuda:0; layers: 0 Linear(3→2)"
    )
    facts = [
        "x.device = cuda:0", "x.dtype = torch.float16", "x.dtype = torch.float32", "model.training = True",
        "model[0].weight.device = cuda:0", "y.device = cpu", "x.shape = (4, 3)", "x.shape = (4, 5)",
        "name = 'cuda'",
    ]  # fmt: skip
    for fact in facts:
        assert gpu.carried(text, fact) == score.covers(text, fact), fact


def test_the_cpu_pairs_run_end_to_end(tmp_path: Path) -> None:
    """One dtype pair through the runner: fresh interpreters, verified outcomes, checks, facts, timings."""
    assert gpu.main(["--device", "cpu", "--ids", "gpu_16", "--warm", "2", "--out", str(tmp_path)]) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert (summary["verified"], summary["TP"], summary["FP"], summary["TN"]) == (2, 1, 0, 1)
    assert summary["facts_carried"] == summary["facts"] == 4
    assert summary["spent_budget_structure"] == "4/4"
    rows = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert [r["prediction"]["detection"] for r in rows] == [True, False]
    assert all(r["extraction_ms"] > 0 and "price_net" in r["runtime_text"] for r in rows)
