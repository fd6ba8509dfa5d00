"""The diagnosis judge: its answer's validation, the median over votes, failures, and judged JunoBench runs
on the stub server (the network edge)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from llm_stub import Reply, StubLLM
from support import SHARED

from crane_jupyterlab.bench.cli import main
from crane_jupyterlab.bench.judge import LLMJudge, decide, judge_messages, parse_judgement
from crane_jupyterlab.llm.errors import LLMTimeout, MalformedAnswer

JUNOBENCH = SHARED / "junobench"
needs_data = pytest.mark.skipif(
    not (JUNOBENCH / "cases.jsonl").is_file() or not (JUNOBENCH / "paper_outputs.jsonl").is_file(),
    reason=f"JunoBench data not found at {JUNOBENCH} (shared/ is not in the repository)",
)


def verdict(label: str, reasoning: str = "same cause", latency: float | None = None) -> Reply:
    return Reply(content=json.dumps({"reasoning": reasoning, "label": label}), latency=latency)


# ---------------------------------------------------------------- the answer


def test_valid_answers_and_their_one_reading_repairs() -> None:
    assert parse_judgement('{"reasoning": "r", "label": "correct"}').label == "correct"
    fenced = parse_judgement('```json\n{"reasoning": "r", "label": "Partially correct"}\n```')
    assert fenced.label == "partially_correct"
    assert parse_judgement('Here: {"reasoning": "r", "label": "WRONG", "extra": 1} done').label == "wrong"


@pytest.mark.parametrize(
    "text",
    [
        None,
        "",
        "correct",  # no object
        '{"reasoning": "r", "label": "maybe"}',  # not a label
        '{"reasoning": "r", "label": "reasoning wrong"}',  # the paper's fourth label is not ours
        '{"label": "correct"}',  # no reasoning
        '{"reasoning": "  ", "label": "correct"}',
        '{"reasoning": "r", "label": true}',
        '{"reasoning": "a", "label": "correct"} {"reasoning": "b", "label": "wrong"}',  # two answers
        '{"reasoning": "r", "label": "corr',  # cut off
    ],
)
def test_malformed_answers_are_errors_not_guesses(text: str | None) -> None:
    with pytest.raises(MalformedAnswer):
        parse_judgement(text)


def test_messages_carry_the_cell_the_diagnosis_and_the_reasoning() -> None:
    system, user = judge_messages("df['x']\n", "KeyError: no column x", "column x is missing")
    assert system["role"] == "system" and '"partially_correct"' in system["content"]
    assert "```python\ndf['x']\n```" in user["content"]
    assert "Ground-truth diagnosis:\nKeyError: no column x" in user["content"]
    assert "Detector's explanation:\ncolumn x is missing" in user["content"]


# ---------------------------------------------------------------- votes


def test_the_median_label_decides_and_never_ties() -> None:
    assert decide(["correct"], 1) == "correct"
    assert decide(["correct", "partially_correct", "wrong"], 3) == "partially_correct"
    assert decide(["correct", "wrong", "correct"], 3) == "correct"
    assert decide(["wrong", "correct", "correct", "wrong", "partially_correct"], 5) == "partially_correct"


def test_failed_samples_may_not_be_able_to_change_the_decision() -> None:
    assert decide(["correct", "correct", None], 3) == "correct"  # any third label keeps the median
    assert decide(["correct", "wrong", None], 3) is None  # the third label would decide: open
    assert decide(["correct", "partially_correct", None], 3) is None
    assert decide(["wrong", "wrong", "wrong", None, None], 5) == "wrong"
    assert decide([None], 1) is None and decide([None, None, None], 3) is None
    with pytest.raises(ValueError, match="odd"):
        decide(["correct", "wrong"], 2)
    with pytest.raises(ValueError, match="expected 3"):
        decide(["correct"], 3)


# ---------------------------------------------------------------- the judge on the stub


def make_judge(stub: StubLLM, **options: Any) -> LLMJudge:
    options.setdefault("response_format", "json_object_schema")
    return LLMJudge("openai/judge", api_base=stub.url, api_key="sk-test", **options)


def test_one_sample_judgement_and_its_request() -> None:
    with StubLLM(verdict("correct", "both blame column x")) as stub:
        judged = asyncio.run(make_judge(stub).judge("df['x']", "no column x", "x missing"))
    assert (judged.label, judged.reasoning, judged.votes, judged.failed) == (
        "correct",
        "both blame column x",
        ["correct"],
        0,
    )
    body = stub.requests[0]["body"]
    assert body["response_format"]["schema"]["properties"]["label"]["enum"] == [
        "wrong",
        "partially_correct",
        "correct",
    ]
    assert "no column x" in body["messages"][1]["content"]


def test_votes_take_the_median_and_keep_every_label() -> None:
    script = [verdict("correct"), verdict("wrong"), verdict("partially_correct", "half of it")]
    with StubLLM(script=list(script)) as stub:
        judged = asyncio.run(make_judge(stub, votes=3).judge("c", "d", "r"))
    assert judged.label == "partially_correct" and judged.reasoning == "half of it"
    assert sorted(judged.votes) == ["correct", "partially_correct", "wrong"]
    assert len(stub.requests) == 3


def test_a_malformed_single_answer_is_an_error() -> None:
    with (
        StubLLM(Reply(content="I think it is correct")) as stub,
        pytest.raises(MalformedAnswer, match="judge"),
    ):
        asyncio.run(make_judge(stub).judge("c", "d", "r"))


def test_a_timeout_is_an_error_unless_the_other_votes_decide() -> None:
    with StubLLM(verdict("correct"), latency=3.0) as stub, pytest.raises(LLMTimeout):
        asyncio.run(make_judge(stub, timeout=0.5).judge("c", "d", "r"))
    script = [verdict("wrong", latency=0.0), verdict("wrong", latency=0.0), verdict("correct", latency=3.0)]
    with StubLLM(script=script) as stub:
        judged = asyncio.run(make_judge(stub, votes=3, timeout=1.0).judge("c", "d", "r"))
    assert judged.label == "wrong" and judged.failed == 1 and judged.votes == ["wrong", "wrong"]
    open_ = [verdict("wrong", latency=0.0), verdict("correct", latency=0.0), Reply(content="??", latency=0.0)]
    with StubLLM(script=open_) as stub, pytest.raises(MalformedAnswer, match="leave the median open"):
        asyncio.run(make_judge(stub, votes=3).judge("c", "d", "r"))


# ---------------------------------------------------------------- judged JunoBench runs


def junobench(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, dict[str, Any]]:
    code = main(["junobench", "--cases", str(JUNOBENCH / "cases.jsonl"), "--json", "--quiet", *args])
    out, err = capsys.readouterr()
    last = out.strip().splitlines()[-1] if out.strip() else "{}"
    return code, out + err, json.loads(last) if last.startswith("{") else {}


@needs_data
def test_replayed_answers_judged_only_where_a_crash_was_detected(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "judged.jsonl"
    args = ["--backend", "replay", "--llm", "gpt-5", "--setting=+RT", "--limit", "30", "--out", str(out)]
    with StubLLM(verdict("correct")) as stub:
        code, printed, figures = junobench(
            capsys, *args, "--judge", "openai/judge", "--judge-api-base", stub.url
        )
        judged_calls = len(stub.requests)
    assert code == 0, printed
    assert judged_calls == figures["tp"] > 0  # neither misses nor false alarms go to the judge
    assert figures["correct"] == figures["tp"] and figures["unjudged"] == 0
    assert figures["dd_accuracy"] == figures["accuracy"]  # every detected crash judged correct
    assert "Detection and diagnosis (judge openai/judge" in printed and "NBspecific" in printed

    # Resumed with another judge: predictions are reused, only the detected crashes are judged again.
    with StubLLM(verdict("wrong")) as stub:
        code, printed, figures = junobench(
            capsys, *args, "--judge", "openai/other", "--judge-api-base", stub.url
        )
        assert len(stub.requests) == judged_calls
    assert figures["wrong"] == figures["tp"] and figures["correct"] == 0
    assert figures["dd_accuracy"] < figures["accuracy"]
    tn = figures["tn"]
    assert figures["dd_accuracy"] == round(100 * tn / figures["n"], 1)

    # The same judge again: nothing to do.
    with StubLLM(verdict("correct")) as stub:
        code, printed, again = junobench(
            capsys, *args, "--judge", "openai/other", "--judge-api-base", stub.url
        )
        assert stub.requests == []
    assert again["dd_accuracy"] == figures["dd_accuracy"]


@needs_data
def test_judge_failures_are_reported_and_not_scored(capsys: pytest.CaptureFixture[str]) -> None:
    with StubLLM(Reply(content="no json here")) as stub:
        code, printed, figures = junobench(
            capsys,
            "--backend",
            "replay",
            "--limit",
            "20",
            "--judge",
            "openai/judge",
            "--judge-api-base",
            stub.url,
        )
    assert code == 0, printed
    assert figures["unjudged"] == figures["tp"] > 0 and figures["correct"] == 0
    # Only the cases without a detected crash are scored for diagnosis then: TN right, FN and FP wrong.
    scored = figures["n"] - figures["unjudged"]
    assert figures["dd_accuracy"] == round(100 * figures["tn"] / scored, 1)
    assert "judged error malformed" not in printed  # --quiet: no progress lines
