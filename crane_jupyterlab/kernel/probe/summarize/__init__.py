"""Summarizers, one module per library, each declaring the S/R/V category beside every fact it emits.

`summarize(obj, expr, ctx)` picks the first summarizer whose `match` accepts the object; the registry is
ordered by `ORDER` below (builtins first, the catch-all `objects` last), whatever order the modules were
imported in.
"""

from __future__ import annotations

from . import builtins, keras, numpy, others, pandas, sklearn, torch
from .core import _REGISTRY, summarize

ORDER = (builtins, numpy, pandas, torch, keras, sklearn, others)
_RANK = {module.__name__: rank for rank, module in enumerate(ORDER)}
_REGISTRY.sort(key=lambda item: _RANK.get(getattr(item[1], "__module__", ""), len(ORDER)))

__all__ = ["summarize"]
