"""Validating one model answer: strict schema, repairs only where unambiguous."""

from __future__ import annotations

import pytest

from crane_jupyterlab.llm.answer import parse_answer
from crane_jupyterlab.llm.errors import MalformedAnswer

GOOD = '{"reasoning": "df has no column b.", "detection": true}'


def test_plain_json() -> None:
    answer = parse_answer(GOOD)
    assert answer.detection is True
    assert answer.reasoning == "df has no column b."


@pytest.mark.parametrize(
    "text",
    [
        f"```json\n{GOOD}\n```",
        f"```\n{GOOD}\n```",
        f"  ```JSON\n{GOOD}```  ",
        f"Here is my answer:\n{GOOD}\nHope this helps.",
        f"{GOOD} ",
    ],
)
def test_unambiguous_wrappers_repaired(text: str) -> None:
    assert parse_answer(text).detection is True


@pytest.mark.parametrize(("raw", "expected"), [('"true"', True), ('"False"', False), ("false", False)])
def test_boolean_words_accepted(raw: str, expected: bool) -> None:
    assert parse_answer('{"reasoning": "r", "detection": ' + raw + "}").detection is expected


def test_extra_fields_ignored() -> None:
    assert parse_answer('{"reasoning": "r", "detection": false, "confidence": 0.9}').detection is False


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("", "empty"),
        (None, "empty"),
        ("   ", "empty"),
        ("The cell will crash.", "no JSON object"),
        ('{"reasoning": "x", "detec', "no JSON object"),  # truncated
        ('{"reasoning": "the frame lacks', "no JSON object"),
        (f"{GOOD}\n{GOOD}", "2 JSON objects"),  # which one? not ours to guess
        ('{"reasoning": "r"}', "detection"),
        ('{"detection": true}', "reasoning"),
        ('{"reasoning": "  ", "detection": true}', "reasoning"),
        ('{"reasoning": "r", "detection": "maybe"}', "detection"),
        ('{"reasoning": "r", "detection": 1}', "detection"),
        ('{"reasoning": "r", "detection": null}', "detection"),
        ('{"reasoning": 5, "detection": true}', "reasoning"),
        ('[{"reasoning": "r", "detection": true}]', "not a JSON object"),
        ('"true"', "not a JSON object"),
    ],
)
def test_malformed_answers_are_errors_not_guesses(text: str | None, why: str) -> None:
    with pytest.raises(MalformedAnswer) as info:
        parse_answer(text)
    assert info.value.kind == "malformed"
    assert why in str(info.value)


def test_raw_newline_inside_a_string_accepted() -> None:
    answer = parse_answer('{"reasoning": "first line\nsecond\tline", "detection": true}')
    assert answer.reasoning == "first line\nsecond\tline"


def test_error_preview_shows_invisible_characters() -> None:
    with pytest.raises(MalformedAnswer) as info:
        parse_answer('{"reasoning": "r",\u00a0"detection": true}')
    assert "\\xa0" in str(info.value)
