"""The jupyter_server extension: configuration traits, the analysis service, its background work."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import typing
from typing import Any

from jupyter_server.extension.application import ExtensionApp
from pydantic import SecretStr
from traitlets import Bool, Enum, Float, Int, List, TraitError, TraitType, Unicode, default, validate

from ..llm import litellm
from .config import ServiceConfig, trial_availability
from .handlers import routes
from .service import AnalysisService
from .trial import platform_sandbox

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


def config_traits() -> dict[str, Any]:
    """One configurable trait per `ServiceConfig` field, with its help, bounds, dynamic default and
    check, plus the traitlets handlers those need (to be placed in the class body)."""
    hints = typing.get_type_hints(ServiceConfig)
    namespace: dict[str, Any] = {}
    for f in dataclasses.fields(ServiceConfig):
        meta = f.metadata
        help_text = meta["help"]
        static = None if f.default is dataclasses.MISSING else f.default
        kind = hints[f.name]
        trait: TraitType[Any, Any]
        if meta["secret"]:
            trait = Secret(help=help_text)
        elif meta["choices"]:
            trait = Enum(list(meta["choices"]), static, help=help_text)
        elif kind is bool:
            trait = Bool(static, help=help_text)
        elif kind is int:
            trait = Int(static, min=meta["low"], max=meta["high"], help=help_text)
        elif kind is float:
            trait = Float(static, min=meta["low"], max=meta["high"], help=help_text)
        elif kind is str:
            trait = Unicode(static if static is not None else "", help=help_text)
        elif kind == list[str]:
            trait = List(Unicode(), help=help_text)
        else:  # pragma: no cover - a new field type needs a line above
            raise TypeError(f"no trait for ServiceConfig.{f.name}: {kind}")
        namespace[f.name] = trait.tag(config=True)
        factory = f.default_factory
        if factory is not dataclasses.MISSING and kind != list[str]:
            namespace[f"_{f.name}_default"] = default(f.name)(lambda self, make=factory: make())
        if meta["check"] is not None:
            namespace[f"_check_{f.name}"] = validate(f.name)(
                lambda self, proposal, check=meta["check"], name=f.name: _checked(check, name, proposal)
            )
    return namespace


def _checked(check: Any, name: str, proposal: Any) -> Any:
    try:
        return check(proposal["value"])
    except ValueError as exc:
        raise TraitError(f"CraneExtension.{name}: {exc}") from None


class CraneExtension(ExtensionApp):
    """Predicts whether a notebook cell will crash, from the notebook's live kernel state."""

    name = "crane_jupyterlab"

    # The options are declared once, as ServiceConfig's fields (config.py); the class body takes the
    # traits made from them, so traitlets sees them as this class's own.
    locals().update(config_traits())

    service: AnalysisService
    _background: list[asyncio.Task[Any]]

    def service_config(self) -> ServiceConfig:
        return ServiceConfig(**{f.name: getattr(self, f.name) for f in dataclasses.fields(ServiceConfig)})

    def initialize_settings(self) -> None:
        assert self.serverapp is not None
        config = self.service_config()
        self.service = AnalysisService(config, self.serverapp.kernel_manager, logger=self.log)
        self._background = []
        self.log.info("crane: model %s", config.model or "(none: deterministic checks only)")
        available, why = trial_availability(config)
        self.log.info(
            "crane: trial runs %s (%s)",
            config.trial,
            platform_sandbox().sandbox or "audit hooks only" if available else why,
        )

    def initialize_handlers(self) -> None:
        self.handlers.extend(routes())

    async def _start_jupyter_server_extension(self, serverapp: Any) -> None:
        loop = asyncio.get_running_loop()
        self._background = [loop.create_task(self._prune_loop())]
        if self.service.config.allowed():
            # litellm takes seconds to import: do it off the event loop now, not in the first request.
            self._background.append(loop.create_task(asyncio.to_thread(litellm)))
        if self.service.config.replicas and platform_sandbox().available:
            # The replica judge's process imports its libraries for seconds: now, not at the first cell.
            from ..checks import replica

            replica.warm_up()

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
