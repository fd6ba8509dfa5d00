"""The summary's figures of verified fixes (`crane-bench notebooks --fixes`), on rows written here: no
kernel runs."""

from __future__ import annotations

import json
from typing import Any

import pytest

from crane_jupyterlab.bench import notebook_summary as summary


def row(index: int, outcome: str, **extra: Any) -> dict[str, Any]:
    status = {"ok": "ok", "timeout": "timeout"}.get(outcome, "error")
    run: dict[str, Any] = {"status": status}
    if status == "error":
        run.update(exception="NameError" if outcome == "cascade" else "KeyError", message="'x'", line=1)
    base: dict[str, Any] = {
        "notebook": "nb.ipynb",
        "index": index,
        "source": f"cell_{index} = 1",
        "framework": "pandas",
        "warning": "certain" if status == "error" else None,
        "verdict": None,
        "trial": None,
        "fix": None,
        "fix_run": None,
        "timing": {"analyze_ms": 10.0 * index, "fix_ms": 0.0},
        "run": run,
        "outcome": outcome,
    }
    base.update(extra)
    return base


def fix(title: str, origin: str = "close-name") -> dict[str, Any]:
    return {"title": title, "origin": origin, "tried": "tried", "trial_ms": 5.0, "source": "fixed = 1"}


def tried(ms: float, analyze_ms: float) -> dict[str, float]:
    return {"analyze_ms": analyze_ms, "fix_ms": ms}


ROWS = [
    row(1, "ok"),
    # real crashes: two fixed (one fixed run succeeds, one fails), one whose candidates all failed their
    # trials, one with no candidate at all
    row(2, "crash", fix=fix("a → b"), fix_run={"status": "ok"}, timing=tried(100.0, 300.0)),
    row(
        3,
        "crash",
        fix=fix("add `import numpy as np`", "import"),
        fix_run={"status": "error", "exception": "ValueError", "message": "bad\nmore"},
        timing=tried(200.0, 400.0),
    ),
    row(4, "crash", timing=tried(50.0, 150.0)),
    row(5, "crash"),
    # a cascade with a fix whose run succeeded, one without
    row(6, "cascade", fix=fix("modle → model"), fix_run={"status": "ok"}, timing=tried(300.0, 500.0)),
    row(7, "cascade"),
    # a fix on a cell that ran fine (a false warning's): listed apart, not in the precision
    row(8, "ok", fix=fix(".iteritems( → .items(", "renamed-api"), timing=tried(400.0, 600.0)),
    # a fixed run that timed out: neither right nor wrong
    row(9, "crash", fix=fix("c → d"), fix_run={"status": "timeout"}, timing=tried(500.0, 700.0)),
    row(10, "skipped", fix=fix("never ran"), run={"status": "skipped"}),
]


def test_fix_figures_count_what_the_fixed_runs_did() -> None:
    f = summary.summarize(ROWS)["fixes"]
    assert f["offered"] == 5  # the skipped cell is not a cell that ran
    assert f["on_crash"] == {"offered": 3, "of": 5, "pct": 60.0}
    assert f["on_cascade"] == {"offered": 1, "of": 2, "pct": 50.0}
    assert f["on_machine"] == 0
    assert f["by_origin"] == {"close-name": 3, "import": 1, "renamed-api": 1}
    # fixed runs: rows 2, 3, 6 decided (2 ok); row 9 timed out
    assert (f["fixed_runs"], f["fixed_ok"], f["precision_pct"], f["fixed_undecided"]) == (3, 2, 66.7, 1)
    assert f["on_not_crashed"] == 1 and [b["where"] for b in f["not_crashed"]] == ["nb.ipynb#8"]
    [failed] = f["failed"]
    assert failed["where"] == "nb.ipynb#3" and failed["fixed_run"] == "ValueError: bad"
    assert failed["fix"] == "add `import numpy as np`" and failed["origin"] == "import"
    assert [b["where"] for b in f["list"]] == [f"nb.ipynb#{i}" for i in (2, 3, 6, 8, 9)]
    assert [(b["where"], b["candidates_tried"]) for b in f["crash_without_fix"]] == [
        ("nb.ipynb#4", True),
        ("nb.ipynb#5", False),
    ]
    # fix_ms over the cells whose candidates were tried (fix_ms > 0): 50..500
    assert f["fix_ms"] == {"n": 6, "p50": 250.0, "p95": 500.0}
    assert f["analyze_ms_where_tried"] == {"n": 6, "p50": 450.0, "p95": 700.0}


def test_fix_lines_are_rendered_only_when_fixes_were_tried() -> None:
    text = summary.render(summary.summarize(ROWS))
    assert "fixes offered: 5 (close-name 3, import 1, renamed-api 1); on real crashes 3/5 (60.0 %)" in text
    assert "fix precision: 66.7 % (2 of 3 fixed runs succeeded; 1 timed out or died, not counted)" in text
    assert "fixes offered on cells that did not crash: 1" in text
    assert "fix trials ms (p50 / p95, cells with candidates tried): 250.0 / 500.0 (6)" in text
    assert "nb.ipynb#3: add `import numpy as np` [import, 200.0 ms] | real crash: KeyError: 'x'" in text
    assert "fixes offered on the crashes an edit of the cell could fix: 3/5 (60.0 %)" in text
    assert "real crashes an edit could fix with no fix offered (2; candidates tried, none ran, on 1):" in text
    assert "nb.ipynb#4 line 1: KeyError: 'x' | cell_4 = 1 | candidates tried, none ran" in text
    # rows of a run without --fixes (or of an --out file older than fixes): no fix section
    plain = [row(1, "ok"), row(2, "crash")]
    assert "fixes offered" not in summary.render(summary.summarize(plain))
    old = [{k: v for k, v in r.items() if k not in ("fix", "fix_run")} for r in plain]
    assert summary.summarize(old)["fixes"]["offered"] == 0


def crashed(
    index: int, exception: str, message: str, source: str, run_extra: Any = None, **extra: Any
) -> dict[str, Any]:
    run = {"status": "error", "exception": exception, "message": message, "line": 1, **(run_extra or {})}
    return row(index, "crash", run=run, source=source, **extra)


def test_the_share_given_a_fix_counts_only_crashes_an_edit_of_the_cell_could_fix() -> None:
    moved = fix("from sklearn.cross_validation import → from sklearn.model_selection import", "import")
    rows = [
        crashed(1, "ModuleNotFoundError", "No module named 'graphviz'", "import graphviz"),
        # a submodule the installed package no longer has: version drift an edit can reach
        crashed(
            2, "ModuleNotFoundError", "No module named 'sklearn.cross_validation'", "import x", fix=moved
        ),
        crashed(
            3, "ImportError", "Missing optional dependency 'openpyxl'.  Use pip or conda.", "df.to_excel(p)"
        ),
        crashed(
            4, "ImportError", "`load_boston` has been removed from scikit-learn", "from x import load_boston"
        ),
        # the fit failed, so the estimator it was meant to fit is not fitted: a cascade
        crashed(5, "TypeError", "KMeans.__init__() got an unexpected keyword argument 'n_job'", "km.fit(X)"),
        crashed(
            6,
            "NotFittedError",
            "This KMeans instance is not fitted yet. Call 'fit'.",
            "labels = km.predict(X)",
        ),
        # not fitted, but nothing the failed cells touched is read: a fix of this cell could reach it
        crashed(7, "NotFittedError", "This PCA instance is not fitted yet.", "pca.transform(X)"),
        row(8, "ok", source="km.fit(X)"),  # once the fit ran, km is no longer a cascade's
        crashed(9, "NotFittedError", "This KMeans instance is not fitted yet.", "km.predict(X)"),
        # raised in a function an earlier cell defined: that cell holds the code to fix
        crashed(
            10,
            "TypeError",
            "too many positional arguments",
            "plot_curve(3)",
            run_extra={"raised_in": "other cell"},
        ),
    ]
    f = summary.summarize(rows)["fixes"]
    assert f["on_crash"] == {"offered": 1, "of": 9, "pct": 11.1}
    assert f["unreachable"] == {
        "missing package": 2,
        "removed dataset": 1,
        "cascade": 1,
        "outside the cell": 1,
    }
    assert f["on_reachable"] == {"offered": 1, "of": 4, "pct": 25.0}
    assert [b["where"] for b in f["crash_without_fix"]] == ["nb.ipynb#5", "nb.ipynb#7", "nb.ipynb#9"]
    assert [(b["where"], b["reason"]) for b in f["unreachable_list"]] == [
        ("nb.ipynb#1", "missing package"),
        ("nb.ipynb#3", "missing package"),
        ("nb.ipynb#4", "removed dataset"),
        ("nb.ipynb#6", "cascade"),
        ("nb.ipynb#10", "outside the cell"),
    ]
    text = summary.render(summary.summarize(rows))
    assert (
        "fixes offered on the crashes an edit of the cell could fix: 1/4 (25.0 %); crashes none could "
        "(missing package 2, removed dataset 1, cascade 1, outside the cell 1, listed below)"
    ) in text
    assert "  nb.ipynb#6 line 1: cascade: NotFittedError: This KMeans instance is not fitted yet." in text


def test_where_a_crash_was_raised_is_read_from_the_traceback() -> None:
    from crane_jupyterlab.bench.kernels import _raised_in

    def content(*frames: str) -> dict[str, Any]:
        return {
            "execution_count": 7,
            "traceback": ["-----", "KeyError   Traceback", *frames, "KeyError: 'x'"],
        }

    here, earlier = "\x1b[36mCell In[7], line 2\x1b[39m\n----> 2 f()", "Cell In[3], line 5, in f()\n"
    assert _raised_in(content(here)) == "cell"
    assert _raised_in(content(here, earlier)) == "other cell"
    assert _raised_in(content(here, "File ~/nb/helpers.py:3, in h()")) == "file"
    # a compiled library's source is named relative to its build: the library's, not a file of the notebook
    assert _raised_in(content(here, "File pandas/_libs/tslibs/offsets.pyx:5047, in f()")) == "cell"
    # Python's own code and the installed libraries' are not the notebook's
    installed = [f"File {json.__file__}:346, in loads(s)", f"File {pytest.__file__}:1, in x()"]
    assert _raised_in(content(here, *installed)) == "cell"
    assert _raised_in(content(earlier, *installed)) == "other cell"
    assert _raised_in(content()) is None


def test_a_may_crash_warning_is_neither_a_certain_one_nor_a_hit() -> None:
    """A quick trial's "may crash" (policy.maybe_quick) on a cell that ran fine is no false certain
    warning, and on a crash no certain hit: it is counted apart."""
    rows = [row(1, "ok", warning="may"), row(2, "crash", warning="may"), row(3, "crash")]
    figures = summary.summarize(rows)
    assert figures["warnings"]["certain"] == 1 and figures["warnings"]["on_ok"] == 0
    assert (figures["warnings"]["may"], figures["warnings"]["may_on_ok"]) == (2, 1)
    assert figures["recall"]["crash"]["found"] == 1
    assert "'may crash' warnings (a quick trial's crash that may depend on its cut): 2" in summary.render(
        figures
    )
