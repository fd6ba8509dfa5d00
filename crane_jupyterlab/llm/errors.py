"""Typed failures of a model call, with messages safe to show a user.

Every backend turns whatever its client raised into one `LLMError` whose `kind` the UI and the
benchmarks can act on (ask for a key, wait and retry, pick another model, ...). Messages pass through
`scrub` so an API key echoed by a provider's error text never reaches a log line or the browser.
"""

from __future__ import annotations

import re
from typing import Literal

ErrorKind = Literal["auth", "timeout", "rate_limit", "malformed", "unreachable", "bad_request", "unknown"]

# Key-like tokens: provider prefixes (sk-..., sk-ant-..., AIza..., gsk_..., hf_..., xai-...), bearer
# credentials, `key=...` query/config fragments, and any long opaque token. Each is replaced whole.
_KEY_PATTERNS = (
    re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{6,}"),
    re.compile(r"(?i)\b((?:api[_-]?)?key|token|secret|password|authorization)(\s*[=:]\s*)['\"]?[^\s'\",&]+"),
    re.compile(r"\b(?:sk|pk|rk|gsk|hf|xai|ak)[-_][A-Za-z0-9._-]{6,}"),
    re.compile(r"\bAIza[0-9A-Za-z_-]{10,}"),
    # Long mixed letter+digit runs (most raw keys) but not plain words, paths or hex-free numbers.
    re.compile(r"\b(?=[A-Za-z0-9_-]*[0-9])(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{32,}\b"),
)

MAX_MESSAGE_CHARS = 500


def scrub(text: str, secrets: tuple[str, ...] = ()) -> str:
    """Return `text` with anything key-like (and each of `secrets` verbatim) replaced by `***`."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    for pattern in _KEY_PATTERNS:
        if pattern.groups >= 2:
            text = pattern.sub(lambda m: f"{m.group(1)}{m.group(2)}***", text)
        else:
            text = pattern.sub("***", text)
    if len(text) > MAX_MESSAGE_CHARS:
        text = text[: MAX_MESSAGE_CHARS - 1] + "…"
    return text


class LLMError(Exception):
    """A model call that produced no usable answer. `str(err)` is already scrubbed."""

    kind: ErrorKind = "unknown"

    def __init__(self, message: str, *, kind: ErrorKind | None = None, secrets: tuple[str, ...] = ()):
        if kind is not None:
            self.kind = kind
        self.message = scrub(message, secrets)
        super().__init__(self.message)

    def to_dict(self) -> dict[str, str]:
        """The JSON shape the server and the benchmark reports use."""
        return {"kind": self.kind, "message": self.message}


class AuthError(LLMError):
    kind: ErrorKind = "auth"


class LLMTimeout(LLMError):
    kind: ErrorKind = "timeout"


class RateLimited(LLMError):
    kind: ErrorKind = "rate_limit"


class MalformedAnswer(LLMError):
    kind: ErrorKind = "malformed"


class Unreachable(LLMError):
    kind: ErrorKind = "unreachable"


class BadRequest(LLMError):
    kind: ErrorKind = "bad_request"


_BY_KIND: dict[str, type[LLMError]] = {
    cls.kind: cls for cls in (AuthError, LLMTimeout, RateLimited, MalformedAnswer, Unreachable, BadRequest)
}


def error_of_kind(kind: ErrorKind, message: str, secrets: tuple[str, ...] = ()) -> LLMError:
    """Build the subclass matching `kind` (plain `LLMError` for `unknown`)."""
    return _BY_KIND.get(kind, LLMError)(message, kind=kind, secrets=secrets)
