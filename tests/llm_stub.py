"""A stdlib OpenAI-compatible chat server on 127.0.0.1 for tests: the network edge, nothing more.

Use it from any test (pytest puts `tests/` on sys.path):

    from llm_stub import Reply, StubLLM, answer

    with StubLLM(answer(True, "x is undefined")) as stub:
        backend = LiteLLMBackend("openai/stub", api_base=stub.url, api_key="sk-test")
        ...
        assert len(stub.requests) == 1

What it can do:
- `default`: the reply used once `script` is exhausted (a `Reply`, or a plain string = the assistant's
  message content, or a callable taking the request body and returning either).
- `script`: replies served in order, one per request (e.g. `[Reply(status=429), answer(True)]`).
- `latency`: seconds every reply waits before it is sent (per-`Reply` `latency` wins).
- `Reply(status=401/429/500, ...)`: an OpenAI-style error body with that status.
- `Reply(body=...)`: a raw body sent as is (malformed JSON, truncated JSON, an empty `choices` list).
- `requests`: every request received (`path`, `headers` with lower-case names, parsed `body`), in
  arrival order;
  `max_concurrent` is the most requests it was holding at one time.
- `closed_port_url()`: a URL whose port has nothing listening (for "unreachable").

Run `python tests/llm_stub.py --port 8099 --answer '{"reasoning": "ok", "detection": false}'` to serve by
hand (Ctrl-C stops it).
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """One scripted response."""

    content: str | None = None  # the assistant message content (for status 200)
    status: int = 200
    body: str | bytes | None = None  # raw body, sent instead of a generated one
    latency: float | None = None
    headers: dict[str, str] = field(default_factory=dict)
    finish_reason: str = "stop"
    prompt_tokens: int = 100
    completion_tokens: int = 20


def answer(detection: bool, reasoning: str = "stub reasoning", **extra: Any) -> Reply:
    """A well-formed CRANE answer as the assistant's content."""
    return Reply(content=json.dumps({"reasoning": reasoning, "detection": detection, **extra}))


ReplySource = Reply | str | Callable[[dict[str, Any]], "Reply | str"]

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "invalid_api_key",
    403: "permission_denied",
    404: "not_found",
    429: "rate_limit_exceeded",
    500: "server_error",
    503: "service_unavailable",
}


class StubLLM:
    """The server. Start with `start()` or a `with` block; `stop()` releases waiting replies at once."""

    def __init__(
        self,
        default: ReplySource | None = None,
        *,
        script: list[Reply | str] | None = None,
        latency: float = 0.0,
        model: str = "stub-model",
        port: int = 0,
    ):
        self.default: ReplySource = default if default is not None else answer(False)
        self.script: list[Reply | str] = list(script or [])
        self.latency = latency
        self.model = model
        self.requests: list[dict[str, Any]] = []
        self.max_concurrent = 0
        self._active = 0
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._ids = itertools.count(1)
        self._server = ThreadingHTTPServer(("127.0.0.1", port), self._handler_class())
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """The `api_base` to give an OpenAI client (ends in /v1)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> StubLLM:
        self._thread = threading.Thread(target=self._server.serve_forever, name="llm-stub", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> StubLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _next_reply(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            source: ReplySource = self.script.pop(0) if self.script else self.default
        if callable(source) and not isinstance(source, Reply):
            source = source(body)
        return Reply(content=source) if isinstance(source, str) else source

    def _render(self, reply: Reply) -> bytes:
        if reply.body is not None:
            return reply.body.encode() if isinstance(reply.body, str) else reply.body
        if reply.status != 200:
            kind = _ERROR_TYPES.get(reply.status, "error")
            return json.dumps(
                {"error": {"message": f"stub error {reply.status}", "type": kind, "code": kind}}
            ).encode()
        return json.dumps(
            {
                "id": f"chatcmpl-stub-{next(self._ids)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": self.model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": reply.content},
                        "finish_reason": reply.finish_reason,
                    }
                ],
                "usage": {
                    "prompt_tokens": reply.prompt_tokens,
                    "completion_tokens": reply.completion_tokens,
                    "total_tokens": reply.prompt_tokens + reply.completion_tokens,
                },
            }
        ).encode()

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
                pass

            def _send(self, status: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                # The client may have given up already (a timeout test).
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(payload)

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, json.dumps({"object": "list", "data": [{"id": stub.model}]}).encode())
                else:
                    self._send(404, b'{"error": {"message": "not found"}}')

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    body = {"_unparsed": raw.decode("utf-8", "replace")}
                with stub._lock:
                    headers = {name.lower(): value for name, value in self.headers.items()}
                    stub.requests.append({"path": self.path, "headers": headers, "body": body})
                    stub._active += 1
                    stub.max_concurrent = max(stub.max_concurrent, stub._active)
                try:
                    reply = stub._next_reply(body)
                    delay = reply.latency if reply.latency is not None else stub.latency
                    if delay > 0 and stub._stopping.wait(delay):
                        return
                    self._send(reply.status, stub._render(reply), reply.headers)
                finally:
                    with stub._lock:
                        stub._active -= 1

        return Handler


def closed_port_url() -> str:
    """An api_base on 127.0.0.1 whose port nothing listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def main() -> None:
    parser = argparse.ArgumentParser(description="Serve a fixed OpenAI-compatible chat answer.")
    parser.add_argument("--port", type=int, default=8099)
    parser.add_argument("--answer", default='{"reasoning": "stub", "detection": false}')
    parser.add_argument("--latency", type=float, default=0.0)
    args = parser.parse_args()
    stub = StubLLM(args.answer, latency=args.latency, port=args.port).start()
    print(f"serving on {stub.url}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        stub.stop()


if __name__ == "__main__":
    main()
