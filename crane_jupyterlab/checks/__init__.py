"""Deterministic runtime checks: crashes that are certain, found from the runtime view without a model."""

from .core import check

__all__ = ["check"]
