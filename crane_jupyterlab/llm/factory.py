"""Build a prediction backend by name, for the server and `crane-bench`.

Names: `none` (no prediction: returns None), `litellm`, `replay`, and `checks` / `hybrid` from
`crane_jupyterlab.checks.backend` (imported only when asked for). Options are keyword arguments;
None values mean "the default", unknown ones are an error naming them.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from ..prompt import PromptSettings
from .base import Backend
from .cache import VerdictCache
from .litellm_backend import LiteLLMBackend
from .replay import ReplayBackend

BACKENDS = ("none", "litellm", "replay", "checks", "hybrid")

_PROMPT_OPTIONS = ("runtime", "categories", "docs", "max_prompt_tokens", "token_model")
_LITELLM_OPTIONS = (
    "model",
    "api_base",
    "api_key",
    "votes",
    "temperature",
    "max_tokens",
    "timeout",
    "max_retries",
    "retry_base_delay",
    "retry_max_delay",
    "response_format",
    "extra_params",
)
_CACHE_OPTIONS = ("cache", "cache_size", "cache_dir")


def _take(options: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    return {name: options.pop(name) for name in names if name in options}


def _reject_unknown(backend: str, options: dict[str, Any]) -> None:
    if options:
        raise ValueError(f"unknown option(s) for the {backend} backend: {', '.join(sorted(options))}")


def _prompt(options: dict[str, Any]) -> PromptSettings:
    return PromptSettings(**_take(options, _PROMPT_OPTIONS))


def _litellm(options: dict[str, Any]) -> LiteLLMBackend:
    """Options: every `LiteLLMBackend` argument, the `PromptSettings` fields, and cache (bool, default
    True), cache_size (256), cache_dir (None = memory only)."""
    llm = _take(options, _LITELLM_OPTIONS)
    if not llm.get("model"):
        raise ValueError("the litellm backend needs a model, e.g. model='openai/gpt-5'")
    caching = _take(options, _CACHE_OPTIONS)
    cache = None
    if caching.get("cache", True):
        cache = VerdictCache(size=int(caching.get("cache_size", 256)), directory=caching.get("cache_dir"))
    prompt = _prompt(options)
    _reject_unknown("litellm", options)
    return LiteLLMBackend(prompt=prompt, cache=cache, **llm)


def _replay(options: dict[str, Any]) -> ReplayBackend:
    """Options: path (paper_outputs.jsonl), llm (default gpt-5), setting (-RT or +RT, default +RT)."""
    picked = _take(options, ("path", "llm", "setting"))
    if not picked.get("path"):
        raise ValueError("the replay backend needs path= the paper_outputs.jsonl file")
    prompt = _prompt(options) if any(k in options for k in _PROMPT_OPTIONS) else None
    _reject_unknown("replay", options)
    return ReplayBackend(picked["path"], picked.get("llm", "gpt-5"), picked.get("setting", "+RT"), prompt)


def _checks_class(name: str) -> Callable[..., Backend]:
    try:
        module = importlib.import_module("crane_jupyterlab.checks.backend")
        cls: Callable[..., Backend] = getattr(module, name)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"checks backend not available ({name}: {exc})") from None
    return cls


def make_backend(name: str, **options: Any) -> Backend | None:
    """The backend called `name`, configured by `options`; None for `none`.

    hybrid: the checks first, then an LLM built from the remaining options; `llm_backend` picks which
    (default `litellm`, or `replay`); `consult_llm_on_findings` is passed to `HybridBackend`.
    """
    options = {k: v for k, v in options.items() if v is not None}
    if name == "none":
        _reject_unknown("none", options)
        return None
    if name == "litellm":
        return _litellm(options)
    if name == "replay":
        return _replay(options)
    if name == "checks":
        return _checks_class("ChecksBackend")(**options)
    if name == "hybrid":
        inner = options.pop("llm_backend", "litellm")
        if inner not in ("litellm", "replay"):
            raise ValueError(f"hybrid needs llm_backend litellm or replay, got {inner!r}")
        hybrid_options = _take(options, ("consult_llm_on_findings",))
        hybrid = _checks_class("HybridBackend")
        checks = _checks_class("ChecksBackend")()
        llm = make_backend(inner, **options)
        return hybrid(checks, llm, **hybrid_options)
    raise ValueError(f"unknown backend {name!r}; choose one of {', '.join(BACKENDS)}")
