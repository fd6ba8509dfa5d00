"""REST handlers: `POST /crane/analyze`, `GET /crane/config`, and runs from the top (`/crane/notebook`).

Thin on purpose: validate the body, call the service, map its typed errors to statuses. Every method is
`@tornado.web.authenticated` (tests/test_handlers_auth.py fails the build otherwise).

`POST /crane/analyze` answers (bodies are the pydantic models of `api`):
- 200 `status` "ok" (`verdict.source`: trial, syntax, checks, llm; `trial` carries the trial run's
  outcome when one ran), "no_model" (the checks' verdict and a
  `hint`), "llm_error" (`error.kind/message`, the runtime facts, and a checks verdict when they found a
  certain crash, else `verdict` null), "superseded" (a newer request for the same cell_id won), or
  "incomplete" (asked with `typing`, and the cell is still being typed: no verdict);
- 400 malformed body, `field` names the culprit; 403 a model outside the allow-list; 404 unknown or dead
  kernel; 409 `{"status": "busy"}` the kernel runs user code (never queued, never interrupted);
  502/504 the probe failed / the kernel did not answer it.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Protocol

import tornado.web
from jupyter_server.base.handlers import APIHandler
from jupyter_server.extension.handler import ExtensionHandlerMixin
from pydantic import BaseModel, ValidationError

from ..api import AnalyzeRequest, AnalyzeResult, NotebookRequest, StatusReply
from ..checks.cell import unfinished
from . import fromtop
from .config import config_reply, key_status
from .errors import AnalysisError, Superseded

if TYPE_CHECKING:
    from .service import AnalysisService


class Crane(Protocol):
    """What the handlers read of the extension that serves them (CraneExtension, app.py)."""

    service: AnalysisService


class CraneHandler(ExtensionHandlerMixin, APIHandler):
    """Shared plumbing of the crane handlers."""

    @property
    def crane(self) -> Crane:
        app: Crane = self.extensionapp  # type: ignore[assignment]
        return app

    def reply(self, model: BaseModel, status: int = 200, exclude_none: bool = False) -> None:
        self.set_status(status)
        self.finish(model.model_dump_json(exclude_none=exclude_none))


class AnalyzeHandler(CraneHandler):
    """Analyze one cell against the live kernel of its notebook."""

    _task: asyncio.Future[AnalyzeResult] | None = None
    _gone = False

    def on_connection_close(self) -> None:
        self._gone = True
        if self._task is not None and not self._task.done():
            self._task.cancel()

    @tornado.web.authenticated
    async def post(self) -> None:
        try:
            body = json.loads(self.request.body or b"null")
        except ValueError as exc:
            reply = StatusReply(status="error", message=f"body is not JSON: {exc}", field="body")
            self.reply(reply, 400, True)
            return
        try:
            request = AnalyzeRequest.model_validate(body)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "body"
            message = f"{where}: {first['msg']}"
            self.reply(StatusReply(status="error", message=message, field=where), 400, True)
            return
        if request.typing and unfinished(request.source):
            # Half-typed code is no crash: no red while the user types, nothing in the kernel either.
            self.reply(StatusReply(status="incomplete", message="the cell is not finished yet"), 200, True)
            return
        # A task, so a client that goes away (the cell was edited, the page closed) cancels the work
        # and the model call with it.
        self._task = asyncio.ensure_future(self.crane.service.analyze(request))
        try:
            result = await self._task
        except asyncio.CancelledError:
            if self._gone:
                return  # on_connection_close cancelled it: nobody is listening
            raise
        except Superseded:
            self.reply(StatusReply(status="superseded"), 200, True)
            return
        except AnalysisError as exc:
            reply = StatusReply(status="busy" if exc.status == 409 else "error", message=exc.message)
            self.reply(reply, exc.status, True)
            return
        self.reply(result)


class NotebookHandler(CraneHandler):
    """`POST /crane/notebook`: run the notebook's code cells from the top in a fresh sandboxed worker of
    the kernel's Python (fromtop.py). 202 `{"id"}`; 409 `{"status": "busy", "message", "field": the id of
    the run in progress}` while a run for that kernel is in progress; 404 an unknown kernel; 403 trial
    runs are off on this server; 400 a malformed body."""

    @tornado.web.authenticated
    async def post(self) -> None:
        try:
            request = NotebookRequest.model_validate_json(self.request.body or b"null")
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "body"
            self.reply(
                StatusReply(status="error", message=f"{where}: {first['msg']}", field=where), 400, True
            )
            return
        try:
            run = self.crane.service.start_notebook(request)
        except fromtop.Conflict as exc:
            message = f"a run from the top is in progress for this kernel ({exc.run_id})"
            # `field` names the run in progress: a second tab or a reloaded page can follow it
            self.reply(StatusReply(status="busy", message=message, field=exc.run_id), 409, True)
            return
        except AnalysisError as exc:
            self.reply(StatusReply(status="error", message=exc.message), exc.status, True)
            return
        self.set_status(202)
        self.finish({"id": run.id})


class NotebookRunHandler(CraneHandler):
    """`GET /crane/notebook/{id}`: the run (state, done of total, the cells' outcomes, the first crash);
    `DELETE` cancels it. 404 for an id this server does not know."""

    @tornado.web.authenticated
    async def get(self, run_id: str) -> None:
        run = self.crane.service.runs.get(run_id)
        if run is None:
            self.reply(StatusReply(status="error", message=f"no run {run_id!r}"), 404, True)
            return
        self.reply(run)

    @tornado.web.authenticated
    async def delete(self, run_id: str) -> None:
        run = await self.crane.service.runs.cancel(run_id)
        if run is None:
            self.reply(StatusReply(status="error", message=f"no run {run_id!r}"), 404, True)
            return
        self.reply(run)


class ConfigHandler(CraneHandler):
    """The effective defaults, for the settings UI. Never includes a key."""

    @tornado.web.authenticated
    async def get(self) -> None:
        config = self.crane.service.config
        keys = await asyncio.to_thread(key_status, config) if config.model else None
        # In a thread: the first call probes the machine's sandbox in a separate process.
        self.reply(await asyncio.to_thread(config_reply, config, keys))


def routes() -> list[tuple[str, type[CraneHandler]]]:
    """URL patterns, relative to the server's base_url."""
    return [
        (r"/crane/analyze", AnalyzeHandler),
        (r"/crane/config", ConfigHandler),
        (r"/crane/notebook", NotebookHandler),
        (r"/crane/notebook/([0-9a-f]{1,64})", NotebookRunHandler),
    ]
