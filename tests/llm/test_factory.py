"""make_backend (the model's, and crane-bench's that adds its own): names, options, and clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from crane_jupyterlab.bench.backends import HybridBackend
from crane_jupyterlab.bench.backends import make_backend as bench_backend
from crane_jupyterlab.bench.replay import ReplayBackend
from crane_jupyterlab.llm.base import Backend
from crane_jupyterlab.llm.factory import make_backend
from crane_jupyterlab.llm.litellm_backend import LiteLLMBackend


def test_none_is_no_backend() -> None:
    assert make_backend("none") is None
    assert make_backend("none", model=None) is None  # None options mean "default"
    with pytest.raises(ValueError, match="unknown option"):
        make_backend("none", model="openai/x")


def test_litellm_options(tmp_path: Path) -> None:
    backend = make_backend(
        "litellm",
        model="openai/gpt-5",
        votes=5,
        temperature=0.2,
        api_base=None,
        cache_dir=str(tmp_path),
        max_prompt_tokens=4000,
        categories="SR",
        runtime=False,
    )
    assert isinstance(backend, LiteLLMBackend) and isinstance(backend, Backend)
    assert backend.votes == 5 and backend.temperature == 0.2 and backend.api_base is None
    assert backend.cache is not None and backend.cache.directory == tmp_path
    assert backend.prompt.max_prompt_tokens == 4000 and backend.prompt.categories == "SR"
    assert backend.prompt.runtime is False
    no_cache = make_backend("litellm", model="openai/gpt-5", cache=False)
    assert isinstance(no_cache, LiteLLMBackend) and no_cache.cache is None


@pytest.mark.parametrize(
    ("name", "options", "message"),
    [
        ("litellm", {}, "needs a model"),
        ("litellm", {"model": "openai/x", "colour": "red"}, "unknown option.*colour"),
        ("litellm", {"model": "openai/x", "votes": 2}, "odd"),
        ("replay", {}, "needs path"),
        ("gpt", {}, "unknown backend 'gpt'"),
        ("hybrid", {"llm_backend": "none"}, "hybrid needs llm_backend"),
    ],
)
def test_clear_errors(name: str, options: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        bench_backend(name, **options)


def test_the_products_factory_builds_only_model_backends() -> None:
    with pytest.raises(ValueError, match="unknown backend 'replay'"):
        make_backend("replay", path="x")


def test_replay(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    fields = {
        "id": "a",
        "version": "fixed",
        "llm": "gpt-5",
        "setting": "-RT",
        "run": 1,
        "raw": None,
        "detection": False,
    }
    path.write_text(json.dumps(fields) + "\n")
    backend = bench_backend("replay", path=str(path), setting="-RT")
    assert isinstance(backend, ReplayBackend) and backend.llm == "gpt-5"


def test_hybrid_builds_its_model_from_the_other_options() -> None:
    backend = bench_backend("hybrid", model="openai/x", votes=3)
    assert isinstance(backend, HybridBackend) and isinstance(backend.llm, LiteLLMBackend)
    assert backend.llm.votes == 3
