"""Fixtures shared by every test folder: pytest-jupyter's server fixtures on pytest-asyncio's loop, and the
stub LLM on 127.0.0.1 (the network edge). Each folder's conftest.py adds its own."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from llm_stub import StubLLM, answer

pytest_plugins = ["pytest_jupyter.jupyter_server"]


@pytest.fixture
async def jp_asyncio_loop() -> asyncio.AbstractEventLoop:
    """Run pytest-jupyter's server on pytest-asyncio's loop (asyncio_mode = auto runs every async test
    there); with two loops, `jp_fetch` waits on a loop that never runs and times out."""
    return asyncio.get_running_loop()


@pytest.fixture
def llm_stub() -> Iterator[StubLLM]:
    """An OpenAI-compatible server on 127.0.0.1; by default it always answers "no crash"."""
    with StubLLM(answer(False, "stub: fine")) as stub:
        yield stub
