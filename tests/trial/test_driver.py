"""The server's trial driver (crane_jupyterlab.server.trial) against a scripted kernel, and the verdict
policy's use of a trial outcome (crane_jupyterlab.policy)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from crane_jupyterlab import policy
from crane_jupyterlab.models import Finding, TrialOutcome
from crane_jupyterlab.server import payload
from crane_jupyterlab.server import trial as trials
from crane_jupyterlab.server.errors import KernelBusy, KernelNotFound

FAST = trials.TrialOptions(budget_s=0.2)


class Kernel:
    """Answers the driver's calls from a script: each `trial.result` pops the next reply (or raises it)."""

    def __init__(self, start: dict[str, Any], *results: Any) -> None:
        self.start = start
        self.results = list(results)
        self.calls: list[tuple[str, str]] = []

    async def __call__(self, target: str, arguments: str) -> dict[str, Any]:
        self.calls.append((target, arguments))
        if target == "trial.start":
            return self.start
        if target == "trial.cancel":
            return {"state": "cancelled"}
        reply = self.results.pop(0) if self.results else {"state": "running"}
        if isinstance(reply, BaseException):
            raise reply
        result: dict[str, Any] = reply
        return result


RUNNING = {"state": "running", "token": "t1", "pid": 1, "blocked_ms": 1.0}
CRASHED = {"status": "crashed", "exception": "KeyError", "message": "'a'", "line": 2, "frames": []}


async def test_polls_until_the_outcome_is_there() -> None:
    kernel = Kernel(RUNNING, {"state": "running"}, {"state": "done", "outcome": CRASHED})
    outcome = await trials.run(kernel, "x['a']", FAST)
    assert (outcome.status, outcome.exception, outcome.line) == ("crashed", "KeyError", 2)
    assert [t for t, _ in kernel.calls] == ["trial.start", "trial.result", "trial.result"]
    assert kernel.calls[0][1].startswith("\"x['a']\", {'budget_s': 0.2")
    assert kernel.calls[1][1] == "'t1'"


async def test_an_outcome_known_at_once_needs_no_poll() -> None:
    kernel = Kernel({"state": "done", "outcome": {"status": "unavailable", "reason": "CUDA in use: x"}})
    outcome = await trials.run(kernel, "x", FAST)
    assert outcome.status == "unavailable" and outcome.reason == "CUDA in use: x"
    assert len(kernel.calls) == 1


async def test_a_busy_kernel_is_asked_again() -> None:
    kernel = Kernel(
        RUNNING, KernelBusy("user code"), KernelBusy("user code"), {"state": "done", "outcome": CRASHED}
    )
    assert (await trials.run(kernel, "x", FAST)).status == "crashed"


async def test_a_kernel_busy_past_the_deadline_leaves_the_trial_unavailable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(trials, "COLLECT_GRACE_S", 0.0)
    monkeypatch.setattr(trials, "SETUP_ALLOWANCE_S", 0.0)
    kernel = Kernel(RUNNING, *[KernelBusy("user code")] * 100)
    outcome = await trials.run(kernel, "x", FAST)
    assert outcome.status == "unavailable" and "busy" in (outcome.reason or "")
    assert ("trial.cancel", "'t1'") in kernel.calls


@pytest.mark.parametrize(
    ("reply", "words"),
    [
        ({"state": "unknown"}, "restarted or a newer trial"),
        (KernelNotFound("gone"), "died or restarted"),
        (payload.KernelTimeout("slow"), "could not be read"),
        ({"state": "done", "outcome": {"status": "exploded"}}, "unreadable outcome"),
    ],
)
async def test_what_can_go_wrong_is_an_unavailable_outcome(reply: Any, words: str) -> None:
    outcome = await trials.run(Kernel(RUNNING, reply), "x", FAST)
    assert outcome.status == "unavailable" and words in (outcome.reason or "")


@pytest.mark.parametrize(
    ("error", "words"),
    [
        (KernelBusy("user code"), "started running code"),
        (KernelNotFound("gone"), "died"),
        (ValueError("x"), "x"),
    ],
)
async def test_a_trial_that_cannot_start_is_unavailable(error: Exception, words: str) -> None:
    async def invoke(target: str, arguments: str) -> dict[str, Any]:
        raise error

    outcome = await trials.run(invoke, "x", FAST)
    assert outcome.status == "unavailable" and words in (outcome.reason or "")


async def test_a_cancelled_caller_ends_the_trial() -> None:
    kernel = Kernel(RUNNING)
    task = asyncio.ensure_future(trials.run(kernel, "import time\ntime.sleep(60)", trials.TrialOptions()))
    await asyncio.sleep(0.2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.sleep(0.05)
    assert ("trial.cancel", "'t1'") in kernel.calls


@pytest.mark.parametrize(
    ("source", "parses"),
    [("x = 1", True), ("%time x = 1\n!ls", True), ("def f(:", False), ("%%bash\nls", True)],
)
def test_only_cells_that_parse_get_a_trial(source: str, parses: bool) -> None:
    assert trials.parses(source) is parses


# -- the verdict ----------------------------------------------------------------------------------

CRASH = TrialOutcome(status="crashed", exception="KeyError", message="'Age'", line=3, sandbox="seccomp")
END = TrialOutcome(status="finished", elapsed_ms=1200.0)
CHECK = Finding(rule="missing-column", message="df has no column 'Age'.")
SYNTAX = Finding(rule="syntax-error", message="SyntaxError: invalid syntax (line 1).")


def test_an_observed_crash_is_certain() -> None:
    verdict = policy.certain([], CRASH)
    assert verdict is not None and verdict.detection and verdict.source == "trial"
    assert "KeyError: 'Age' at line 3" in verdict.reasoning
    both = policy.certain([CHECK], CRASH)
    assert both is not None and both.source == "trial" and both.findings == [CHECK]


def test_an_observed_end_is_no_crash_even_against_a_check() -> None:
    verdict = policy.certain([CHECK], END)
    assert verdict is not None and not verdict.detection and verdict.source == "trial"
    assert verdict.findings == [] and "1.20 s" in verdict.reasoning


def test_a_syntax_error_comes_first() -> None:
    verdict = policy.certain([SYNTAX], CRASH)
    assert verdict is not None and verdict.source == "syntax"


@pytest.mark.parametrize("status", ["blocked", "timed_out", "out_of_memory", "unavailable"])
def test_a_trial_that_did_not_conclude_leaves_the_verdict_to_the_others(status: str) -> None:
    outcome = TrialOutcome(status=status, reason="why")  # type: ignore[arg-type]
    assert policy.certain([], outcome) is None
    checks = policy.certain([CHECK], outcome)
    assert checks is not None and checks.source == "checks"
    assert policy.without_model([], outcome).source == "checks"
    alone = policy.from_trial_alone(outcome)
    assert not alone.detection and f"{status}: why" in alone.reasoning


def test_the_trial_alone() -> None:
    assert policy.from_trial_alone(CRASH).detection
    assert not policy.from_trial_alone(END).detection
    assert "no trial ran" in policy.from_trial_alone(None).reasoning
