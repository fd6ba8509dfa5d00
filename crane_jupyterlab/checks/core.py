"""`check(source, runtime)`: certain crashes of a cell, found without a model."""

from __future__ import annotations

import ast
import sys
from typing import Any

from ..models import Finding
from .cell import parse_cell
from .context import CellContext
from .evaluate import Evaluator
from .flow import ImportSite, Site, walk_cell
from .rules import RULES
from .view import RuntimeView, from_probe

# The rule of the one finding a cell that does not compile gets.
SYNTAX_RULE = "syntax-error"


def _syntax_finding(source: str, view: RuntimeView) -> Finding | None:
    _, error = parse_cell(source)
    if error is None:
        return None
    # The kernel compiles the cell with its own Python and its shell's transforms (automagic, aliases,
    # extensions): where its probe parsed the cell, it parses; trust our parser alone only on the same
    # Python version, or when the kernel's parser agrees that the cell is broken.
    if view.source == "probe" and view.parsed:
        return None
    ours = ".".join(str(v) for v in sys.version_info[:2])
    kernel = ".".join((view.python or "").split(".")[:2])
    if view.source == "probe" and kernel and kernel != ours and view.syntax_error is None:
        return None
    where = f" (line {error.line})" if error.line else ""
    return Finding(
        rule=SYNTAX_RULE,
        message=f"SyntaxError: {error.msg}{where}.",
        evidence=[f"Python {ours} cannot compile the cell: {error.msg}{where}"],
        line=error.line,
    )


def check(source: str, runtime: dict[str, Any] | None) -> list[Finding]:
    """Findings for crashes that are certain to happen when `source` runs; [] when unsure.

    `runtime` is a probe result (docs/architecture.md section 1), or None when there is none. Raises
    ValueError for a source that is not a str.
    """
    return check_view(source, from_probe(runtime) if isinstance(runtime, dict) else RuntimeView())


def check_view(source: str, view: RuntimeView) -> list[Finding]:
    """`check` on a runtime view from any producer (the probe, or a benchmark's recorded facts)."""
    if not isinstance(source, str):
        raise ValueError("source must be a str")
    syntax = _syntax_finding(source, view)
    if syntax is not None:
        return [syntax]
    tree, _ = parse_cell(source)
    if tree is None:
        return []  # our Python cannot parse it, the kernel's may: nothing certain to say
    ctx = cell_context(source, tree, view)
    findings: list[Finding] = []
    seen: set[tuple[int | None, str]] = set()
    for rule in RULES:
        for finding in rule(ctx):
            # One line raises once: when two rules explain the same error there, the first one speaks.
            key = (finding.line, finding.message.split(":", 1)[0])
            if key not in seen:
                seen.add(key)
                findings.append(finding)
    findings.sort(key=lambda f: f.line or 0)
    return findings


def cell_context(source: str, tree: ast.Module, view: RuntimeView) -> CellContext:
    """The cell walked statement by statement, with the evaluator that decides its branches."""
    evaluators: list[Evaluator] = []

    def runtime(sites: list[Site]) -> Evaluator:
        evaluators.append(Evaluator(view, sites))
        return evaluators[0]

    imports: list[ImportSite] = []
    sites = walk_cell(
        tree,
        view.is_library,
        view.modules.__contains__,
        runtime,
        imports,
        view.global_binds,
        view.undefined.__contains__,
    )
    return CellContext(source, tree, view, sites, evaluators[0], imports)
