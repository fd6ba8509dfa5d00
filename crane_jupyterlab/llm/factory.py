"""Build the model backend from keyword options, for the server and `crane-bench`.

Names: `none` (no prediction: returns None) and `litellm`. Options are keyword arguments; None values
mean "the default", unknown ones are an error naming them. (`crane-bench` adds its own backends, such as
the paper's replayed answers, in `crane_jupyterlab.bench.backends`.)
"""

from __future__ import annotations

from typing import Any

from ..prompt import PromptSettings
from .base import Backend
from .cache import VerdictCache
from .litellm_backend import LiteLLMBackend

BACKENDS = ("none", "litellm")

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


def prompt_settings(options: dict[str, Any]) -> PromptSettings:
    """The prompt options taken out of `options` (the rest are an error)."""
    settings = PromptSettings(**_take(options, _PROMPT_OPTIONS))
    _reject_unknown("prompt", options)
    return settings


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
    prompt = PromptSettings(**_take(options, _PROMPT_OPTIONS))
    _reject_unknown("litellm", options)
    return LiteLLMBackend(prompt=prompt, cache=cache, **llm)


def make_backend(name: str, **options: Any) -> Backend | None:
    """The backend called `name`, configured by `options`; None for `none`."""
    options = {k: v for k, v in options.items() if v is not None}
    if name == "none":
        _reject_unknown("none", options)
        return None
    if name == "litellm":
        return _litellm(options)
    raise ValueError(f"unknown backend {name!r}; choose one of {', '.join(BACKENDS)}")
