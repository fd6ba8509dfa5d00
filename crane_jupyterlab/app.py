"""The jupyter_server extension: configuration traits, the analysis service, its background work."""

from __future__ import annotations

import asyncio
import contextlib
import os
from typing import Any

from jupyter_server.extension.application import ExtensionApp
from pydantic import SecretStr
from traitlets import Bool, Enum, Float, Int, List, TraitError, TraitType, Unicode, default, validate

from .handlers import routes
from .models import RESPONSE_FORMATS
from .service import API_KEY_ENV, MODEL_ENV, AnalysisService, ServiceConfig, import_litellm

# How often the background task drops the cached clients of kernels that were shut down or restarted.
PRUNE_INTERVAL_S = 30.0


class Secret(TraitType[SecretStr | None, Any]):
    """A string trait whose value never shows in a repr, a log line or `--help-all`."""

    info_text = "a secret string"
    default_value = None
    allow_none = True

    def validate(self, obj: Any, value: Any) -> SecretStr | None:
        if value is None or isinstance(value, SecretStr):
            return value
        if isinstance(value, str):
            return SecretStr(value) if value else None
        self.error(obj, value)

    def from_string(self, s: str) -> SecretStr | None:
        return SecretStr(s) if s else None


class CraneExtension(ExtensionApp):
    """Predicts whether a notebook cell will crash, from the notebook's live kernel state."""

    name = "crane_jupyterlab"

    model = Unicode(
        "",
        help=f"""Default LLM, as a litellm model name (e.g. 'openai/gpt-4o-mini', 'ollama/qwen2.5-coder').
        Empty: no model, only the deterministic checks run. Defaults to ${MODEL_ENV}.""",
    ).tag(config=True)

    api_base = Unicode(
        "",
        help="Base URL of an OpenAI-compatible endpoint for the model (empty: the provider's default).",
    ).tag(config=True)

    api_key = Secret(
        help=f"""API key for the model's provider, kept on the server: never sent to the browser, never
        logged by this extension. Prefer the environment (${API_KEY_ENV} or the provider's own variable,
        e.g. OPENAI_API_KEY): a key written in a config file also shows in jupyter_server's --debug log
        of the loaded config.""",
    ).tag(config=True)

    allowed_models = List(
        Unicode(),
        help="""Models a request may select besides `model`. A request naming any other model is
        refused (403), so users cannot spend on models the administrator did not approve.""",
    ).tag(config=True)

    response_format = Enum(
        list(RESPONSE_FORMATS),
        "auto",
        help="""How the model is asked for JSON. auto: a JSON schema where litellm knows the model takes
        one, else JSON mode; json_object_schema: JSON mode with the schema, what llama.cpp's server
        wants (it turns the schema into a grammar); none: plain text, for servers that reject
        response_format. Every answer is validated, whatever this says.""",
    ).tag(config=True)

    votes = Int(1, min=1, max=15, help="Samples per prediction (odd); the majority decides.").tag(config=True)

    temperature = Float(0.0, min=0.0, max=2.0, help="Sampling temperature of the model.").tag(config=True)

    llm_timeout = Float(60.0, min=1.0, help="Seconds to wait for the model before giving up.").tag(
        config=True
    )

    extract_timeout = Float(
        10.0, min=0.5, help="Seconds to wait for the kernel to answer the runtime probe."
    ).tag(config=True)

    token_budget = Int(
        12000,
        min=500,
        help="Prompt size limit in tokens; the oldest executed cells are left out first to meet it.",
    ).tag(config=True)

    max_columns = Int(20, min=1, help="Columns of a data frame the probe describes.").tag(config=True)

    probe_samples = Int(10, min=0, help="Example values the probe collects per object.").tag(config=True)

    categories = Unicode(
        "SRV",
        help="""Runtime fact categories sent to the model: any of S (structural), R (representation/type),
        V (value).""",
    ).tag(config=True)

    docs = Bool(False, help="Ground the prompt in the API docs of the calls the cell makes (+D).").tag(
        config=True
    )

    auto_check = Bool(
        True,
        help="""Whether the frontend checks the active cell on its own (when its text stops changing) by
        default. Users who set "Check automatically" in their settings keep their choice; False leaves
        only on-demand checks for the others, e.g. to limit model spending.""",
    ).tag(config=True)

    @default("model")
    def _model_default(self) -> str:
        return os.environ.get(MODEL_ENV, "")

    @default("api_key")
    def _api_key_default(self) -> SecretStr | None:
        value = os.environ.get(API_KEY_ENV, "")
        return SecretStr(value) if value else None

    @validate("categories")
    def _check_categories(self, proposal: Any) -> str:
        value = proposal["value"]
        if any(c not in "SRV" for c in value) or len(set(value)) != len(value):
            raise TraitError("CraneExtension.categories must be a subset of 'SRV', e.g. 'SR'")
        return "".join(c for c in "SRV" if c in value)

    @validate("votes")
    def _check_votes(self, proposal: Any) -> int:
        if proposal["value"] % 2 == 0:
            raise TraitError("CraneExtension.votes must be odd so the majority is strict")
        return int(proposal["value"])

    service: AnalysisService
    _background: list[asyncio.Task[Any]]

    def service_config(self) -> ServiceConfig:
        return ServiceConfig(
            model=self.model,
            api_base=self.api_base,
            api_key=self.api_key,
            response_format=self.response_format,
            allowed_models=list(self.allowed_models),
            votes=self.votes,
            temperature=self.temperature,
            llm_timeout=self.llm_timeout,
            extract_timeout=self.extract_timeout,
            token_budget=self.token_budget,
            max_columns=self.max_columns,
            probe_samples=self.probe_samples,
            categories=self.categories,
            docs=self.docs,
            auto_check=self.auto_check,
        )

    def initialize_settings(self) -> None:
        assert self.serverapp is not None
        self.service = AnalysisService(self.service_config(), self.serverapp.kernel_manager, logger=self.log)
        self._background = []
        self.log.info("crane: model %s", self.model or "(none: deterministic checks only)")

    def initialize_handlers(self) -> None:
        self.handlers.extend(routes())

    async def _start_jupyter_server_extension(self, serverapp: Any) -> None:
        loop = asyncio.get_running_loop()
        self._background = [loop.create_task(self._prune_loop())]
        if self.model or self.allowed_models:
            # litellm takes seconds to import: do it off the event loop now, not in the first request.
            self._background.append(loop.create_task(asyncio.to_thread(import_litellm)))

    async def _prune_loop(self) -> None:
        while True:
            await asyncio.sleep(PRUNE_INTERVAL_S)
            dropped = self.service.prune()
            if dropped:
                self.log.debug("crane: dropped %d kernel client(s) of kernels gone or restarted", dropped)

    async def stop_extension(self) -> None:
        for task in getattr(self, "_background", []):
            task.cancel()
        for task in getattr(self, "_background", []):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if hasattr(self, "service"):
            await self.service.close()
