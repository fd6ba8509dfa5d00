"""CraneExtension configuration: traits from the command line and the environment, a key that never
shows, validation, and the start/stop hooks of its background work."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from support import STUB_KEY
from traitlets import TraitError

from crane_jupyterlab.server.app import CraneExtension

pytestmark = pytest.mark.integration  # real kernels or a real jupyter_server


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CRANE_MODEL", "CRANE_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def test_traits_from_the_command_line(clean_env: None) -> None:
    app = CraneExtension()
    app.parse_command_line(
        [
            "--CraneExtension.model=openai/gpt-4o-mini",
            "--CraneExtension.votes=5",
            "--CraneExtension.categories=VS",
            "--CraneExtension.allowed_models=openai/a",
            "--CraneExtension.allowed_models=openai/b",
            f"--CraneExtension.api_key={STUB_KEY}",
        ]
    )
    config = app.service_config()
    assert (config.model, config.votes, config.categories) == ("openai/gpt-4o-mini", 5, "SV")
    assert config.allowed() == ["openai/gpt-4o-mini", "openai/a", "openai/b"]
    assert config.api_key is not None and config.api_key.get_secret_value() == STUB_KEY
    assert STUB_KEY not in repr(app.api_key) and STUB_KEY not in str(app.api_key)
    assert STUB_KEY not in repr(config)


def test_defaults_from_the_environment(monkeypatch: pytest.MonkeyPatch, clean_env: None) -> None:
    assert CraneExtension().model == "" and CraneExtension().api_key is None
    monkeypatch.setenv("CRANE_MODEL", "ollama/qwen2.5-coder")
    monkeypatch.setenv("CRANE_API_KEY", STUB_KEY)
    app = CraneExtension()
    assert app.model == "ollama/qwen2.5-coder" and app.api_key.get_secret_value() == STUB_KEY


def test_help_documents_every_trait_and_shows_no_key(
    monkeypatch: pytest.MonkeyPatch, clean_env: None, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CRANE_API_KEY", STUB_KEY)
    CraneExtension().print_help(classes=True)
    out = capsys.readouterr().out
    own = set(CraneExtension.class_own_traits(config=True))
    assert {"model", "api_key", "allowed_models", "token_budget", "auto_check"} <= own
    for name in own:
        assert f"--CraneExtension.{name}" in out
        assert CraneExtension.class_traits()[name].help, name
    assert STUB_KEY not in out


@pytest.mark.parametrize(
    ("trait", "value"),
    [("votes", 4), ("votes", 0), ("categories", "SX"), ("temperature", 3.0), ("token_budget", 10)],
)
def test_bad_values_are_refused(clean_env: None, trait: str, value: Any) -> None:
    with pytest.raises(TraitError):
        setattr(CraneExtension(), trait, value)


async def test_start_hook_starts_background_work_and_stop_cancels_it(
    crane_ext: Any, jp_serverapp: Any
) -> None:
    await crane_ext._start_jupyter_server_extension(jp_serverapp)
    tasks = list(crane_ext._background)
    assert len(tasks) == 2  # the pruning loop and, with a model configured, the litellm warm-up
    await asyncio.sleep(0)
    assert not tasks[0].done()
    await crane_ext.stop_extension()
    assert all(t.done() for t in tasks)
