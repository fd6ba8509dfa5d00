"""Deterministic runtime checks: crashes that are certain, found from the runtime view without a model."""

from .core import SYNTAX_RULE, check, check_view

__all__ = ["SYNTAX_RULE", "check", "check_view"]
