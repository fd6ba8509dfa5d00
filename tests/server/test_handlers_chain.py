"""The chain through the real server and a real kernel: an edit to an early cell, the cells
below sent with it; the trial runs the edited cell, then the cells below, and each gets its outcome. The
kernel runs none of them."""

from __future__ import annotations

from typing import Any

import pytest
from support import analyze

from crane_jupyterlab.server.trial import platform_sandbox

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not platform_sandbox().available, reason="no OS sandbox for trial runs here"),
]

LOADED = "import pandas as pd\ndf = pd.DataFrame({'age': [22, 38], 'fare': [7.25, 71.3]})"
BELOW = [
    {"cell_id": "c2", "source": "df['fare_eur'] = df['fare'] * 1.1"},
    {"cell_id": "c3", "source": "mean_age = df['age'].mean()"},
    {"cell_id": "c4", "source": "print(mean_age)"},
]


@pytest.fixture
def crane_config(crane_env: None) -> dict[str, Any]:
    return {"trial": "auto", "replicas": False}


async def test_a_renamed_column_breaks_a_cell_below_and_only_the_chain_sees_it(
    jp_fetch: Any, kernels: Any
) -> None:
    # The kernel ran c2 as it is: alone on the kernel as it is, c3 stands for the notebook without the edit.
    k = await kernels.start(LOADED, BELOW[0]["source"])
    edit = "df = pd.DataFrame({'Age': [22, 38], 'fare': [7.25, 71.3]})"
    code, body = await analyze(jp_fetch, k.id, edit, below=BELOW)
    assert code == 200, body
    assert body["trial"]["status"] == "finished" and body["verdict"]["detection"] is False
    c2, c3, c4 = body["below"]
    assert (c2["cell_id"], c2["status"], c2["reads"]) == ("c2", "finished", ["df"])
    assert (c3["cell_id"], c3["status"], c3["exception"], c3["message"], c3["line"]) == (
        "c3", "crashed", "KeyError", "'age'", 1
    )  # fmt: skip
    assert c3["reads"] == ["df"] and c3["after_cut"] is False
    assert c3["without_edit"] is False  # on the kernel as it is, the cell runs: the edit breaks it
    assert (c4["status"], c4["reason"]) == ("not_reached", "an earlier cell below did not run to its end")
    assert body["timing"]["below_ms"] > 0
    assert body["trial"]["below"] == []  # said once
    assert await k.value("'fare_eur' in df.columns, 'mean_age' in globals()") == "(True, False)"

    # Where the kernel did not run a cell between, the cell alone says nothing of the notebook without
    # the edit: no answer rather than a wrong one.
    k2 = await kernels.start(LOADED)
    code, body = await analyze(jp_fetch, k2.id, edit, below=BELOW)
    assert code == 200 and body["below"][1]["status"] == "crashed", body
    assert body["below"][1]["without_edit"] is None


async def test_a_cell_below_that_crashes_anyway_is_not_blamed_on_the_edit(
    jp_fetch: Any, kernels: Any
) -> None:
    k = await kernels.start(LOADED)
    below = [{"cell_id": "c9", "source": "df['height'].mean()"}]
    code, body = await analyze(jp_fetch, k.id, "df = df.copy()", below=below)
    assert code == 200, body
    (c9,) = body["below"]
    assert (c9["status"], c9["exception"], c9["without_edit"]) == ("crashed", "KeyError", True)


async def test_without_cells_below_nothing_changes(jp_fetch: Any, kernels: Any) -> None:
    k = await kernels.start(LOADED)
    code, body = await analyze(jp_fetch, k.id, "x = 1")
    assert code == 200 and body["below"] is None and body["timing"]["below_ms"] == 0, body


async def test_the_checks_tier_runs_no_chain(jp_fetch: Any, kernels: Any) -> None:
    k = await kernels.start(LOADED)
    code, body = await analyze(jp_fetch, k.id, "x = 1", below=BELOW, tier="checks")
    assert code == 200 and body["below"] is None, body


async def test_a_name_the_edit_no_longer_binds_is_hidden_state_below(jp_fetch: Any, kernels: Any) -> None:
    """The cell once bound `upper_limit`; edited, it binds `upper` instead. A cell below still reads
    `upper_limit`: it runs on the kernel's old value (the chain sees it finish) but fails from the top."""
    previous = "upper_limit = df['fare'].max()"
    k = await kernels.start(LOADED, previous)
    below = [{"cell_id": "c5", "source": "clipped = df['fare'].clip(upper=upper_limit)"},
             {"cell_id": "c6", "source": "upper_limit = 3\nprint(upper_limit)"},
             {"cell_id": "c7", "source": "print(upper_limit)"}]  # fmt: skip
    edit = "upper = df['fare'].max()"
    code, body = await analyze(jp_fetch, k.id, edit, below=below, previous_source=previous)
    assert code == 200, body
    c5, c6, c7 = body["below"]
    assert (c5["status"], c5["unbound"]) == ("finished", ["upper_limit"])
    assert c6["unbound"] == [] and c7["unbound"] == []  # c6 binds it again before c7 reads it


async def test_a_crash_below_that_a_cut_loop_may_cause_is_asked_again_with_nothing_cut(
    jp_fetch: Any, kernels: Any
) -> None:
    # The loop below (about 6 s) is past its share of the chain's 10 s, so the quick chain cuts it and
    # the crash after it may come from the cut; a full run to it fits the budget: the trial runs again
    # with nothing cut and the crash is seen whole
    k = await kernels.start("import time")
    below = [
        {"cell_id": "c2", "source": "for e in range(60):\n    time.sleep(0.1)\n    hist.append(e)"},
        {"cell_id": "c3", "source": "hist[60]"},
        {"cell_id": "c4", "source": "hist[59]"},
    ]
    code, body = await analyze(jp_fetch, k.id, "hist = []", below=below)
    assert code == 200, body
    c2, c3, c4 = body["below"]
    assert c2["status"] == "finished" and not (c2["quick"] or {}).get("cut"), c2
    assert (c3["status"], c3["exception"], c3["after_cut"]) == ("crashed", "IndexError", False), c3
    assert c4["status"] == "not_reached"
