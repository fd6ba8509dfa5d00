"""An LLM judge of crash diagnoses: does a detected crash's reasoning name the ground-truth cause?

The CRANE-LLM paper scores detection *and diagnosis*: a crash counts as diagnosed when an LLM judge,
comparing the detector's reasoning with the case's ground-truth diagnosis, finds the same cause (the
judge was checked against human labels). This is our judge, written from that description: its prompt
(`JUDGE_SYSTEM_PROMPT`), its answer `{"reasoning": str, "label": "correct" | "partially_correct" |
"wrong"}` validated with pydantic like the predictor's (`llm/answer.py`: the same repairs, nothing
guessed), any litellm model.

Labels are ordered wrong < partially_correct < correct. With `votes` = n samples (n odd), the judgement
is the median label; a sample that failed (timeout, malformed answer, ...) is unknown, and the judgement
must be the same whatever label it would have had: the highest label that a majority of n reaches or
exceeds must equal the lowest label that a majority of n reaches or stays under. Otherwise the judge
reached no decision and the case's diagnosis is not scored (the error says why). With no failure the
median always exists (n is odd), so votes never tie.
"""

from __future__ import annotations

import asyncio
import collections
import time
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from ..llm.answer import Reasoning, extract_object, schema_errors
from ..llm.errors import LLMError, MalformedAnswer
from ..llm.litellm_backend import LiteLLMBackend
from ..llm.votes import check_votes

Label = Literal["wrong", "partially_correct", "correct"]
LABELS: tuple[Label, ...] = ("wrong", "partially_correct", "correct")  # ascending

JUDGE_SYSTEM_PROMPT = """\
You grade crash diagnoses for Python machine-learning notebooks. A detector read a notebook before a \
cell ran, correctly predicted that the cell raises an exception, and explained why. You get the cell, \
the ground-truth diagnosis (what really makes it crash) and the detector's explanation. Decide whether \
the explanation identifies the same cause.

Reply with exactly one JSON object and nothing else, no code fence:
{"reasoning": "<one sentence>", "label": "correct" | "partially_correct" | "wrong"}

Labels:
- "correct": the explanation names the ground-truth cause: the same failing operation for the same \
reason (the same missing column or key, mismatched shape or size, wrong type, undefined name, misused \
argument, ...). Wording, detail and the exception's name may differ.
- "partially_correct": it points at the right operation or object but gives an incomplete or different \
reason, or it names the true cause among other causes that are wrong.
- "wrong": it blames another cause, or names no concrete cause.
Grade only the cause, not the style; an explanation that only says something might fail names no cause."""

JUDGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"reasoning": {"type": "string"}, "label": {"type": "string", "enum": list(LABELS)}},
    "required": ["reasoning", "label"],
    "additionalProperties": False,
}


class JudgeAnswer(BaseModel):
    """One judge sample, strictly typed."""

    model_config = ConfigDict(extra="ignore")

    reasoning: Reasoning
    label: Label

    @field_validator("label", mode="before")
    @classmethod
    def _one_of_three(cls, value: Any) -> Any:
        # "Partially correct" / "partially-correct" have one reading; anything else is not a label.
        if isinstance(value, str):
            return "_".join(value.strip().lower().replace("-", " ").split())
        return value


def parse_judgement(text: str | None) -> JudgeAnswer:
    """Validate a raw judge completion; `MalformedAnswer` when it has no single reading."""
    obj = extract_object(text)
    try:
        return JudgeAnswer.model_validate(obj)
    except ValidationError as exc:
        raise MalformedAnswer(f"the judge's answer does not fit the schema ({schema_errors(exc)})") from None


def judge_messages(target_cell: str, diagnosis: str, reasoning: str) -> list[dict[str, str]]:
    """The judge's chat messages for one detected crash."""
    fence = "```"
    while fence in target_cell:
        fence += "`"
    user = (
        f"Target cell:\n{fence}python\n{target_cell.strip(chr(10))}\n{fence}\n\n"
        f"Ground-truth diagnosis:\n{diagnosis.strip()}\n\n"
        f"Detector's explanation:\n{reasoning.strip()}\n\n"
        "Grade the explanation. Answer with the JSON object only."
    )
    return [{"role": "system", "content": JUDGE_SYSTEM_PROMPT}, {"role": "user", "content": user}]


def decide(labels: Sequence[Label | None], n: int) -> Label | None:
    """The median of `n` samples' labels when the failed ones (None) cannot change it, else None."""
    check_votes(n)
    if len(labels) != n:
        raise ValueError(f"expected {n} samples, got {len(labels)}")
    rank = {label: i for i, label in enumerate(LABELS)}
    valid = [rank[label] for label in labels if label is not None]
    need = n // 2 + 1
    at_least = [r for r in range(len(LABELS)) if sum(v >= r for v in valid) >= need]
    at_most = [r for r in range(len(LABELS)) if sum(v <= r for v in valid) >= need]
    if not at_least or not at_most or max(at_least) != min(at_most):
        return None
    return LABELS[max(at_least)]


class Judgement(BaseModel):
    """The judge's verdict on one detected crash, as the benchmark rows store it."""

    label: Label
    reasoning: str  # the first sample's reasoning among those with the decided label
    votes: list[Label]  # every valid sample's label, in sample order
    failed: int = 0  # samples that gave no valid answer
    model: str
    latency_ms: float | None = None


class LLMJudge:
    """Grades reasoning against a ground-truth diagnosis with any litellm model (`votes` samples)."""

    def __init__(
        self,
        model: str,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        votes: int = 1,
        temperature: float | None = None,
        max_tokens: int | None = None,
        timeout: float = 60.0,
        response_format: str = "auto",
    ):
        self.votes = check_votes(votes)
        self.client = LiteLLMBackend(
            model,
            api_base=api_base,
            api_key=api_key,
            temperature=temperature,
            max_tokens=max_tokens,
            timeout=timeout,
            response_format=response_format,
            cache=None,
            schema=("diagnosis_judgement", JUDGE_SCHEMA),
        )
        self.model = self.client.model

    def describe(self) -> dict[str, Any]:
        """Who judged (the server's address is not part of it: a local server may move); a resumed run
        re-judges rows judged by another."""
        return {"model": self.model, "votes": self.votes}

    async def _sample(self, messages: list[dict[str, str]]) -> JudgeAnswer | LLMError:
        try:
            done = await self.client.complete(messages)
            return parse_judgement(done.content)
        except MalformedAnswer as error:
            return MalformedAnswer(f"judge {self.model}: {error.message}")
        except LLMError as error:
            return error

    async def judge(self, target_cell: str, diagnosis: str, reasoning: str) -> Judgement:
        """Grade one explanation; raises the samples' `LLMError` when they reach no decision."""
        messages = judge_messages(target_cell, diagnosis, reasoning)
        started = time.perf_counter()
        samples = await asyncio.gather(*(self._sample(messages) for _ in range(self.votes)))
        latency = round((time.perf_counter() - started) * 1000, 1)
        answers = [s if isinstance(s, JudgeAnswer) else None for s in samples]
        label = decide([a.label if a else None for a in answers], self.votes)
        errors = [s for s in samples if isinstance(s, LLMError)]
        if label is None:
            kind, _ = collections.Counter(e.kind for e in errors).most_common(1)[0]
            first = next(e for e in errors if e.kind == kind)
            if self.votes == 1:
                raise first
            labels = ", ".join(a.label for a in answers if a) or "none"
            raise type(first)(
                f"{len(errors)} of {self.votes} judge samples failed and the valid labels ({labels}) "
                f"leave the median open: {first.message}",
                kind=first.kind,
            )
        valid = [a for a in answers if a is not None]
        return Judgement(
            label=label,
            reasoning=next(a.reasoning for a in valid if a.label == label),
            votes=[a.label for a in valid],
            failed=len(errors),
            model=self.model,
            latency_ms=latency,
        )
