"""`crane-check` (crane_jupyterlab/notebook_check.py): notebooks run from the top in a fresh sandboxed
interpreter, one line per cell, exit status 1 when one fails, 2 when one cannot be checked."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from crane_jupyterlab.notebook_check import main

pytestmark = pytest.mark.usefixtures("os_layer")


def notebook(path: Path, *sources: str) -> Path:
    cells = [{"cell_type": "markdown", "id": "m", "metadata": {}, "source": "# title"}]
    cells += [{"cell_type": "code", "id": f"c{i}", "metadata": {}, "outputs": [], "execution_count": None,
               "source": s.splitlines(keepends=True)} for i, s in enumerate(sources)]  # fmt: skip
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return path


def test_a_notebook_that_needs_hidden_state_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "data.csv").write_text("age\n22\n38\n")
    read = "import csv\nrows = list(csv.DictReader(open('data.csv')))"
    sources = (read, "%time n = len(rows)", "# only a comment", "print(clean_rows[0])", "print('never')")
    notebook(tmp_path / "a.ipynb", *sources)
    assert main([str(tmp_path / "a.ipynb")]) == 1
    out = capsys.readouterr().out
    assert "a.ipynb: fails" in out
    # numbered among the code cells (the markdown title is not one); the notebook's folder is the cwd
    assert "code cell 1 ran" in out and "code cell 2 ran" in out and "code cell 3 ran" in out
    assert "code cell 4 crashed at line 1: NameError: name 'clean_rows' is not defined" in out
    assert "code cell 5 not reached" in out


def test_notebooks_that_run_pass_and_a_bad_file_is_unchecked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    notebook(tmp_path / "ok.ipynb", "x = 1", "y = x + 1\nassert y == 2")
    assert main([str(tmp_path)]) == 0
    assert "1 notebooks: 1 ran from the top, 0 fail, 0 could not be checked" in capsys.readouterr().out
    (tmp_path / "bad.ipynb").write_text("not json")
    assert main([str(tmp_path / "bad.ipynb"), "--json"]) == 2
    assert json.loads(capsys.readouterr().out)["status"] == "unchecked"


def test_a_long_loop_is_cut_unless_full(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # 100 s whole: past the 20 s the run has (a loop that fits the budget would run whole)
    notebook(tmp_path / "long.ipynb", "import time\nfor i in range(1000):\n    time.sleep(0.1)")
    assert main([str(tmp_path / "long.ipynb"), "--cell-budget", "1", "--budget", "20"]) == 0
    out = capsys.readouterr().out
    assert "code cell 1 shortened" in out
    # what it measured of the loop: 1000 iterations of 0.1 s, whole about 100 s (a loaded machine's range)
    whole = re.search(r"whole, it takes ~(\d+) (s|min)", out)
    assert whole is not None and 60 <= int(whole.group(1)) * (60 if whole.group(2) == "min" else 1) <= 200, (
        out
    )
    assert re.search(r"a full run takes ~\S+ (s|min), peaking at ~[\d.]+ (MB|GB) of [\d.]+ GB", out), out


def test_a_crash_a_cut_may_have_caused_leaves_the_notebook_unchecked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the last cell reads what a 100 s loop built; the quick run cuts it and cannot claim the crash, and a
    # full run does not fit the 20 s: the notebook is not "ran", and the full run it needs is named
    long = "import time\nbuilt = []\nfor i in range(1000):\n    time.sleep(0.1)\n    built.append(i)"
    notebook(tmp_path / "hedge.ipynb", long, "built[999]")
    assert main([str(tmp_path / "hedge.ipynb"), "--cell-budget", "1", "--budget", "20"]) == 2
    out = capsys.readouterr().out
    assert "hedge.ipynb: unchecked" in out and "not claimed" in out, out
    assert re.search(r"a full run to code cell 2 takes about \d+ s, more than the budget leaves", out), out
