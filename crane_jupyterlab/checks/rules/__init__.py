"""The deterministic rules. Each module has `RULE` (its id) and `check(ctx) -> Iterator[Finding]`."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from ...models import Finding
from ..context import CellContext
from . import (
    arguments,
    arrays,
    attributes,
    axes,
    columns,
    conversion,
    devices,
    formulas,
    grads,
    immutable,
    imports,
    indexing,
    labels,
    lengths,
    losses,
    missing_values,
    names,
    shapes,
    sklearn,
    stacking,
    styles,
    text,
    truth,
    types,
    values,
)

Rule = Callable[[CellContext], Iterator[Finding]]

RULES: tuple[Rule, ...] = (
    names.check,
    imports.check,
    columns.check,
    formulas.check,
    attributes.check,
    styles.check,
    arguments.check,
    sklearn.check,
    shapes.check,
    grads.check,
    losses.check,
    conversion.check,
    missing_values.check,
    arrays.check,
    axes.check,
    stacking.check,
    values.check,
    truth.check,
    types.check,
    indexing.check,
    immutable.check,
    lengths.check,
    text.check,
    labels.check,
    devices.check,
)
