"""`crane-bench chain` end to end: a notebook written here, an edit of its first cell, the chain of the
server's own service against the edited notebook's real run in a real kernel, and the scoring."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from crane_jupyterlab.bench import chain_score, cli
from crane_jupyterlab.server.trial import platform_sandbox

# Real kernels, and trials in the OS sandbox; the scoring's own test needs neither.
real_kernels = pytest.mark.integration
sandboxed = pytest.mark.skipif(not platform_sandbox().available, reason="no OS sandbox for trial runs here")

CELLS = [
    "import pandas as pd\ndf = pd.DataFrame({'age': [22, 38], 'fare': [7.25, 71.3]})",  # [1] edited
    "df['fare_eur'] = df['fare'] * 1.1",  # [2]
    "mean_age = df['age'].mean()",  # [3] KeyError once 'age' is renamed
    "print(mean_age)",  # [4]
    "df['height'].mean()",  # [5] KeyError with or without any edit
]
CASES = [
    # A renamed column breaks cell 3: the chain sees it there, and the real run confirms it.
    {"id": "renamed", "split": "dev", "library": "pandas", "guess": "breaks", "cell": 1,
     "edit": {"old": "{'age'", "new": "{'Age'"}},
    # A changed factor breaks nothing: the first real crash below is cell 5's own.
    {"id": "factor", "split": "dev", "library": "pandas", "guess": "runs", "cell": 2,
     "edit": {"old": "1.1", "new": "1.2"}},
    {"id": "other", "split": "unseen", "library": "pandas", "cell": 2, "edit": {"old": "1.1", "new": "2"}},
]  # fmt: skip


def write_case_files(tmp_path: Path) -> tuple[Path, Path]:
    corpus = tmp_path / "corpus"
    (corpus / "nb").mkdir(parents=True)
    cells: list[dict[str, Any]] = [{"cell_type": "markdown", "metadata": {}, "source": ["# Fares"]}]
    for source in CELLS:
        cells.append(
            {"cell_type": "code", "metadata": {}, "source": source, "outputs": [], "execution_count": None}
        )
    notebook = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells}
    (corpus / "nb" / "fares.ipynb").write_text(json.dumps(notebook))
    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(json.dumps({**c, "notebook": "nb/fares.ipynb"}) + "\n" for c in CASES))
    return corpus, cases


@real_kernels
@sandboxed
def test_a_renamed_column_is_found_and_scored(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus, cases = write_case_files(tmp_path)
    out, figures = tmp_path / "rows.jsonl", tmp_path / "summary.json"
    argv = ["chain", str(cases), "--corpus", str(corpus), "--split", "dev", "--timeout", "30"]
    assert cli.main([*argv, "--out", str(out), "--summary-json", str(figures)]) == 0
    rows = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert set(rows) == {"renamed", "factor"}  # the split chose

    renamed = rows["renamed"]
    assert renamed["above"] == {"cells": 0, "errors": [], "ms": renamed["above"]["ms"]}
    assert renamed["analysis"]["trial"]["status"] == "finished"
    assert [(e["index"], e["status"]) for e in renamed["chain"]] == [
        (2, "finished"), (3, "crashed"), (4, "not_reached"), (5, "not_reached")
    ]  # fmt: skip
    # (its without_edit is not asserted: alone on this kernel, where `df` was never bound, the cell raises a
    # NameError, which says nothing of the cell without the edit)
    assert renamed["chain"][1]["exception"] == "KeyError"
    assert [(r["index"], r["status"], r.get("exception")) for r in renamed["truth"]["below"]] == [
        (2, "ok", None), (3, "error", "KeyError")
    ]  # fmt: skip
    s = renamed["score"]
    assert s["real_break"] == {"index": 3, "exception": "KeyError", "pre_existing": False}
    assert s["found"] is True and s["claims"] == [
        {"index": 3, "exception": "KeyError", "verdict": "confirmed"}
    ]
    assert s["passed_over"] == [] and s["statuses"] == {"finished": 1, "crashed": 1, "not_reached": 2}

    factor = rows["factor"]["score"]
    # The baseline raised the same KeyError in cell 5: not the edit's. The chain does not say so: the kernel
    # ran none of the cells between the edit and cell 5, so the cell alone stands for nothing (no answer).
    assert factor["real_break"] == {"index": 5, "exception": "KeyError", "pre_existing": True}
    assert factor["found"] is True and factor["without_edit_at_break"] is None
    assert factor["claims"] == [{"index": 5, "exception": "KeyError", "verdict": "confirmed"}]

    summary = json.loads(figures.read_text())
    assert summary["real_breaks"] == {"edit": 1, "pre_existing": 1, "unknown": 0, "all": 2}
    assert summary["found"] == {"found": 2, "of": 2, "pct": 100.0}
    assert summary["claims"]["contradicted"] == 0 and summary["claims"]["confirmed"] == 2
    assert summary["below_ms"]["n"] == 2 and summary["below_ms"]["p50"] > 0
    printed = capsys.readouterr().out
    assert "found by the chain (same cell, same exception): 2/2 (100.0 %)" in printed
    # The file is summarised again without running anything.
    assert cli.main(["chain", "--summarize", str(out)]) == 0
    assert capsys.readouterr().out == printed


def test_a_claim_the_real_run_contradicts_is_counted() -> None:
    chain = [
        {"index": 2, "status": "crashed", "exception": "KeyError", "after_cut": False},
        {"index": 3, "status": "not_reached"},
    ]
    truth = {
        "edited": {"status": "ok"},
        "below": [{"index": 2, "status": "ok"}, {"index": 3, "status": "ok"}],
    }
    s = chain_score.score({"id": "x", "chain": chain, "truth": truth, "baseline": None})
    assert s["real_break"] is None and s["found"] is None and s["end"] == "end"
    assert s["claims"] == [{"index": 2, "exception": "KeyError", "verdict": "contradicted"}]
    summary = chain_score.summarize([{"id": "x", "chain": chain, "truth": truth, "score": s}])
    assert summary["claims"]["contradicted"] == 1
    assert summary["claims"]["list"] == [{"id": "x", "cell": 2, "chain": "KeyError", "real": "ok"}]


@real_kernels
def test_a_case_that_does_not_fit_its_notebook_is_refused(tmp_path: Path) -> None:
    corpus, cases = write_case_files(tmp_path)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        json.dumps({**CASES[0], "notebook": "nb/fares.ipynb", "edit": {"old": "nope", "new": "x"}})
    )
    out = tmp_path / "rows.jsonl"
    assert cli.main(["chain", str(bad), "--corpus", str(corpus), "--out", str(out), "--no-baseline"]) == 0
    (row,) = map(json.loads, out.read_text().splitlines())
    assert "occurs 0 times" in row["error"] and row["score"] == {"valid": False}
    assert cli.main(["chain", str(cases), "--corpus", str(tmp_path / "missing")]) == 2
