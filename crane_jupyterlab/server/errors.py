"""The service's typed failures; each `AnalysisError` carries the HTTP status its handler answers with."""

from __future__ import annotations


class AnalysisError(Exception):
    """Base of the service's typed failures; `status` is the HTTP status the handler answers with."""

    status = 500

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class KernelNotFound(AnalysisError):
    status = 404


class KernelBusy(AnalysisError):
    status = 409


class ModelNotAllowed(AnalysisError):
    status = 403


class ExtractionTimeout(AnalysisError):
    status = 504


class ExtractionFailed(AnalysisError):
    status = 502


class Superseded(Exception):
    """A newer request for the same cell replaced this one."""


class ModelFailure(Exception):
    """The model failed; `kind` is one of the LLM error kinds (auth, timeout, rate_limit, ...)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


class TrialsOff(AnalysisError):
    """Trial runs are off on this server (c.CraneExtension.trial): nothing runs notebook code in a sandbox."""

    status = 403
