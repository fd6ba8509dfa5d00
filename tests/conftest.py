"""Fixtures shared by every test folder: pytest-jupyter's server fixtures on pytest-asyncio's loop, and the
stub LLM on 127.0.0.1 (the network edge). Each folder's conftest.py adds its own."""

from __future__ import annotations

import asyncio
import functools
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from llm_stub import StubLLM, answer

pytest_plugins = ["pytest_jupyter.jupyter_server"]

_TENSORFLOW = re.compile(
    r"^\s*(import|from) (tensorflow|keras)\b|importorskip\(\"(tensorflow|keras)\"\)", re.M
)


@functools.cache
def _starts_tensorflow(path: Path) -> bool:
    """Whether a test module may start TensorFlow's runtime in this process."""
    try:
        return bool(_TENSORFLOW.search(path.read_text(encoding="utf-8")))
    except OSError:
        return False


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Modules that start TensorFlow's runtime in the test process run last. A fork of a process whose
    TensorFlow threads run may abort on a lock one of them held (abseil's mutex check): the product hands
    such a cell to a worker, but the tests that fork this process to check what a trial observes would
    otherwise meet it at random, after whichever module started the runtime first."""
    items.sort(key=lambda item: _starts_tensorflow(Path(str(item.path))))


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
