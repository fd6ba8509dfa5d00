"""Typed LLM errors: kinds, and no API key ever in a message."""

from __future__ import annotations

import pytest

from crane_jupyterlab.llm.errors import (
    AuthError,
    LLMError,
    MalformedAnswer,
    RateLimited,
    error_of_kind,
    scrub,
)

KEYS = [
    "sk-proj-Abc123def456GHI789jkl012MNO345pqr678",
    "sk-ant-api03-AbCdEf0123456789-xyz",
    "AIzaSyD-1234567890abcdefghijklmnopqrs",
    "gsk_0123456789abcdefABCDEF",
    "hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345",
    "3f9a8c7e6d5b4a3928170f6e5d4c3b2a1908f7e6",  # a bare 40-char hex key
]


@pytest.mark.parametrize("key", KEYS)
def test_scrub_removes_key_like_tokens(key: str) -> None:
    text = scrub(f"Incorrect API key provided: {key}. You can find your key at the dashboard.")
    assert key not in text
    assert key[:12] not in text
    assert "Incorrect API key provided" in text


@pytest.mark.parametrize(
    "text",
    [
        "request failed: Authorization: Bearer abc.def-ghi_123",
        "https://host/v1/models?key=secretvalue123&alt=json",
        "api_key='hunter2hunter2'",
        "x-api-key: plainsecretvalue",
    ],
)
def test_scrub_removes_credentials_in_context(text: str) -> None:
    cleaned = scrub(text)
    for secret in ("abc.def-ghi_123", "secretvalue123", "hunter2hunter2", "plainsecretvalue"):
        assert secret not in cleaned


def test_scrub_removes_given_secrets_verbatim_and_keeps_ordinary_text() -> None:
    assert scrub("the key was pass-word", secrets=("pass-word",)) == "the key was ***"
    plain = "KeyError: 'Age' in df['Age'] at /home/user/project/train_model.py line 12"
    assert scrub(plain) == plain


def test_long_messages_bounded() -> None:
    assert len(scrub("x " * 2000)) <= 500


def test_errors_carry_kind_and_scrubbed_message() -> None:
    key = KEYS[0]
    err = AuthError(f"rejected {key}")
    assert isinstance(err, LLMError)
    assert err.kind == "auth"
    assert key not in str(err) and key not in err.message
    assert err.to_dict() == {"kind": "auth", "message": str(err)}
    assert RateLimited("slow down").kind == "rate_limit"
    assert MalformedAnswer("bad").kind == "malformed"


@pytest.mark.parametrize(
    "kind", ["auth", "timeout", "rate_limit", "malformed", "unreachable", "bad_request", "unknown"]
)
def test_error_of_kind(kind: str) -> None:
    err = error_of_kind(kind, "m")  # type: ignore[arg-type]
    assert err.kind == kind
    assert isinstance(err, LLMError)
