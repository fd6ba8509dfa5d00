"""From the top (kernel/trial/top.py): a notebook's cells in a fresh sandboxed worker of this Python, with
none of this process's state; the first cell that does not run to its end stops the run."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from crane_jupyterlab.kernel.trial import control as trial

pytestmark = pytest.mark.usefixtures("os_layer", "bare_worker")


def cells(*sources: str) -> list[dict[str, str]]:
    return [{"cell_id": f"c{i}", "source": s} for i, s in enumerate(sources)]


def run_top(sources: list[dict[str, str]], **options: Any) -> dict[str, Any]:
    started = trial.top_start(sources, {"chain_s": 60.0, **options})
    assert started["state"] == "running", started
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        state = trial.top_result(started["token"])
        if state["state"] == "done":
            assert (state["done"], state["total"]) == (
                sum(c["status"] != "not_reached" for c in state["outcome"]["below"]), len(sources)
            )  # fmt: skip
            return dict(state["outcome"])
        time.sleep(0.05)
    raise AssertionError("the run from the top left no outcome")


def test_a_name_only_hidden_state_defines_fails_from_the_top() -> None:
    # This process has `df_clean` (hidden state); the worker has none of it.
    globals()["df_clean"] = [1, 2]
    outcome = run_top(cells("x = 1", "y = len(df_clean)", "print(y)"))
    first, second, third = outcome["below"]
    assert first["status"] == "finished"
    assert (second["status"], second["exception"], second["line"]) == ("crashed", "NameError", 1)
    assert "df_clean" in second["message"]
    assert third["status"] == "not_reached"


def test_a_notebook_that_runs_from_the_top_runs(tmp_path: Path) -> None:
    outcome = run_top(cells("import os\nrows = [1, 2, 3]", "total = sum(rows)", "assert total == 6"))
    assert [c["status"] for c in outcome["below"]] == ["finished"] * 3
    assert outcome["sandbox"].startswith("seccomp")


def test_writes_land_in_a_private_copy(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    written = cells(f"open({str(target)!r}, 'w').write('x')", f"print(open({str(target)!r}).read())")
    outcome = run_top(written, private_writes=True)
    assert [c["status"] for c in outcome["below"]] == ["finished", "finished"], outcome
    assert not target.exists()


def test_a_long_loop_is_cut_and_the_run_says_shortened() -> None:
    # 200 s whole: past its share of the 60 s budget
    long = "import time\nfor i in range(4000):\n    time.sleep(0.05)"
    outcome = run_top(cells(long, "z = i + 1"))
    first, second = outcome["below"]
    assert first["status"] == "finished" and first["quick"]["cut"], first
    # it ran on what the cut loop left: had it crashed, the crash could depend on the cut
    assert second["status"] == "finished" and second["after_cut"] is True


def test_cancel_ends_the_run() -> None:
    started = trial.top_start(cells("import time\ntime.sleep(60)"), {"chain_s": 120.0, "chain_quick": False})
    time.sleep(1.0)
    assert trial.top_cancel(started["token"])["state"] == "cancelled"
    deadline = time.monotonic() + 30
    while trial.top_result(started["token"])["state"] != "done":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert trial.top_result(started["token"])["outcome"].get("cancelled") is True


def test_matplotlib_inline_runs_in_the_worker() -> None:
    # a plain IPython shell has no event loop for `%matplotlib`; in a kernel the magic selects a display
    pytest.importorskip("matplotlib")
    outcome = run_top(cells("%matplotlib inline\nimport matplotlib.pyplot as plt", "plt.plot([1, 2])"))
    assert [c["status"] for c in outcome["below"]] == ["finished", "finished"], outcome


def test_a_function_defined_above_keeps_its_loops_when_called_below() -> None:
    # the function's loop belongs to the first cell's quick runtime; the second cell has its own
    define = "def total(xs):\n    s = 0\n    for x in xs:\n        s += x\n    return s"
    outcome = run_top(cells(define, "t = total(range(10))", "assert t == 45"))
    assert [c["status"] for c in outcome["below"]] == ["finished"] * 3, outcome


def test_a_cut_loop_in_a_function_from_above_makes_a_later_crash_depend_on_it() -> None:
    define = "import time\ndef slow(n):\n    out = []\n    for i in range(n):\n        time.sleep(0.05)\n"
    define += "        out.append(i)\n    return out"
    outcome = run_top(cells(define, "got = slow(4000)\nlast = got[3999]"))
    second = outcome["below"][1]
    assert (second["status"], second["exception"]) == ("crashed", "IndexError"), second
    assert second["quick"]["crash"] == "depends" and second["quick"]["cut"], second


def test_joblib_n_jobs_runs_in_the_worker() -> None:
    pytest.importorskip("joblib")
    run = "from joblib import Parallel, delayed\n"
    run += "squares = Parallel(n_jobs=2)(delayed(abs)(-i) for i in range(4))"
    outcome = run_top(cells(run, "assert squares == [0, 1, 2, 3]"))
    assert [c["status"] for c in outcome["below"]] == ["finished", "finished"], outcome


LONG = "import time\nfor epoch in range(4000):\n    time.sleep(0.05)\n    hist.append(epoch)\n"  # 200 s


@pytest.mark.parametrize(
    ("crash", "exception", "hedged"),
    [
        ("import crane_no_such_module_here", "ModuleNotFoundError", False),
        ("print(never_bound_anywhere)", "NameError", False),
        ("settings = {'lr': 0.1}\nsettings['momentum']", "KeyError", False),
        ("print(best)", "NameError", True),  # bound in the cut loop, at its last epoch only
        ("hist[3999]", "IndexError", True),  # reads what the cut loop built
        ("view = hist\nview[3999]", "IndexError", True),  # the same list, by another name
        ("box.kept[3999]", "IndexError", True),  # an object that holds it (bound before the cut)
        ("import numpy as np\nnp.zeros(3)[5]", "IndexError", False),  # an array: nothing of the cut's
        ("open('checkpoint_3999.txt').read()", "FileNotFoundError", True),  # a file a cut loop may write
    ],
)
def test_a_crash_after_a_cut_is_claimed_only_where_the_cut_cannot_cause_it(
    crash: str, exception: str, hedged: bool
) -> None:
    long = LONG + "    if epoch == 3999:\n        best = epoch\n"
    box = "import types\nbox = types.SimpleNamespace(kept=hist)"
    outcome = run_top(cells("hist = []\n" + box, long, "total = len(hist)", crash))
    _, first, _, third = outcome["below"]
    assert first["quick"]["cut"], first
    assert (third["status"], third["exception"]) == ("crashed", exception), third
    assert bool(third.get("after_cut")) is hedged, third
    if hedged:  # a full run to it (200 s) does not fit what the 60 s budget left: the hedge stays
        rerun = outcome["rerun"]
        assert rerun["ran"] is False and rerun["need_s"] > 150 and rerun["cell"] == 3, rerun
    else:
        assert "rerun" not in outcome


def test_a_loop_that_fits_the_runs_budget_runs_whole() -> None:
    # 1.5 s, three times a single cell's budget here, but a small share of the run's: not cut
    loop = "import time\nseen = []\nfor i in range(30):\n    time.sleep(0.05)\n    seen.append(i)"
    outcome = run_top(cells(loop, "assert len(seen) == 30"), budget_s=0.5)
    first, second = outcome["below"]
    assert first["status"] == "finished" and not first["quick"]["cut"], first
    assert second["status"] == "finished" and not second.get("after_cut"), second


def test_a_hedged_crash_is_asked_again_by_a_full_run_that_fits() -> None:
    # 6 s whole, past its share (90 s over 25 cells) so the quick run cuts it; the crash below then may
    # come from the cut, and a full run to it (about 6 s) fits what is left, however slowly the workers
    # start on a loaded machine: it is run, and claims it
    loop = "import time\nfor e in range(60):\n    time.sleep(0.1)\n    hist.append(e)"
    filler = [f"a{i} = {i}" for i in range(21)]
    # a cell after the crash: the run stops at the crash, as Run All does, and that cell is not reached
    sources = cells("hist = []", loop, *filler, "hist[60]", "print('after')")
    outcome = run_top(sources, chain_s=90.0, budget_s=0.5)
    rerun = outcome["rerun"]
    assert rerun["ran"] and rerun["answered"] and rerun["cell"] == 23 and 5.0 < rerun["need_s"] < 30.0, rerun
    steps = outcome["below"]
    assert steps[1]["status"] == "finished" and not (steps[1].get("quick") or {}).get("cut"), steps[1]
    crash, after = steps[-2:]
    assert (crash["status"], crash["exception"]) == ("crashed", "IndexError"), crash
    assert not crash.get("after_cut") and after["status"] == "not_reached", steps


def test_a_hedge_that_a_full_run_clears_goes_away() -> None:
    loop = "import time\nfor e in range(60):\n    time.sleep(0.1)\n    hist.append(e)"
    filler = [f"a{i} = {i}" for i in range(21)]
    sources = cells("hist = []", loop, *filler, "hist[59]", "print('after')")
    outcome = run_top(sources, chain_s=90.0, budget_s=0.5)
    assert outcome["rerun"]["answered"], outcome["rerun"]
    assert [step["status"] for step in outcome["below"]] == ["finished"] * 25


def test_a_dataloader_with_workers_loads_in_the_trial_process() -> None:
    # DataLoader(num_workers > 0) starts processes, which the sandbox refuses: the batches are loaded in
    # the trial's own process, and an error in the dataset is the same exception as with workers
    pytest.importorskip("torch")
    setup = "import torch\nfrom torch.utils.data import DataLoader, TensorDataset\n"
    load = "data = TensorDataset(torch.arange(10.0))\n"
    load += "loader = DataLoader(data, batch_size=4, num_workers=2, prefetch_factor=2)\n"
    load += "total = sum(float(batch[0].sum()) for batch in loader)"
    broken = "class Broken(torch.utils.data.Dataset):\n    def __len__(self):\n        return 3\n"
    broken += "    def __getitem__(self, i):\n        return {'a': i}['b']\n"
    broken += "next(iter(DataLoader(Broken(), num_workers=2)))"
    outcome = run_top(cells(setup, load, "assert total == 45.0", broken))
    assert [c["status"] for c in outcome["below"][:3]] == ["finished"] * 3, outcome
    assert (outcome["below"][3]["status"], outcome["below"][3]["exception"]) == ("crashed", "KeyError")


def test_a_hedged_crash_does_not_end_the_run_for_cells_that_read_nothing_from_it() -> None:
    # the crash at cell 3 may come from the cut 200 s loop, and a full run does not fit: the cells after
    # it that read nothing it touched still run, one that reads `hist` waits, and a crash of its own
    # further down is claimed
    sources = cells("hist = []", LONG, "hist[3999]", "other = 1 + 1", "y = hist[0]", "print(never_bound_zz)")
    outcome = run_top(sources)
    statuses = [step["status"] for step in outcome["below"]]
    assert statuses == ["finished", "finished", "crashed", "finished", "unavailable", "crashed"], outcome
    hedge, _, waits, claimed = outcome["below"][2:]
    assert hedge["after_cut"] and outcome["rerun"]["ran"] is False, outcome
    assert "hist" in waits["reason"] and "cut loop" in waits["reason"], waits
    assert claimed["exception"] == "NameError" and not claimed.get("after_cut"), claimed


def test_a_run_goes_on_past_shell_commands_and_cells_that_could_not_run() -> None:
    # A course notebook's head: an install (answered from this environment), a shell listing, a
    # download the sandbox's lack of network blocks; the cells after it that read nothing it would
    # have made run on, the ones that read its file or its names are not claimed, and a crash of
    # their own further down is
    download = (
        "!python3 -c \"import urllib.request as u; u.urlretrieve('http://example.com/d.csv', 'd.csv')\""
    )
    sources = cells(
        "!pip install -q numpy > /dev/null",
        "files = !ls /\nassert 'usr' in files",
        download + "\nrows = 3",
        "import numpy as np\nx = np.ones(2)",
        "text = open('d.csv').read()",
        "upper = text.upper()",
        "print(never_bound_here)",
    )
    outcome = run_top(sources, private_writes=True)
    statuses = [step["status"] for step in outcome["below"]]
    assert statuses == [
        "finished",
        "finished",
        "blocked",
        "finished",
        "unavailable",
        "unavailable",
        "crashed",
    ], outcome
    install, _, download_step, _, read, reads_text, claimed = outcome["below"]
    assert "already installed: numpy" in install["installs"], install
    assert "reach the network" in download_step["reason"], download_step
    assert "could not run" in read["reason"] and "text" in reads_text["reason"], outcome
    assert claimed["exception"] == "NameError" and not claimed.get("after_cut"), claimed


def test_help_runs_in_the_worker_as_in_a_kernel() -> None:
    # pydoc asks stdin whether it is a terminal: the worker's is /dev/null, as a kernel's, never closed
    outcome = run_top(cells("import math\nhelp(math.log)", "x = input.__name__"))
    assert [c["status"] for c in outcome["below"]] == ["finished", "finished"], outcome
