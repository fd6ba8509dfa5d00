"""crane-bench forecast: the scoring of a row, and one tiny case end to end in a real kernel."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from crane_jupyterlab.bench import cli
from crane_jupyterlab.bench import forecast as bench


def test_a_row_is_scored_on_time_memory_growth_and_out_of_memory() -> None:
    row = bench.score({
        "id": "x", "expect_oom": False,
        "forecast": {"seconds": 12.0, "seconds_low": 9.0, "seconds_high": 15.0, "peak_memory_mb": 700.0,
                     "out_of_memory": False},
        "real": {"status": "ok", "seconds": 10.0, "rss_before_mb": 200.0, "peak_mb": 600.0},
    })  # fmt: skip
    assert row["time_error"] == pytest.approx(0.2) and row["in_range"]
    assert row["forecast_growth_mb"] == 500.0 and row["real_growth_mb"] == 400.0
    assert row["memory_error"] == pytest.approx(0.25) and row["oom_ok"]
    real = {"status": "ok", "seconds": 1.0, "rss_before_mb": 200.0, "peak_mb": 220.0}
    small = bench.score({"id": "y", "forecast": {"seconds": 1.0, "peak_memory_mb": 210.0}, "real": real})
    assert "memory_error" not in small and small["time_error"] == 0.0
    oom = bench.score({"id": "z", "expect_oom": True, "forecast": {"out_of_memory": True}, "real": None})
    summary = bench.summarize([row, small, oom])
    assert summary["oom_said_where_expected"] == "1/1" and summary["oom_said_where_not"] == []
    assert summary["time_error_p50"] == pytest.approx(0.0 + 0.2 / 2) and summary["memory_scored"] == 1


@pytest.mark.integration  # a real kernel
def test_one_tiny_case_end_to_end(tmp_path: Path) -> None:
    # 20 iterations of 50 ms keeping 1 MB each: about 1 s for real; a 0.3 s budget cuts it after 2
    cell = "keep = []\nfor i in range(20):\n    keep.append(bytearray(1 << 20))\n    time.sleep(0.05)"
    case = {"id": "tiny", "split": "dev", "setup": "import time", "note": "tiny", "cell": cell}
    suite, out = tmp_path / "cases.jsonl", tmp_path / "rows.jsonl"
    suite.write_text(json.dumps(case) + "\n")
    code = cli.main(
        ["forecast", "--suite", str(suite), "--out", str(out), "--budget", "0.3", "--only", "tiny"]
    )
    assert code == 0
    (row,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert row["id"] == "tiny" and row["trial"]["cut"], row
    ahead, real = row["forecast"], row["real"]
    assert ahead["basis"] == "projected" and ahead["seconds_low"] <= ahead["seconds"], row
    assert real["status"] == "ok" and 0.9 < real["seconds"] < 10, row
    assert real["peak_mb"] >= real["rss_before_mb"] > 0, row
    assert 0 <= row["time_error"] < 1.0 and isinstance(row["in_range"], bool), row
    assert row["forecast_growth_mb"] > 0 and "real_growth_mb" in row and not row["said_oom"], row
