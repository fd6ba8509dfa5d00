"""Helpers of the checks' tests: a cell checked against a real namespace through the real probe."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from crane_jupyterlab.checks import check
from crane_jupyterlab.kernel import probe
from crane_jupyterlab.models import Finding

Checker = Callable[[str, dict[str, Any]], list[str]]


def findings_for(source: str, ns: dict[str, Any]) -> list[Finding]:
    """The findings of `source` against namespace `ns`, with the facts the probe reads from it."""
    return check(source, probe.run(source, {}, namespace=ns))


@pytest.fixture
def rules() -> Checker:
    """rules(source, ns): the rule ids of the findings."""
    return lambda source, ns: [f.rule for f in findings_for(source, ns)]


@pytest.fixture
def messages() -> Checker:
    """messages(source, ns): the messages of the findings."""
    return lambda source, ns: [f.message for f in findings_for(source, ns)]
