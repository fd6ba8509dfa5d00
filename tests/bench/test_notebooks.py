"""`crane-bench notebooks` end to end: a notebook written here, run in a real kernel, analysed by the
server's own service, and the summary's counts against what each cell really did."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from crane_jupyterlab.bench import cli
from crane_jupyterlab.bench.notebooks import bound_names
from crane_jupyterlab.server.trial import platform_sandbox

pytestmark = pytest.mark.integration  # real kernels

# (source, what really happens). The data file is read relative to the notebook's folder, which is the
# kernel's working directory.
CELLS = [
    ("import pandas as pd\ndf = pd.read_csv('data.csv')", "ok"),
    ("total = df['b'].sum()", "crash"),  # KeyError, certain from the columns
    ("total = df['a'].sum()", "ok"),  # the fixed cell
    ("import numpy as np\nscale = np.ones(2)\nmean = df['nope'].mean()", "crash"),
    ("print(mean)", "cascade"),  # the failed cell should have bound it
    ("print(scale)", "ok"),  # bound before the failure: no cascade
    ("print(never_bound)", "crash"),  # a NameError of its own
    ("other = pd.read_csv('missing.csv')", "missing_file"),
    ("import time\ntime.sleep(60)", "timeout"),
    ("after = total + 1", "ok"),  # the notebook goes on after an interrupted cell
    ("x = (1 +", "crash"),  # a syntax error
]


def write_notebook(folder: Path) -> Path:
    (folder / "data.csv").write_text("a\n1\n2\n3\n")
    cells: list[dict[str, Any]] = [{"cell_type": "markdown", "metadata": {}, "source": ["# A notebook"]}]
    for source, _ in CELLS:
        cells.append(
            {"cell_type": "code", "metadata": {}, "source": source, "outputs": [], "execution_count": None}
        )
    cells.append(
        {"cell_type": "code", "metadata": {}, "source": "   \n", "outputs": [], "execution_count": None}
    )
    path = folder / "audit.ipynb"
    path.write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells}))
    return path


def run(tmp_path: Path, trial: str) -> tuple[list[dict[str, Any]], dict[str, Any], str]:
    folder = tmp_path / "nb"
    folder.mkdir()
    notebook = write_notebook(folder)
    out, figures = tmp_path / "cells.jsonl", tmp_path / "summary.json"
    argv = ["notebooks", str(tmp_path), "--trial", trial, "--timeout", "3", "--out", str(out)]
    assert cli.main([*argv, "--summary-json", str(figures)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert {r["notebook"] for r in rows} == {str(notebook.resolve())}
    return rows, json.loads(figures.read_text()), out.read_text()


def test_checks_only_summary_matches_what_ran(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows, figures, _ = run(tmp_path, "off")
    # Markdown and blank cells are not code to run; indices are positions in the notebook.
    assert [r["index"] for r in rows] == list(range(1, len(CELLS) + 1))
    assert [r["outcome"] for r in rows] == [outcome for _, outcome in CELLS]
    by_index = {r["index"]: r for r in rows}
    key_error = by_index[2]
    assert key_error["run"] == {
        "status": "error",
        "exception": "KeyError",
        "message": "'b'",
        "line": 1,
        "raised_in": "cell",
    }
    assert by_index[4]["run"]["line"] == 3
    assert by_index[8]["run"]["exception"] == "FileNotFoundError"
    assert by_index[9]["run"]["status"] == "timeout"
    assert all(r["trial"] is None for r in rows)
    assert all(r["timing"]["analyze_ms"] > 0 and r["timing"]["run_ms"] > 0 for r in rows)
    # The checks vouch for both missing columns and the syntax error, and for nothing that ran.
    for index in (2, 4):
        assert by_index[index]["warning"] == "certain" and by_index[index]["verdict"]["source"] == "checks"
    assert by_index[11]["verdict"]["source"] == "syntax"
    assert not any(r["warning"] for r in rows if r["outcome"] == "ok")

    assert figures["outcomes"] == {"ok": 4, "crash": 4, "cascade": 1, "missing_file": 1, "timeout": 1}
    warnings = figures["warnings"]
    assert warnings["on_ok"] == 0 and warnings["precision_pct"] == 100.0
    assert warnings["on_crash"] == sum(1 for r in rows if r["outcome"] == "crash" and r["warning"])
    crash = figures["recall"]["crash"]
    assert crash["of"] == 4 and crash["found"] >= 3  # never_bound: the names rule may or may not say
    assert figures["recall"]["crash_non_name_error"] == {"found": 3, "of": 3, "pct": 100.0}
    assert figures["false_warnings"] == []
    assert len(figures["missed_crashes"]) == 4 - crash["found"]
    assert figures["trial"]["outcomes"] == {}
    assert figures["analyze_ms"]["all"]["n"] == len(CELLS)
    printed = capsys.readouterr().out
    assert "real outcomes: ok 4, crash 4, cascade 1, missing_file 1, timeout 1" in printed
    assert "false warnings (0):" in printed


def test_trials_observe_and_summarize_again(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows, figures, written = run(tmp_path, "auto")
    by_index = {r["index"]: r for r in rows}
    assert by_index[2]["trial"]["status"] == "crashed" and by_index[2]["trial"]["exception"] == "KeyError"
    assert by_index[3]["trial"]["status"] == "finished" and by_index[3]["warning"] is None
    # A syntax error is certain without a trial.
    assert by_index[11]["trial"] is None and by_index[11]["verdict"]["source"] == "syntax"
    versus = figures["trial"]["versus_real_run"]
    assert "crashed / ran" not in versus  # an observed crash is a real one
    assert versus.get("crashed / crashed", 0) >= 4  # both KeyErrors, the cascade, never_bound
    assert figures["warnings"]["on_ok"] == 0
    capsys.readouterr()
    # --summarize prints the same figures from the results file, running nothing.
    again = tmp_path / "again.json"
    results = tmp_path / "cells.jsonl"
    assert cli.main(["notebooks", "--summarize", str(results), "--summary-json", str(again)]) == 0
    assert json.loads(again.read_text()) == figures
    assert results.read_text() == written


def test_bad_paths_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "notes.txt").write_text("x")
    assert cli.main(["notebooks", str(tmp_path / "notes.txt")]) == 2
    assert "not an .ipynb file or a folder" in capsys.readouterr().err
    assert cli.main(["notebooks", str(tmp_path)]) == 2
    assert "no notebook found" in capsys.readouterr().err
    (tmp_path / "a.ipynb").write_text("{}")
    assert cli.main(["notebooks", str(tmp_path), "--env", "NOEQUALS"]) == 2
    assert "KEY=VALUE" in capsys.readouterr().err


def test_bound_names_are_the_notebook_namespace_ones() -> None:
    source = (
        "import numpy as np, os.path\nfrom x import y as z\na, (b, c) = 1, (2, 3)\nfor i in r: pass\n"
        "def f(local=1):\n    inner = 2\nclass K: attr = 1\nsquares = [k for k in r]\nwith o as w: pass\n"
        "%matplotlib inline"
    )
    assert bound_names(source) == {"np", "os", "z", "a", "b", "c", "i", "f", "K", "squares", "w"}


# --fixes: (source, outcome). The state a fix's trial sees is the kernel's before the cell ran; the real
# run of a crashed cell keeps its side effects (the append), so the fixed cell run after it can fail.
FIX_CELLS = [
    ("import pandas as pd\ndf = pd.DataFrame({'Age': [22.0, 38.0], 'Fare': [7.25, 71.3]})\nitems = []", "ok"),
    ("mean_age = df['Agee'].mean()", "crash"),  # KeyError on a close column: fixed, the fix runs
    ("print(mean_age)", "ok"),  # bound by the fixed run: no cascade
    ("items.append(1)\nassert len(items) == 1\nfare = df['Faer'].sum()", "crash"),  # fixed run: Assertion
    ("print(fare)", "cascade"),  # the fixed run failed too
    ("total = df['Qwxyz'].sum()", "crash"),  # no close column: no fix
]


@pytest.mark.skipif(not platform_sandbox().available, reason="no OS sandbox for trial runs here")
def test_fixes_are_run_in_place_of_the_crashed_cell(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cells = [
        {"cell_type": "code", "metadata": {}, "source": s, "outputs": [], "execution_count": None}
        for s, _ in FIX_CELLS
    ]
    (tmp_path / "fix.ipynb").write_text(
        json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells})
    )
    out, figures_path = tmp_path / "cells.jsonl", tmp_path / "summary.json"
    argv = ["notebooks", str(tmp_path), "--trial", "auto", "--fixes", "--timeout", "20", "--out", str(out)]
    assert cli.main([*argv, "--summary-json", str(figures_path)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["outcome"] for r in rows] == [outcome for _, outcome in FIX_CELLS]
    fixed = rows[1]
    assert fixed["fix"]["title"] == "df['Agee'] → df['Age']" and fixed["fix"]["origin"] == "close-name"
    assert fixed["fix"]["source"] == "mean_age = df['Age'].mean()" and fixed["fix"]["trial_ms"] > 0
    assert fixed["timing"]["fix_ms"] >= fixed["fix"]["trial_ms"]
    assert fixed["fix_run"]["status"] == "ok"
    assert rows[3]["fix"]["source"].endswith("fare = df['Fare'].sum()")
    assert rows[3]["fix_run"]["status"] == "error" and rows[3]["fix_run"]["exception"] == "AssertionError"
    assert rows[5]["fix"] is None and rows[5]["fix_run"] is None and rows[5]["timing"]["fix_ms"] == 0
    assert all(r["fix"] is None and r["fix_run"] is None for r in (rows[0], rows[2]))

    f = json.loads(figures_path.read_text())["fixes"]
    assert f["on_crash"] == {"offered": 2, "of": 3, "pct": 66.7}
    assert (f["fixed_runs"], f["fixed_ok"], f["precision_pct"]) == (2, 1, 50.0)
    assert f["on_not_crashed"] == 0 and f["fix_ms"]["n"] == 2
    assert [b["where"].rsplit("#")[1] for b in f["crash_without_fix"]] == ["5"]
    printed = capsys.readouterr().out
    assert "fix precision: 50.0 % (1 of 2 fixed runs succeeded)" in printed


def test_without_the_flag_no_fix_is_tried(tmp_path: Path) -> None:
    cells = [
        {"cell_type": "code", "metadata": {}, "source": s, "outputs": [], "execution_count": None}
        for s, _ in FIX_CELLS[:3]
    ]
    (tmp_path / "fix.ipynb").write_text(
        json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells})
    )
    out = tmp_path / "cells.jsonl"
    assert (
        cli.main(["notebooks", str(tmp_path), "--trial", "auto", "--timeout", "20", "--out", str(out)]) == 0
    )
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["outcome"] for r in rows] == ["ok", "crash", "cascade"]  # nothing ran in the crash's place
    assert all(r["fix"] is None and r["fix_run"] is None and r["timing"]["fix_ms"] == 0 for r in rows)
    assert cli.main(["notebooks", str(tmp_path), "--trial", "off", "--fixes"]) == 2
