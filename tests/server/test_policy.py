"""The one verdict policy (crane_jupyterlab.policy), used by the server and crane-bench alike."""

from __future__ import annotations

from crane_jupyterlab import policy
from crane_jupyterlab.checks import SYNTAX_RULE
from crane_jupyterlab.models import Finding, Verdict

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
