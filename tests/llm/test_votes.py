"""Majority vote: odd n only, a verdict needs a strict majority of all n samples."""

from __future__ import annotations

import pytest

from crane_jupyterlab.llm.answer import Answer
from crane_jupyterlab.llm.votes import check_votes, majority


def a(detection: bool, reasoning: str = "") -> Answer:
    return Answer(reasoning=reasoning or f"says {detection}", detection=detection)


@pytest.mark.parametrize("n", [1, 3, 5, 7])
def test_odd_counts_accepted(n: int) -> None:
    assert check_votes(n) == n


@pytest.mark.parametrize("n", [2, 4, 6])
def test_even_counts_rejected_with_a_suggestion(n: int) -> None:
    with pytest.raises(ValueError, match=f"odd.*use {n - 1} or {n + 1}"):
        check_votes(n)


@pytest.mark.parametrize("n", [0, -1, True, 2.0, "3"])
def test_nonsense_counts_rejected(n: object) -> None:
    with pytest.raises(ValueError, match="odd integer"):
        check_votes(n)  # type: ignore[arg-type]


def test_single_vote() -> None:
    result = majority([a(True, "boom")], 1)
    assert result is not None and result.detection is True and result.votes == [True]
    assert result.reasoning == "boom"
    assert majority([None], 1) is None


def test_majority_reasoning_is_first_winning_answer() -> None:
    result = majority([a(False, "fine"), a(True, "first crash"), a(True, "second"), a(False), a(True)], 5)
    assert result is not None
    assert result.detection is True
    assert result.reasoning == "first crash"
    assert result.votes == [False, True, True, False, True]


def test_failures_tolerated_while_a_side_has_a_majority_of_n() -> None:
    result = majority([a(False), None, a(False), None, a(False)], 5)
    assert result is not None and result.detection is False and result.votes == [False, False, False]


def test_no_verdict_when_failures_could_flip_it() -> None:
    # 2 vs 1 among valid answers, but 2 failures could have made it 2 vs 3.
    assert majority([a(True), a(True), a(False), None, None], 5) is None
    assert majority([a(True), None, None, None, None], 5) is None
    assert majority([None, None, None], 3) is None


def test_sample_count_must_match() -> None:
    with pytest.raises(ValueError, match="expected 5 samples"):
        majority([a(True)], 5)
    with pytest.raises(ValueError, match="odd"):
        majority([a(True), a(True)], 2)
