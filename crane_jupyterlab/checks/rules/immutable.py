"""TypeError: an item assignment to a pandas Index the kernel holds (`ind[1] = 0`, `idx[0] += 1`).

Precondition, from pandas: `Index.__setitem__` raises TypeError("Index does not support mutable
operations") unconditionally, and every index class (RangeIndex, MultiIndex, DatetimeIndex, ...) inherits
it. The value is the kernel's (the probe described it and the cell has not rebound it up to there); the
assignment must certainly run and not be inside a `try` that catches TypeError.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ...models import Finding
from ..context import CellContext, line_of

RULE = "immutable-index"

INDEX_TYPES = frozenset(
    "pandas." + name
    for name in ("Index", "RangeIndex", "MultiIndex", "CategoricalIndex", "IntervalIndex", "DatetimeIndex",
                 "TimedeltaIndex", "PeriodIndex")
)  # fmt: skip


def check(ctx: CellContext) -> Iterator[Finding]:
    if ctx.view.source != "probe":
        return
    for site in ctx.certain(ast.Subscript):
        node = site.node
        assert isinstance(node, ast.Subscript)
        if not isinstance(node.ctx, ast.Store) or site.caught(("TypeError",)):
            continue
        info = ctx.value_of(node.value, site)
        if info is None or info.type not in INDEX_TYPES:
            continue
        line = line_of(node)
        target = ast.unparse(node.value)
        yield Finding(
            rule=RULE,
            message=(
                f"TypeError: Index does not support mutable operations (line {line}). {target} is a "
                f"{info.type.split('.')[1]}, which never changes in place: build a new one "
                f"({target} = {target}.insert(...), .delete(...), .where(...), or pd.Index([...]))."
            ),
            evidence=[f"{target} is a {info.type}", "pandas.Index.__setitem__ always raises TypeError"],
            line=line,
        )
