"""Parse and validate one model answer: `{"reasoning": str, "detection": bool}`.

Repairs only what has a single reading: a code fence around the object, prose before or after exactly
one JSON object, raw control characters (newline, tab) inside strings, and `"true"`/`"false"` written
as strings. Anything else (no object, two objects, a missing field, `"maybe"`, a truncated answer) is
a `MalformedAnswer`, never a guess.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError, field_validator

from .errors import MalformedAnswer

_FENCE = re.compile(r"^\s*```[A-Za-z0-9_-]*\s*\n?(.*?)\n?\s*```\s*$", re.DOTALL)
_PREVIEW_CHARS = 120
# strict=False lets a raw newline or tab stand inside a string (small models emit them); it has one
# reading, so accepting it is a repair, not a guess.
_DECODER = json.JSONDecoder(strict=False)


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("reasoning is empty")
    return value.strip()


# A model's reasoning, stripped; blank is malformed (the predictor's answer and the judge's alike).
Reasoning = Annotated[str, AfterValidator(_not_blank)]


class Answer(BaseModel):
    """One sample's answer, strictly typed."""

    model_config = ConfigDict(extra="ignore")

    reasoning: Reasoning
    detection: bool

    @field_validator("detection", mode="before")
    @classmethod
    def _bool_only(cls, value: Any) -> Any:
        # pydantic's lax mode would turn 1, "yes", "on" into True; only a real boolean or the exact
        # words true/false count, so a model that answers a number is malformed, not a crash.
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
        raise ValueError("detection must be true or false")


# The JSON schema sent to providers that support structured output.
ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reasoning": {"type": "string"},
        "detection": {"type": "boolean"},
    },
    "required": ["reasoning", "detection"],
    "additionalProperties": False,
}


def _preview(text: str) -> str:
    # repr() keeps control and odd whitespace characters visible: they are often why JSON failed.
    shown = text if len(text) <= _PREVIEW_CHARS else text[: _PREVIEW_CHARS - 1] + "…"
    return repr(shown)


def _json_objects(text: str) -> list[tuple[Any, int, int]]:
    """Every top-level JSON object embedded in `text`, with its span."""
    decoder = _DECODER
    found: list[tuple[Any, int, int]] = []
    pos = 0
    while True:
        start = text.find("{", pos)
        if start < 0:
            return found
        try:
            obj, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            pos = start + 1
            continue
        if isinstance(obj, dict):
            found.append((obj, start, end))
        pos = end


def extract_object(text: str | None) -> dict[str, Any]:
    """The one JSON object of a raw completion (the repairs of the module docstring); `MalformedAnswer`
    when there is none, or more than one, or it is not an object."""
    if text is None or not text.strip():
        raise MalformedAnswer("the model returned an empty answer")
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1).strip()
    try:
        obj: Any = _DECODER.decode(body)
    except json.JSONDecodeError:
        objects = _json_objects(body)
        if len(objects) != 1:
            reason = "no JSON object" if not objects else f"{len(objects)} JSON objects"
            raise MalformedAnswer(f"the model's answer holds {reason}: {_preview(text)}") from None
        obj = objects[0][0]
    if not isinstance(obj, dict):
        raise MalformedAnswer(f"the model's answer is not a JSON object: {_preview(text)}")
    return obj


def schema_errors(exc: ValidationError) -> str:
    """A pydantic validation error as `field: reason, ...` for a `MalformedAnswer` message."""
    return ", ".join(f"{'.'.join(map(str, e['loc'])) or 'answer'}: {e['msg']}" for e in exc.errors())


def parse_answer(text: str | None) -> Answer:
    """Validate a raw completion; raise `MalformedAnswer` when it has no single reading."""
    obj = extract_object(text)
    try:
        return Answer.model_validate(obj)
    except ValidationError as exc:
        raise MalformedAnswer(f"the model's answer does not fit the schema ({schema_errors(exc)})") from None
