"""The libraries a cell uses: the version of each, and whether the kernel has imported it yet."""

from __future__ import annotations

import contextlib
import sys
import types
from typing import Any

from .safe import TRUSTED_ROOTS, _Ctx, _fact, _module_dict, _trusted_module
from .scan import _Scanner


def _modules(module_names: list[tuple[str, Any]], scan: _Scanner, ctx: _Ctx) -> list[dict[str, Any]]:
    """Versions of the libraries the cell references by alias, imports, or whose objects it uses."""
    out: list[dict[str, Any]] = []
    seen: set[str] = set()

    def add(alias: str, top: str) -> None:
        if not top:
            return
        if top in seen:
            # Another alias of a library already listed (`from keras import layers` beside `keras`):
            # listed too, so the checks know the name holds library code.
            first = next((m for m in out if m["module"] == top), None)
            if alias and first is not None and all(m["name"] != alias for m in out):
                out.append(
                    {"name": alias, "module": top, "version": first.get("version"), "alias_of": first["name"]}
                )
            return
        mod = sys.modules.get(top)
        version = _module_dict(mod).get("__version__") if mod is not None else None
        if mod is not None and not isinstance(version, str) and _trusted_module(mod):
            with contextlib.suppress(Exception):
                version = getattr(mod, "__version__", None)  # e.g. matplotlib computes it lazily
        if not isinstance(version, str):
            version = _dist_version(top)
        if version is None and mod is None:
            return
        seen.add(top)
        item: dict[str, Any] = {"name": alias or top, "module": top, "version": version}
        if mod is None:
            item["imported"] = False
        if top == "torch" and mod is not None:
            with contextlib.suppress(Exception):
                item["facts"] = [_fact("V", "grad_enabled", bool(mod.is_grad_enabled()))]
                cuda = _module_dict(mod).get("cuda")  # only if torch.cuda is already loaded
                if isinstance(cuda, types.ModuleType):
                    # device count from the driver, no CUDA context is created
                    item["facts"].append(_fact("V", "cuda_available", bool(cuda.is_available())))
        out.append(item)

    for alias, mod in module_names:
        name = _module_dict(mod).get("__name__")
        if isinstance(name, str):
            add(alias, name.split(".", 1)[0])
    for alias, full in scan.imports:
        add(alias if alias == full.split(".")[0] else "", full.split(".", 1)[0])
    for lib in sorted(ctx.libs):
        if lib in TRUSTED_ROOTS and lib not in ("builtins", "collections", "types", "typing", "functools"):
            add("", lib)
    return out


_DIST_NAMES = {"sklearn": "scikit-learn", "PIL": "pillow", "cv2": "opencv-python", "skimage": "scikit-image"}


_DIST_CACHE: dict[str, str | None] = {}


def _dist_version(top: str) -> str | None:
    """Version of an installed but not yet imported package, from its ``*.dist-info`` folder name.

    Neither the package nor importlib.metadata (~100 ms, pulls in the email package) is imported.
    """
    # sys.stdlib_module_names is new in 3.10; an older kernel just looks the name up on disk.
    if top in getattr(sys, "stdlib_module_names", ()) or not top.isidentifier():
        return None
    if top not in _DIST_CACHE:
        _DIST_CACHE[top] = None
        try:
            import os
            from importlib.machinery import PathFinder

            spec = PathFinder.find_spec(top)
            origin = spec.origin if spec is not None and spec.origin else None
            if origin is None and spec is not None and spec.submodule_search_locations:
                origin = os.path.join(next(iter(spec.submodule_search_locations)), "__init__.py")
            if origin:
                site = (
                    os.path.dirname(os.path.dirname(origin))
                    if spec and spec.submodule_search_locations
                    else (os.path.dirname(origin))
                )
                wanted = {_norm(top), _norm(_DIST_NAMES.get(top, top))}
                for name in os.listdir(site):
                    if name.endswith(".dist-info"):
                        dist, _, version = name[: -len(".dist-info")].partition("-")
                        if _norm(dist) in wanted and version:
                            _DIST_CACHE[top] = version
                            break
        except Exception:
            pass
    return _DIST_CACHE[top]


def _norm(name: str) -> str:
    return name.lower().replace("-", "_").replace(".", "_")
