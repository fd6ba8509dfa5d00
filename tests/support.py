"""Helpers shared by the test folders (plain functions and constants; fixtures live in conftest.py files).

Kept out of conftest.py because each test folder has a conftest of its own, and `from conftest import`
would pick whichever was loaded last.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from llm_stub import Reply, answer

# The shared suites (never copied into the repository): beside the clone, or where CRANE_SHARED says.
SHARED = Path(os.environ.get("CRANE_SHARED") or Path(__file__).resolve().parents[2] / "shared")

STUB_MODEL = "openai/stub-model"
# Looks like a real key on purpose: the leak tests search every body and log line for it.
STUB_KEY = "sk-crane-test-7f3a9c1e5b2d4f60a8e1c3b5d7f9a2c4"

# checks(source, namespace) -> what the checks report (tests/checks/conftest.py)
Checker = Callable[[str, dict[str, Any]], list[str]]


def crash_if(*markers: str, reasoning: str = "stub") -> Callable[[dict[str, Any]], Reply]:
    """A stub reply rule: predict a crash when the prompt contains every marker. It stands for a model
    that reads the runtime facts, so the tests can check the facts actually reached the prompt."""

    def rule(body: dict[str, Any]) -> Reply:
        prompt = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        crash = all(marker in prompt for marker in markers)
        return answer(crash, f"{reasoning}: {'crash' if crash else 'fine'}")

    return rule


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


class CountingServer:
    """A TCP server on 127.0.0.1 that counts the connections it accepts (the network edge of the test)."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.count = 0
        self.sock.settimeout(0.2)
        self.running = True
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while self.running:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.count += 1
            with contextlib.suppress(OSError):
                conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok")
            conn.close()

    def close(self) -> None:
        self.running = False
        self.thread.join()
        self.sock.close()


def processes_with(mark: str) -> list[int]:
    """The pids of the processes whose command line holds `mark` (what a test's cells started)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                if mark.encode() in Path(f"/proc/{entry}/cmdline").read_bytes():
                    found.append(int(entry))
    return found
