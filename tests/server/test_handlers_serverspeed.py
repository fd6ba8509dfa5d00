"""`crane-bench serverspeed` is registered and computes the overhead as documented (the full run needs a
server, a kernel with torch and minutes: it is a benchmark, run by hand)."""

from __future__ import annotations

import argparse

import pytest

from crane_jupyterlab.bench import serverspeed
from crane_jupyterlab.bench.cli import build_parser

pytestmark = pytest.mark.integration  # real kernels or a real jupyter_server


def test_registered_with_its_options() -> None:
    args = build_parser().parse_args(["serverspeed", "--requests", "5", "--model", "openai/x"])
    assert args.func is serverspeed.main and args.requests == 5 and args.model == "openai/x"


def test_overhead_is_what_remains_beside_kernel_and_model() -> None:
    reply = {"status": "ok", "timing": {"extraction_ms": 70.0, "llm_ms": 40.0, "total_ms": 125.0}}
    row = serverspeed._row(150.0, reply)
    assert row["overhead_ms"] == 40.0 and row["service_overhead_ms"] == 15.0
    rows = [{**row, "baseline_ms": 10.0}, {**serverspeed._row(250.0, reply), "baseline_ms": 12.0}]
    args = argparse.Namespace(scenario="typical", model="")
    report = serverspeed._summary(args, rows)
    assert report["overhead_ms"]["p50"] == 90.0 and report["met"] is False
    assert "server overhead" in serverspeed.table(report)


def test_bad_counts_are_refused() -> None:
    args = build_parser().parse_args(["serverspeed", "--requests", "0"])
    assert serverspeed.main(args) == 2
