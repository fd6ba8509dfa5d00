"""The libraries a cell uses: the version of each, and whether the kernel has imported it yet."""

from __future__ import annotations

import contextlib
import os
import sys
import types
from typing import Any

from .access import _trusted_module
from .facts import _Ctx, _fact
from .safe import TRUSTED_ROOTS, _module_dict
from .scan import _Scanner


def _modules(module_names: list[tuple[str, Any]], scan: _Scanner, ctx: _Ctx) -> list[dict[str, Any]]:
    """Versions of the libraries the cell references by alias, imports, or whose objects it uses."""
    out: list[dict[str, Any]] = []
    seen: set[str] = set()

    def add(alias: str, top: str) -> None:
        if top in seen or not top:
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
            item["facts"] = _torch_facts(mod)
        elif top == "sklearn":
            item["facts"] = _sklearn_facts() if mod is not None else _sklearn_defaults()
        out.append(item)

    for alias, mod in module_names:
        name = _module_dict(mod).get("__name__")
        if isinstance(name, str):
            add(alias, name.split(".", 1)[0])
            # Every kernel alias of a library's modules, by its full name (`F` -> torch.nn.functional):
            # one entry per library keeps the libraries line short, and `F.cross_entropy` stays legible.
            for item in out:
                same = (alias, name) == (item["name"], item["module"])
                if item["module"] == name.split(".", 1)[0] and not same:
                    item.setdefault("aliases", {})[alias] = name
    for alias, full in scan.imports:
        add(alias if alias == full.split(".")[0] else "", full.split(".", 1)[0])
    for lib in sorted(ctx.libs):
        if lib in TRUSTED_ROOTS and lib not in ("builtins", "collections", "types", "typing", "functools"):
            add("", lib)
    return out


def _torch_facts(torch: Any) -> list[dict[str, Any]]:
    facts: list[dict[str, Any]] = []
    with contextlib.suppress(Exception):
        facts.append(_fact("V", "grad_enabled", bool(torch.is_grad_enabled())))
    with contextlib.suppress(Exception):
        # autocast lets F.linear/conv mix half and float32 (and keeps RNNs from checking dtypes)
        autocast = bool(torch._C._is_any_autocast_enabled())
        facts.append(_fact("R", "autocast", autocast))
    cuda = _cuda_available(torch)
    if cuda is not None:
        facts.append(_fact("V", "cuda_available", cuda))
    return facts


def _cuda_available(torch: Any) -> bool | None:
    """Whether CUDA can be used, found without leaving a trace; None when that cannot be known so.

    `torch.cuda.is_available()` asks the CUDA runtime (cudaGetDeviceCount -> cuInit), which registers
    torch's fork handler: any forked child (a DataLoader worker, multiprocessing) that then touches
    CUDA fails with "Cannot re-initialize CUDA in forked subprocess". Instead:
    - a build without CUDA: False (`torch.cuda._is_compiled()` only looks for a binding);
    - CUDA already initialized by the user: `device_count()` (cached by torch; nothing new happens);
    - otherwise NVML's device count, the check torch itself makes when PYTORCH_NVML_BASED_CUDA_CHECK=1
      ("will NOT poison fork", torch.cuda.is_available's docstring). It is called directly, because
      `device_count()` falls back to cudaGetDeviceCount when NVML fails; then the answer is None.
      NVML reads the driver's device list; it creates no CUDA context.
    """
    cuda = _module_dict(torch).get("cuda")  # only if torch.cuda is already loaded
    if not isinstance(cuda, types.ModuleType):
        return None
    try:
        if not cuda._is_compiled():
            return False
        if cuda.is_initialized():
            return bool(cuda.device_count() > 0)
        nvml_count = _module_dict(cuda).get("_device_count_nvml")
        if not callable(nvml_count) or getattr(torch.version, "hip", None):
            return None
        key = str(os.environ.get("CUDA_VISIBLE_DEVICES"))
        if key not in _NVML_CACHE:  # loading libnvidia-ml and nvmlInit cost milliseconds: once
            _NVML_CACHE[key] = int(nvml_count())
        count = _NVML_CACHE[key]
    except Exception:
        return None
    return count > 0 if count >= 0 else None


_NVML_CACHE: dict[str, int] = {}  # NVML device count by CUDA_VISIBLE_DEVICES value


def _sklearn_defaults() -> list[dict[str, Any]]:
    """scikit-learn's configuration as its import will leave it (sklearn/_config.py reads no
    environment variable for array_api_dispatch)."""
    return [_fact("R", "array_api_dispatch", False)]


def _sklearn_facts() -> list[dict[str, Any]]:
    """scikit-learn's array API dispatch: when on, its functions take torch tensors (even on a GPU)
    instead of converting them with numpy."""
    config = sys.modules.get("sklearn._config")
    get = _module_dict(config).get("get_config") if config is not None else None
    if not callable(get):
        return []
    try:
        value = get().get("array_api_dispatch")
    except Exception:
        return []
    return [_fact("R", "array_api_dispatch", bool(value))] if isinstance(value, bool) else []


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
