"""The server's options, declared once: `ServiceConfig`'s fields carry their help, bounds and checks, and
the `CraneExtension` traits (command line, `jupyter_server_config.py`, `python -m crane_jupyterlab`) are
made from them (`app.config_traits`). Also what `GET /crane/config` tells the browser, never a key.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, get_args

from pydantic import SecretStr

from ..api import ConfigReply, TrialMode
from ..llm import litellm
from ..models import RESPONSE_FORMATS

log = logging.getLogger(__name__)

MODEL_ENV = "CRANE_MODEL"
API_KEY_ENV = "CRANE_API_KEY"
NO_MODEL_HINT = (
    "No model is configured, so only the deterministic checks ran. Set one with "
    "`c.CraneExtension.model = 'openai/gpt-4o-mini'` in jupyter_server_config.py, "
    f"`--CraneExtension.model=...` on the command line or the {MODEL_ENV} environment variable; "
    f"put the provider's key in its usual environment variable (e.g. OPENAI_API_KEY) or in {API_KEY_ENV}."
)


def canonical_categories(value: str) -> str:
    """`value` as a subset of "SRV" in canonical order; ValueError otherwise."""
    if any(c not in "SRV" for c in value) or len(set(value)) != len(value):
        raise ValueError("categories must be a subset of 'S', 'R', 'V' without repeats, e.g. 'SRV' or 'SR'")
    return "".join(c for c in "SRV" if c in value)


def odd_votes(value: int) -> int:
    if value % 2 == 0:
        raise ValueError("votes must be odd so the majority is strict")
    return value


def option(
    default: Any = dataclasses.MISSING,
    *,
    help: str,
    factory: Callable[[], Any] | None = None,
    low: float | None = None,
    high: float | None = None,
    choices: tuple[str, ...] | None = None,
    check: Callable[[Any], Any] | None = None,
    secret: bool = False,
) -> Any:
    """A `ServiceConfig` field with what its trait needs: help text, bounds, allowed values, a check
    (returns the value to keep or raises ValueError), and whether it is a secret."""
    metadata = {"help": help, "low": low, "high": high, "choices": choices, "check": check, "secret": secret}
    if factory is not None:
        return field(default_factory=factory, metadata=metadata)
    if isinstance(default, list):
        return field(default_factory=lambda: list(default), metadata=metadata)
    return field(default=default, metadata=metadata)


TRIAL_MODES: tuple[str, ...] = get_args(TrialMode)


def default_trial_mode() -> str:
    """`auto` where this machine has an OS sandbox for trials, else `on-demand` (the user asks, and is
    told why none can run)."""
    from .trial import platform_sandbox

    return "auto" if platform_sandbox().available else "on-demand"


def _env_secret(name: str) -> Callable[[], SecretStr | None]:
    return lambda: SecretStr(os.environ[name]) if os.environ.get(name) else None


@dataclass
class ServiceConfig:
    """The server defaults (the CraneExtension traits, minus tornado and traitlets)."""

    model: str = option(
        help=f"""Default LLM, as a litellm model name (e.g. 'openai/gpt-4o-mini', 'ollama/qwen2.5-coder').
        Empty: no model, only the deterministic checks run. Defaults to ${MODEL_ENV}.""",
        factory=lambda: os.environ.get(MODEL_ENV, ""),
    )
    api_base: str = option(
        "",
        help="Base URL of an OpenAI-compatible endpoint for the model (empty: the provider's default).",
    )
    api_key: SecretStr | None = option(
        help=f"""API key for the model's provider, kept on the server: never sent to the browser, never
        logged by this extension. Prefer the environment (${API_KEY_ENV} or the provider's own variable,
        e.g. OPENAI_API_KEY): a key written in a config file also shows in jupyter_server's --debug log
        of the loaded config.""",
        factory=_env_secret(API_KEY_ENV),
        secret=True,
    )
    response_format: str = option(
        "auto",
        help="""How the model is asked for JSON. auto: a JSON schema where litellm knows the model takes
        one, else JSON mode; json_object_schema: JSON mode with the schema, what llama.cpp's server
        wants (it turns the schema into a grammar); none: plain text, for servers that reject
        response_format. Every answer is validated, whatever this says.""",
        choices=RESPONSE_FORMATS,
    )
    allowed_models: list[str] = option(
        [],
        help="""Models a request may select besides `model`. A request naming any other model is
        refused (403), so users cannot spend on models the administrator did not approve.""",
    )
    votes: int = option(
        1, help="Samples per prediction (odd); the majority decides.", low=1, high=15, check=odd_votes
    )
    temperature: float = option(0.0, help="Sampling temperature of the model.", low=0.0, high=2.0)
    llm_timeout: float = option(60.0, help="Seconds to wait for the model before giving up.", low=1.0)
    extract_timeout: float = option(
        10.0, help="Seconds to wait for the kernel to answer the runtime probe.", low=0.5
    )
    token_budget: int = option(
        12000,
        help="Prompt size limit in tokens; the oldest executed cells are left out first to meet it.",
        low=500,
    )
    max_columns: int = option(20, help="Columns of a data frame the probe describes.", low=1)
    probe_samples: int = option(10, help="Example values the probe collects per object.", low=0)
    categories: str = option(
        "SRV",
        help="""Runtime fact categories sent to the model: any of S (structural), R (representation/type),
        V (value).""",
        check=canonical_categories,
    )
    docs: bool = option(False, help="Ground the prompt in the API docs of the calls the cell makes (+D).")
    auto_check: bool = option(
        True,
        help="""Whether the frontend checks the active cell on its own (when its text stops changing) by
        default. Users who set "Check automatically" in their settings keep their choice; False leaves
        only on-demand checks for the others, e.g. to limit model spending.""",
    )

    trial: str = option(
        help="""Trial runs: the cell run in a sandboxed fork of its kernel before the user runs it, so a
        crash is observed, not predicted. off: never; on-demand: when the user asks ("Trial-Run Cell");
        auto: with every check. Default: auto where the OS sandbox is available (Linux with seccomp),
        else on-demand.""",
        factory=default_trial_mode,
        choices=TRIAL_MODES,
    )
    trial_budget: float = option(
        5.0,
        help="Seconds of wall time a trial run may take before it is ended (timed out).",
        low=0.1,
        high=600.0,
    )
    trial_memory_mb: int = option(
        2048,
        help="""Memory in MB a trial run may use beyond what it shares with the kernel (copy-on-write
        copies included) before it is ended (out of memory).""",
        low=16,
    )
    trial_quick_iterations: int = option(
        2,
        help="""Quick trials: a loop of the cell (and of the functions it defines) that would outlast the
        trial's budget is cut after this many iterations (Keras fit after this many epochs), so the code
        after it runs within the budget. A crash seen then is reported apart from a full trial's ("seen in
        a quick trial") and as certain only when it does not depend on how many iterations ran. 0: off
        (a long cell times out).""",
        low=0,
        high=1000,
    )
    fixes: bool = option(
        True,
        help="""Verified fixes: for a crash that is certain or observed, edits drawn from the facts (a close
        column, key, attribute or variable name; a missing import of a usual alias; an API the library
        renamed, by its own message; then, with a model, the model's smallest edit) are run as trials
        on the same kernel state, and the first whose trial runs to its end is offered with an Apply
        button. Needs trial runs (not "off"); no edit is
        offered untried. False: no fix trials.""",
    )
    replicas: bool = option(
        True,
        help="""Where no trial decides (none ran, or it was blocked, timed out, ran out of memory or could
        not run) and the checks found nothing, run the cell in a separate sandboxed process on replicas of
        its inputs rebuilt from the probe's facts, so the libraries themselves judge: a crash is reported
        as certain only when every replica raises it the same way. Every replica runs in the trial's OS
        sandbox (never where it is not available: then no replica runs). Only when the server's Python
        and libraries are the kernel's (same versions). False: off.""",
    )
    chain_budget: float = option(
        10.0,
        help="""Seconds of wall time the chain may take: once an edited cell's trial has run it to its end,
        the same trial goes on with the code cells below it (sent by the frontend), quick mode on each;
        what the budget does not reach is reported as not reached.""",
        low=0.1,
        high=600.0,
    )
    notebook_budget: float = option(
        120.0,
        help="""Seconds of wall time a run of a notebook from the top ("Check the Notebook from the Top") may
        take in its fresh worker, all cells together; the cells it does not reach are reported so. Each
        cell's long loops and library calls are cut to what one trial's budget allows (quick mode),
        unless a full run is asked for.""",
        low=1.0,
        high=3600.0,
    )
    replica_budget: float = option(
        2.0,
        help="""Seconds of wall time the replica judge may take for all its replicas of one cell (they run
        at once); a replica still running then says nothing, and the judge abstains.""",
        low=0.1,
        high=60.0,
    )
    trial_hooks_only: bool = option(
        False,
        help="""Allow trial runs where the OS offers no sandbox (macOS, old kernels, containers that refuse
        seccomp), guarded by Python audit hooks alone. They cannot stop C code (a library's own file
        writer, ctypes) or writes through files opened before the trial: only for machines where that
        is acceptable.""",
    )

    trial_private_writes: bool = option(
        True,
        help="""Let a trial run write files: its writes beneath the kernel's working directory, the home
        directory and the temporary directory land in a private copy-on-write copy (an overlay mount in
        the trial's own mount namespace, capped by trial_memory_mb) that is discarded with the trial; the
        real files never change. Needs unprivileged user namespaces and Landlock; elsewhere, or when
        False, a cell that writes a file is reported as blocked.""",
    )

    trial_worker: str = option(
        "auto",
        help="""Where a fork of the kernel cannot run the cell (TensorFlow's runtime in the kernel, CUDA in
        use), run the trial in a worker: a spawned, sandboxed interpreter of the kernel's own Python, kept
        warm as a spare with the kernel's libraries imported, on a copy of the cell's inputs. auto: there;
        never: such trials are unavailable; always: every trial (slower, for testing).""",
        choices=("auto", "never", "always"),
    )
    trial_worker_max_mb: int = option(
        1024,
        help="""The most a trial worker copies of the cell's inputs (MB); above it the trial is unavailable,
        with the sizes.""",
        low=1,
    )
    trial_worker_gpu_fraction: float = option(
        0.5,
        help="""The share of each GPU's memory a trial worker may allocate (torch's per-process cap); the
        kernel keeps the rest. Beyond it the trial ends as out of memory.""",
        low=0.01,
        high=1.0,
    )

    def allowed(self) -> list[str]:
        """Models a request may ask for: the allow-list plus the default model."""
        models = list(self.allowed_models)
        if self.model and self.model not in models:
            models.insert(0, self.model)
        return models


@dataclass
class KeyStatus:
    """Whether the model's provider has what it needs; `missing` names environment variables only."""

    configured: bool
    missing: list[str]


def key_status(config: ServiceConfig) -> KeyStatus:
    """Ask litellm which environment variables the default model's provider needs. Blocking (the
    first call imports litellm): run it in a thread."""
    if config.api_key is not None:
        return KeyStatus(True, [])
    try:
        found = litellm().validate_environment(model=config.model)
    except Exception as exc:  # an unknown provider: say so rather than guess
        log.debug("crane: validate_environment(%s) failed: %s", config.model, type(exc).__name__)
        return KeyStatus(False, [])
    missing = [str(k) for k in found.get("missing_keys") or []]
    if config.api_base:  # an explicit endpoint stands in for the provider's *_API_BASE variable
        missing = [k for k in missing if not k.endswith("_API_BASE")]
    return KeyStatus(bool(found.get("keys_in_environment")) or not missing, missing)


def trial_availability(config: ServiceConfig) -> tuple[bool, str | None]:
    """Whether this server's machine can run trials (an OS sandbox, or hooks-only mode allowed), and why
    not, in words a user can act on. The mode (`trial`, which may be off) is reported beside it."""
    from .trial import platform_sandbox

    found = platform_sandbox()
    if found.available or config.trial_hooks_only:
        return True, None
    return False, (
        f"No OS sandbox for trial runs here: {found.reason}. An administrator may allow hooks-only "
        "trials (c.CraneExtension.trial_hooks_only = True)."
    )


def config_reply(config: ServiceConfig, keys: KeyStatus | None) -> ConfigReply:
    """`GET /crane/config`'s body: the server defaults a settings UI starts from. Never a key. Blocking
    the first time (the sandbox probe): run it in a thread."""
    available, why = trial_availability(config)
    return ConfigReply(
        model=config.model or None,
        allowed_models=config.allowed(),
        categories=config.categories,
        votes=config.votes,
        temperature=config.temperature,
        auto_check=config.auto_check,
        docs=config.docs,
        key_configured=bool(keys and keys.configured),
        missing_env=keys.missing if keys else [],
        trial=config.trial,  # type: ignore[arg-type]  # one of TRIAL_MODES (the trait's choices)
        trial_available=available,
        trial_unavailable_reason=why,
    )
