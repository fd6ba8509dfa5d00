"""The chain (kernel/trial/chain.py): once the edited cell has run to its end, the same trial goes on with
the cells below it, each a step, and stops at the first that does not run to its end. Trials forked from
the test process, on a namespace of their own; test_kernel.py's helpers run the same code in a kernel."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from crane_jupyterlab.kernel.trial.chain import names

pytestmark = pytest.mark.usefixtures("os_layer")


def cells(*sources: str) -> list[dict[str, str]]:
    return [{"cell_id": f"c{i}", "source": s} for i, s in enumerate(sources)]


def test_an_edit_that_breaks_a_cell_below_is_seen_there(kit: SimpleNamespace) -> None:
    ns: dict[str, Any] = {"rows": [{"age": 3}]}
    below = cells("ages = [r['age'] for r in rows]", "total = sum(ages)", "print(total)", "y = 1")
    outcome = kit.run_here("rows = [{'Age': 3}]", ns, below=below)
    assert outcome["status"] == "finished"
    steps = outcome["below"]
    assert [s["cell_id"] for s in steps] == ["c0", "c1", "c2", "c3"]
    assert [s["status"] for s in steps] == ["crashed", "not_reached", "not_reached", "not_reached"]
    assert (steps[0]["exception"], steps[0]["message"], steps[0]["line"]) == ("KeyError", "'age'", 1)
    assert steps[0]["reads"] == ["rows"]
    assert "did not run to its end" in steps[1]["reason"]
    assert ns == {"rows": [{"age": 3}]}  # the chain ran on the child's copy


def test_cells_that_run_go_on_and_a_cell_the_kernel_ran_unchanged_is_skipped(kit: SimpleNamespace) -> None:
    # `In` is IPython's input history: the kernel already ran "scale = 2", which reads nothing changed.
    ns: dict[str, Any] = {"In": ["", "scale = 2", "z = x * scale"], "x": 1, "scale": 2}
    below = cells("scale = 2", "z = x * scale", "w = z + 1")
    outcome = kit.run_here("x = 10", ns, below=below)
    statuses = [s["status"] for s in outcome["below"]]
    assert statuses == ["skipped", "finished", "finished"], outcome["below"]
    assert "already ran this same text" in outcome["below"][0]["reason"]
    assert outcome["below"][1]["reads"] == ["x"]  # ran although the kernel ran it: it reads x
    assert outcome["below"][2]["reads"] == ["z"]


def test_the_edited_cells_crash_reaches_no_cell_below(kit: SimpleNamespace) -> None:
    outcome = kit.run_here("1 / 0", {}, below=cells("x = 1"))
    assert outcome["status"] == "crashed"
    assert [(s["status"], s["reason"]) for s in outcome["below"]] == [
        ("not_reached", "the edited cell did not run to its end")
    ]


def test_the_chain_has_one_budget_and_what_it_does_not_reach_says_so(kit: SimpleNamespace) -> None:
    below = cells("import time\ntime.sleep(30)", "x = 2")
    outcome = kit.run_here("x = 1", {}, below=below, chain_s=0.5)
    assert outcome["status"] == "finished"  # the edited cell's own outcome stands
    first, second = outcome["below"]
    assert first["status"] == "timed_out" and "0.5 s budget" in first["reason"]
    assert second["status"] == "not_reached"


def test_a_refused_side_effect_below_makes_that_step_blocked_and_the_chain_goes_on(
    kit: SimpleNamespace,
) -> None:
    refused = "import socket\nsocket.create_connection(('127.0.0.1', 9), 1)\nreply = 1"
    below = cells(refused, "x = 2", "y = reply + 1", "z = undefined_below")
    outcome = kit.run_here("x = 1", {}, below=below)
    assert outcome["status"] == "finished"  # the refusal is the step's, not the edited cell's
    first, second, third, fourth = outcome["below"]
    assert first["status"] == "blocked" and "127.0.0.1" in first["reason"], first
    # what reads nothing the blocked cell binds runs; what reads `reply` cannot be checked
    assert second["status"] == "finished", second
    assert third["status"] == "unavailable" and "reply" in third["reason"], third
    assert (fourth["status"], fourth["exception"]) == ("crashed", "NameError"), fourth


def test_a_crash_after_a_cut_loop_upstream_says_so(kit: SimpleNamespace) -> None:
    target = "import time\nseen = []\nfor i in range(200):\n    time.sleep(0.05)\n    seen.append(i)"
    outcome = kit.run_here(target, {}, below=cells("seen[500]"), quick=True, budget_s=2.0)
    assert outcome["status"] == "finished" and outcome["quick"]["cut"], outcome
    (step,) = outcome["below"]
    assert (step["status"], step["exception"], step.get("after_cut")) == ("crashed", "IndexError", True)


def test_names_read_and_touched() -> None:
    reads, touches = names("for i in range(3):\n    total += f(i)\ndef g(a):\n    return a + b")
    assert reads == {"range", "total", "f", "i", "a", "b"}
    assert {"total", "i", "g", "a"} <= touches
