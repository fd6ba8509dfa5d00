"""Majority vote over n sampled answers.

Rule (used by every backend that samples):
- n must be odd and >= 1, so two outcomes can never tie; an even n is rejected up front.
- A verdict needs a strict majority of ALL n samples: at least n // 2 + 1 valid answers that agree.
  Failed samples (timeouts, malformed answers, ...) count as abstentions, and because the winner
  needs a majority of n, no way the failed samples could have gone would flip it. With n = 5 that is
  3 agreeing answers; with n = 1 the single answer.
- Otherwise no verdict: the caller raises the failures' error (nothing is guessed).
- The reasoning shown is that of the first answer (in sample order) on the winning side.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .answer import Answer


def check_votes(n: int) -> int:
    """Validate a vote count, returning it; raise `ValueError` with the reason otherwise."""
    if isinstance(n, bool) or not isinstance(n, int):
        raise ValueError(f"votes must be an odd integer >= 1, got {n!r}")
    if n < 1:
        raise ValueError(f"votes must be an odd integer >= 1, got {n}")
    if n % 2 == 0:
        raise ValueError(f"votes must be odd so the majority is strict (got {n}); use {n - 1} or {n + 1}")
    return n


@dataclass(frozen=True)
class Majority:
    detection: bool
    reasoning: str
    votes: list[bool]  # every valid answer, in sample order


def majority(answers: Sequence[Answer | None], n: int) -> Majority | None:
    """The strict majority of `n` samples, or None when no side reaches n // 2 + 1.

    `answers` holds one entry per sample, None for a sample that failed.
    """
    check_votes(n)
    if len(answers) != n:
        raise ValueError(f"expected {n} samples, got {len(answers)}")
    valid = [a for a in answers if a is not None]
    need = n // 2 + 1
    for side in (True, False):
        agreeing = [a for a in valid if a.detection is side]
        if len(agreeing) >= need:
            return Majority(side, agreeing[0].reasoning, [a.detection for a in valid])
    return None
