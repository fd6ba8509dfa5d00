"""Fixtures of the server tests: a real jupyter_server with the crane extension (the stub LLM as its model)
and real kernels started through the server's own kernel manager.

    async def test_x(jp_fetch, kernels):
        k = await kernels.start("import numpy as np\nx = np.zeros((3, 4))")
        code, body = await analyze(jp_fetch, k.id, "x[:, 5]")
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
from jupyter_client.session import Session
from llm_stub import StubLLM
from support import STUB_KEY, STUB_MODEL

from crane_jupyterlab.bench.kernels import wait_reply


@pytest.fixture
def crane_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The key comes from the environment, as in production: a key written into the server config
    would be echoed by jupyter_server's own debug log of its config."""
    monkeypatch.setenv("CRANE_API_KEY", STUB_KEY)
    monkeypatch.delenv("CRANE_MODEL", raising=False)


@pytest.fixture
def crane_config(llm_stub: StubLLM, crane_env: None) -> dict[str, Any]:
    """`CraneExtension` traits of the test server: the stub as its model. Override per module/test.
    Trial runs and the replica judge are off: these tests check what the model and the rules decide (an
    observed trial outcome or the replicas would decide first); test_handlers_trial.py and
    test_handlers_replica.py turn them on."""
    return {
        "model": STUB_MODEL,
        "api_base": llm_stub.url,
        "llm_timeout": 20.0,
        "trial": "off",
        "replicas": False,
    }


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
        content = await wait_reply(self.client, msg_id, timeout)
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
