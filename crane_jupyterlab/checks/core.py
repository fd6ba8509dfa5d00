"""`check(source, runtime)`: certain crashes of a cell, found without a model."""

from __future__ import annotations

import sys
from typing import Any

from ..models import Finding
from .cell import parse_cell
from .context import CellContext
from .flow import walk_cell
from .junobench_adapter import from_junobench
from .rules import RULES
from .view import RuntimeView, from_probe

FORMATS = ("probe", "junobench")


def build_view(
    source: str, runtime: dict[str, Any] | None, runtime_format: str, executed_cells: list[str] | None
) -> RuntimeView:
    if runtime_format not in FORMATS:
        raise ValueError(f"runtime_format must be one of {', '.join(FORMATS)}, not {runtime_format!r}")
    if runtime_format == "junobench":
        return from_junobench(runtime, source, executed_cells)
    return from_probe(runtime) if isinstance(runtime, dict) else RuntimeView()


def _syntax_finding(source: str, view: RuntimeView) -> Finding | None:
    _, error = parse_cell(source)
    if error is None:
        return None
    # The kernel compiles the cell with its own Python: trust our parser only on the same version,
    # or when the kernel's parser agrees that the cell is broken.
    ours = ".".join(str(v) for v in sys.version_info[:2])
    kernel = ".".join((view.python or "").split(".")[:2])
    if view.source == "probe" and kernel and kernel != ours and view.syntax_error is None:
        return None
    where = f" (line {error.line})" if error.line else ""
    return Finding(
        rule="syntax-error",
        message=f"SyntaxError: {error.msg}{where}.",
        evidence=[f"Python {ours} cannot compile the cell: {error.msg}{where}"],
        line=error.line,
    )


def check(
    source: str,
    runtime: dict[str, Any] | None,
    runtime_format: str = "probe",
    executed_cells: list[str] | None = None,
) -> list[Finding]:
    """Findings for crashes that are certain to happen when `source` runs; [] when unsure.

    `runtime` is a probe result (`runtime_format="probe"`) or a JunoBench `runtime_info_obj`
    (`"junobench"`; `executed_cells` then helps decide which names exist). Raises ValueError for an
    unknown format or a source that is not a str.
    """
    if not isinstance(source, str):
        raise ValueError("source must be a str")
    view = build_view(source, runtime, runtime_format, executed_cells)
    syntax = _syntax_finding(source, view)
    if syntax is not None:
        return [syntax]
    tree, _ = parse_cell(source)
    if tree is None:
        return []  # our Python cannot parse it, the kernel's may: nothing certain to say
    ctx = CellContext(source, tree, view, walk_cell(tree, view.is_library, view.modules.__contains__))
    findings: list[Finding] = []
    for rule in RULES:
        findings.extend(rule(ctx))
    findings.sort(key=lambda f: f.line or 0)
    return findings
