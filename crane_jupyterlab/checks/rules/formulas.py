"""PatsyError: a formula variable that is neither a column of `data` nor a name of the notebook.

statsmodels' formula API (`smf.ols('price ~ area + rooms', data=homes)`, `ols(...)` from-imported, `glm`,
`logit`, ...) hands the formula to patsy, which evaluates each variable in `data` first and then in the
calling frame (the notebook's namespace). A variable found in neither raises PatsyError ("Error
evaluating factor: NameError: name 'rooms' is not defined").

Evidence: the frame's complete column labels, the probe's `formula_undefined` (variables of the cell's
formula strings the kernel does not define), and nothing in the cell binding the name before the call.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ...kernel.probe.scan import formula_names
from ...models import Finding
from ..context import CellContext, has_star_args, kwarg, line_of
from ..flow import Site
from .columns import RULE, _columns_evidence, _plain_labels


def _formula(ctx: CellContext, site: Site, call: ast.Call) -> Finding | None:
    """`smf.ols('price ~ area + rooms', data=homes)`: patsy evaluates each variable in `data`, then in
    the calling frame; one that is neither a column of data nor a name of the kernel (the probe's
    formula_undefined) nor bound earlier in the cell raises PatsyError (NameError inside)."""
    if not isinstance(call.func, (ast.Name, ast.Attribute)) or has_star_args(call):
        return None
    formula = kwarg(call, "formula") or (call.args[0] if call.args else None)
    if not isinstance(formula, ast.Constant):
        return None
    path = ctx.class_path(call.func, site)
    if path is None or path.split(".")[0] != "statsmodels":
        return None
    text = formula.value
    data_node = kwarg(call, "data") or (call.args[1] if len(call.args) > 1 else None)
    frame = ctx.value_of(data_node, site) if data_node is not None else None
    if not isinstance(text, str) or frame is None or not frame.is_frame or site.caught(("Exception",)):
        return None
    if frame.columns is None or not _plain_labels(frame.columns):
        return None
    missing = [
        name
        for name in formula_names(text)
        if name not in frame.columns
        and name in ctx.view.formula_undefined
        and name not in site.bound
        and name not in (frame.index_names or [])
    ]
    if not missing:
        return None
    return Finding(
        rule=RULE,
        message=(
            f"PatsyError: Error evaluating factor: NameError: name {missing[0]!r} is not defined: the "
            f"formula names {', '.join(map(repr, missing))}, neither a column of {frame.expr} nor a name in "
            f"the notebook (line {line_of(call)})."
        ),
        evidence=[*_columns_evidence(frame, missing), f"{missing[0]} is undefined in the kernel"],
        line=line_of(call),
    )


def check(ctx: CellContext) -> Iterator[Finding]:
    for site in ctx.certain(ast.Call):
        call = site.node
        assert isinstance(call, ast.Call)
        finding = _formula(ctx, site, call)
        if finding is not None:
            yield finding
