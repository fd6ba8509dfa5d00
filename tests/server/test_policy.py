"""The one verdict policy (crane_jupyterlab.policy), used by the server and crane-bench alike."""

from __future__ import annotations

from crane_jupyterlab import policy
from crane_jupyterlab.checks import SYNTAX_RULE
from crane_jupyterlab.models import Finding, QuickTrial, TrialLoop, TrialOutcome, Verdict

NAME = Finding(rule="undefined-name", message="NameError: name 'y' is not defined", line=1)
KEY = Finding(rule="missing-key", message="KeyError: 'b'", line=2)
SYNTAX = Finding(rule=SYNTAX_RULE, message="SyntaxError: invalid syntax (line 2).", line=2)


def test_a_syntax_error_is_certain_and_alone() -> None:
    verdict = policy.certain([NAME, SYNTAX])
    assert verdict is not None and verdict.detection and verdict.source == "syntax"
    assert verdict.findings == [SYNTAX] and "cannot run until it parses" in verdict.reasoning


def test_certain_findings_decide_and_each_is_named() -> None:
    verdict = policy.certain([NAME, KEY])
    assert verdict is not None and verdict.detection and verdict.source == "checks"
    assert verdict.findings == [NAME, KEY] and verdict.reasoning == f"{NAME.message}\n{KEY.message}"


def test_only_a_model_decides_when_nothing_is_certain() -> None:
    assert policy.certain([]) is None
    quiet = policy.without_model([])
    assert not quiet.detection and quiet.source == "checks" and "cannot prove" in quiet.reasoning
    assert policy.without_model([KEY]) == policy.certain([KEY])


def test_a_prediction_is_marked_as_the_models() -> None:
    prediction = Verdict(detection=True, reasoning="looks off", source="checks", findings=[KEY], votes=[True])
    verdict = policy.from_model(prediction)
    assert verdict.source == "llm" and verdict.findings == [] and verdict.votes == [True]


def _quick(status: str, crash: str | None) -> TrialOutcome:
    loops = [TrialLoop(line=2, kind="for", iterations=2, cut=True, total=100)]
    exception = {"exception": "RuntimeError", "message": "shapes", "line": 9} if status == "crashed" else {}
    return TrialOutcome(status=status, quick=QuickTrial(k=2, loops=loops, cut=True, crash=crash), **exception)


def test_a_quick_trial_decides_only_with_a_crash_that_does_not_depend_on_the_cut() -> None:
    certain = policy.certain([], _quick("crashed", "certain"))
    assert certain is not None and certain.detection and certain.source == "quick"
    assert "loops cut to their first 2 iterations" in certain.reasoning and "line 9" in certain.reasoning
    # One that may depend on the cut is a warning in the model's rank, never certain; the checks outrank it.
    depends = _quick("crashed", "depends")
    assert policy.certain([], depends) is None
    maybe = policy.without_model([], depends)
    assert maybe.detection and maybe.source == "quick_may"
    assert policy.without_model([KEY], depends).source == "checks"
    # A shortened run that finished, or failed as shortened runs do, says nothing.
    for quiet in (_quick("finished", None), _quick("crashed", "shortened")):
        assert policy.certain([], quiet) is None and policy.maybe_quick(quiet) is None
        assert not policy.from_trial_alone(quiet).detection
    # A whole run that finished is still an observed "no crash".
    whole = TrialOutcome(status="finished", quick=QuickTrial(k=2, cut=False))
    seen = policy.certain([], whole)
    assert seen is not None and not seen.detection and seen.source == "trial"


def test_a_library_call_run_on_a_sample_is_named_as_such() -> None:
    fit = TrialLoop(line=2, kind="fit", iterations=400, cut=True, total=30000)
    sampled = TrialOutcome(
        status="crashed", exception="ValueError", message="X has 4 features", line=3,
        quick=QuickTrial(k=2, loops=[fit], cut=True, crash="certain"),
    )  # fmt: skip
    certain = policy.certain([], sampled)
    assert certain is not None and certain.source == "quick"
    assert "(long library calls run on a sample of their rows)" in certain.reasoning
    maybe = policy.maybe_quick(
        sampled.model_copy(update={"quick": sampled.quick.model_copy(update={"crash": "depends"})})
    )
    assert maybe is not None and "reads what the library calls run on a sample computed" in maybe.reasoning
    both = _quick("crashed", "certain")
    assert both.quick is not None
    both.quick.loops.append(fit)
    assert "first 2 iterations, long library calls run on a sample" in policy.cut_words(both)


def test_an_observed_message_is_said_without_terminal_codes() -> None:
    # As the kernel reports it: Keras bolds names (CSI), some libraries link their docs (OSC 8).
    raw = {
        "status": "crashed",
        "exception": "ValueError",
        "message": 'Input 0 of layer \x1b[1m"dense"\x1b[0m: see \x1b]8;;https://keras.io\x07docs\x1b]8;;\x07',
        "line": 1,
    }
    trial = TrialOutcome.model_validate(raw)
    assert trial.message == 'Input 0 of layer "dense": see docs'
    verdict = policy.certain([], trial)
    assert verdict is not None and verdict.detection and "\x1b" not in verdict.reasoning
    assert Finding(rule="r", message="\x1b[31mred\x1b[0m", evidence=["\x1b[1mx\x1b[0m"]).model_dump() == {
        "rule": "r", "message": "red", "evidence": ["x"], "line": None
    }  # fmt: skip
