"""Shared fixtures: a real jupyter_server with the crane extension, real kernels, a stub LLM.

Server tests ask for `jp_fetch` (pytest-jupyter) and get a server configured by `crane_config`
(override it in a test module or with `@pytest.mark.parametrize(..., indirect=True)`); kernels are
started through the server's own kernel manager with `kernels.start()`.

    async def test_x(jp_fetch, kernels):
        k = await kernels.start("import numpy as np\\nx = np.zeros((3, 4))")
        code, body = await analyze(jp_fetch, k.id, "x[:, 5]")
"""

from __future__ import annotations

import asyncio
import json
import os
import queue
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from jupyter_client.session import Session
from llm_stub import Reply, StubLLM, answer

pytest_plugins = ["pytest_jupyter.jupyter_server"]

# The shared suites (never copied into the repository): beside the clone, or where CRANE_SHARED says.
SHARED = Path(os.environ.get("CRANE_SHARED") or Path(__file__).resolve().parents[2] / "shared")

STUB_MODEL = "openai/stub-model"
# Looks like a real key on purpose: the leak tests search every body and log line for it.
STUB_KEY = "sk-crane-test-7f3a9c1e5b2d4f60a8e1c3b5d7f9a2c4"


@pytest.fixture
async def jp_asyncio_loop() -> asyncio.AbstractEventLoop:
    """Run pytest-jupyter's server on pytest-asyncio's loop (asyncio_mode = auto runs every async test
    there); with two loops, `jp_fetch` waits on a loop that never runs and times out."""
    return asyncio.get_running_loop()


# --------------------------------------------------------------------------------------------------
# The stub LLM (the network edge) and the server configuration
# --------------------------------------------------------------------------------------------------


def crash_if(*markers: str, reasoning: str = "stub") -> Callable[[dict[str, Any]], Reply]:
    """A stub reply rule: predict a crash when the prompt contains every marker. It stands for a model
    that reads the runtime facts, so the tests can check the facts actually reached the prompt."""

    def rule(body: dict[str, Any]) -> Reply:
        prompt = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        crash = all(marker in prompt for marker in markers)
        return answer(crash, f"{reasoning}: {'crash' if crash else 'fine'}")

    return rule


@pytest.fixture
def llm_stub() -> Iterator[StubLLM]:
    """An OpenAI-compatible server on 127.0.0.1; by default it always answers "no crash"."""
    with StubLLM(answer(False, "stub: fine")) as stub:
        yield stub


@pytest.fixture
def crane_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The key comes from the environment, as in production: a key written into the server config
    would be echoed by jupyter_server's own debug log of its config."""
    monkeypatch.setenv("CRANE_API_KEY", STUB_KEY)
    monkeypatch.delenv("CRANE_MODEL", raising=False)


@pytest.fixture
def crane_config(llm_stub: StubLLM, crane_env: None) -> dict[str, Any]:
    """`CraneExtension` traits of the test server: the stub as its model. Override per module/test."""
    return {"model": STUB_MODEL, "api_base": llm_stub.url, "llm_timeout": 20.0}


@pytest.fixture
def jp_server_config(crane_config: dict[str, Any]) -> dict[str, Any]:
    return {
        "ServerApp": {
            # Terminals off: their websocket handler trips the unauthenticated-endpoint warning.
            "jpserver_extensions": {"crane_jupyterlab": True, "jupyter_server_terminals": False},
            "allow_unauthenticated_access": False,
        },
        "CraneExtension": crane_config,
    }


@pytest.fixture
def crane_ext(jp_serverapp: Any) -> Any:
    """The running `CraneExtension` instance."""
    return jp_serverapp.extension_manager.extension_points["crane_jupyterlab"].app


# --------------------------------------------------------------------------------------------------
# Kernels, through the server's own kernel manager
# --------------------------------------------------------------------------------------------------


@dataclass
class Kernel:
    """A kernel of the test server and a client of our own that plays the user's notebook."""

    id: str
    manager: Any
    client: Any

    async def run(self, code: str, timeout: float = 60.0) -> dict[str, Any]:
        """Execute `code` as a notebook cell would (stored in history); the execute_reply content."""
        msg_id = self.client.execute(code)
        content = await self.reply(msg_id, timeout)
        await self.wait_state("idle")  # as a frontend would see it, before it asks for anything else
        return content

    def submit(self, code: str) -> str:
        """Start `code` without waiting for it (to keep the kernel busy)."""
        msg_id: str = self.client.execute(code)
        return msg_id

    async def reply(self, msg_id: str, timeout: float = 60.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"no execute_reply to {msg_id} within {timeout} s")
            try:
                msg = await self.client.get_shell_msg(timeout=remaining)
            except queue.Empty:
                continue
            if msg["parent_header"].get("msg_id") == msg_id:
                content: dict[str, Any] = msg["content"]
                if content.get("status") != "ok":
                    raise AssertionError(f"cell failed: {content.get('ename')}: {content.get('evalue')}")
                return content

    async def value(self, expression: str) -> str:
        """`repr`-ish text of an expression, evaluated without touching history (user_expressions)."""
        msg_id = self.client.execute("", silent=True, store_history=False, user_expressions={"v": expression})
        content = await self.reply(msg_id)
        await self.wait_state("idle")
        result: str = content["user_expressions"]["v"]["data"]["text/plain"]
        return result

    @property
    def state(self) -> str:
        return str(self.manager.get_kernel(self.id).execution_state)

    async def wait_state(self, state: str, timeout: float = 30.0) -> None:
        """Until jupyter_server reports `state` for this kernel."""
        deadline = time.monotonic() + timeout
        while self.state != state:
            if time.monotonic() > deadline:
                raise TimeoutError(f"kernel stayed {self.state!r}, expected {state!r}")
            await asyncio.sleep(0.01)


class Kernels:
    """Starts kernels on the test server; stops their clients at teardown (the server stops kernels)."""

    def __init__(self, serverapp: Any) -> None:
        self.manager = serverapp.kernel_manager
        self.started: list[Kernel] = []

    async def start(self, *cells: str) -> Kernel:
        kernel_id = await self.manager.start_kernel(kernel_name="python3")
        manager = self.manager.get_kernel(kernel_id)
        # Own session: clients sharing the manager's session share a zmq identity and steal replies.
        session = Session(key=manager.session.key, signature_scheme=manager.session.signature_scheme)
        client = manager.client(session=session)
        client.start_channels()
        await client.wait_for_ready(timeout=90)
        kernel = Kernel(kernel_id, self.manager, client)
        self.started.append(kernel)
        for cell in cells:
            await kernel.run(cell)
        await kernel.wait_state("idle")
        return kernel

    def close(self) -> None:
        for kernel in self.started:
            kernel.client.stop_channels()


@pytest.fixture
async def kernels(jp_serverapp: Any) -> AsyncIterator[Kernels]:
    pool = Kernels(jp_serverapp)
    yield pool
    pool.close()


# --------------------------------------------------------------------------------------------------
# Calling the API
# --------------------------------------------------------------------------------------------------


async def analyze(
    jp_fetch: Any, kernel_id: str, source: str, *, timeout: float = 60.0, **fields: Any
) -> tuple[int, dict[str, Any]]:
    """POST /crane/analyze; (HTTP status, JSON body) whatever the status. The first model call of a
    server imports litellm (seconds on a loaded machine), hence the generous timeout."""
    body = {"kernel_id": kernel_id, "source": source, **fields}
    return await post_json(jp_fetch, ["crane", "analyze"], body, request_timeout=timeout)


async def post_json(jp_fetch: Any, path: list[str], body: Any, **kwargs: Any) -> tuple[int, dict[str, Any]]:
    raw = body if isinstance(body, (str, bytes)) else json.dumps(body)
    response = await jp_fetch(*path, method="POST", body=raw, raise_error=False, **kwargs)
    return response.code, json.loads(response.body or b"{}")
