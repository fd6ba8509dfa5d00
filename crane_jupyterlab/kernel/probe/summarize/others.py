"""scipy sparse matrices, PIL images, matplotlib objects."""

from __future__ import annotations

from typing import Any

from ..facts import _add, _Ctx
from ..safe import _is, _root
from .core import _summarizer


@_summarizer(lambda o: _is(o, "scipy", "_spbase", "spmatrix", "sparray"))
def _sum_sparse(m: Any, e: dict[str, Any], ctx: _Ctx, hints: dict[str, Any]) -> None:
    _add(e, "S", "shape", list(m.shape))
    _add(e, "S", "nnz", int(m.nnz))
    _add(e, "R", "format", str(m.format))
    _add(e, "R", "dtype", str(m.dtype))


@_summarizer(lambda o: _is(o, "PIL", "Image"))
def _sum_image(img: Any, e: dict[str, Any], ctx: _Ctx, hints: dict[str, Any]) -> None:
    _add(e, "S", "size", list(img.size))
    _add(e, "R", "mode", str(img.mode))


@_summarizer(lambda o: _root(type(o)) in ("matplotlib", "seaborn", "statsmodels"))
def _sum_plot_object(obj: Any, e: dict[str, Any], ctx: _Ctx, hints: dict[str, Any]) -> None:
    return  # figures, axes, grids, fitted results: the type says enough
