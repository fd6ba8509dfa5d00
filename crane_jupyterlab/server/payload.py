"""Server side of the kernel payload: install it in a live kernel, call it without a trace, return JSON.

Each call is one `execute_request` with empty code, `silent=True, store_history=False,
stop_on_error=False`, and the probe call as its only `user_expressions` entry. Empty silent code does not
bump `execution_count`, does not touch `In`/`Out`/`_`/`_i`, and publishes nothing but the busy/idle
status. Two effects remain, shared by every frontend's silent request: ipykernel fires IPython's
`post_execute` event (the inline matplotlib backend's hook there is a no-op when nothing was drawn), and
`shell.last_execution_result` becomes the empty request's result. The probe call itself never raises in
the kernel, which would overwrite `sys.last_traceback` (the user's `%debug` state).

The payload is the package `crane_jupyterlab.kernel` (the modules of its `MANIFEST`). In the kernel it lives
in `sys.modules` as a private package whose name holds one hash of all its sources, so an upgraded
payload is installed beside the old one, which is dropped. The first request only looks the package up;
a fresh or restarted kernel answers `None` and the second request sends the sources and calls in one
expression. The result arrives as `application/json` through the envelope (`_repr_mimebundle_`,
`_repr_json_`): real JSON, never a parsed repr.

Use a kernel client that no one else reads the shell channel of: replies to other requests are dropped.
Calls on one client are serialised; calls on different clients (kernels) run concurrently.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import queue
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jupyter_client.asynchronous.client import AsyncKernelClient

from ..kernel import MANIFEST, envelope
from ..models import plain

__all__ = ["ExtractError", "KernelDead", "KernelTimeout", "ProbeError", "extract", "history", "invoke"]

# Name of our one entry in `user_expressions`.
_EXPRESSION = "crane"
# How often a pending request checks that the kernel is still alive (seconds).
_POLL = 0.25

_KERNEL = Path(envelope.__file__).parent


class ExtractError(Exception):
    """Runtime information could not be extracted from the kernel."""


class KernelTimeout(ExtractError):
    """No reply within the timeout (the kernel is busy or the probe is slow).

    The request stays queued in the kernel and runs, silently, when the kernel gets to it; its late reply
    is skipped by the next extraction on the same client.
    """


class KernelDead(ExtractError):
    """The kernel process is gone."""


class ProbeError(ExtractError):
    """The probe could not be installed or called; the message is the kernel's last traceback line."""


@dataclass(frozen=True)
class _Payload:
    key: str  # the package's name in sys.modules, with a hash of all the sources
    install_prefix: str  # the install expression but the call, which differs per request


class _Sources:
    """The payload's sources, re-read when a file changes (an upgrade while the server runs)."""

    def __init__(self, directory: Path = _KERNEL, manifest: tuple[str, ...] = MANIFEST) -> None:
        self.directory = directory
        self.manifest = manifest
        self._stamp: tuple[int, ...] = ()
        self._payload = _Payload("", "")

    def current(self) -> _Payload:
        paths = [self.directory / f"{name}.py" for name in self.manifest]
        try:
            stamp = tuple(n for st in map(Path.stat, paths) for n in (st.st_mtime_ns, st.st_size))
        except OSError as exc:
            raise ProbeError(f"payload source unavailable: {exc}") from exc
        if stamp != self._stamp:
            texts = [p.read_text(encoding="utf-8") for p in paths]
            digest = hashlib.sha256("\0".join(texts).encode()).hexdigest()[:16]
            key = envelope.PREFIX + digest
            # File names as in the source tree, so a traceback from the kernel names the module.
            sources = [
                (name, f"crane_jupyterlab/kernel/{name}.py", text)
                for name, text in zip(self.manifest, texts, strict=True)
            ]
            env_file, env_text = sources[self.manifest.index("envelope")][1:]
            self._payload = _Payload(
                key,
                f"(lambda t, e: (exec(compile({env_text!r}, {env_file!r}, 'exec'), e.__dict__), "
                f"e.install(t.ModuleType({key!r}), e, {sources!r}))[1])"
                f"(__import__('types'), __import__('types').ModuleType({key!r} + '.envelope'))",
            )
            self._stamp = stamp
        return self._payload


_SOURCES = _Sources()


def payload_key() -> str:
    """The payload's name in a kernel's `sys.modules`: changes whenever any of its sources changes."""
    return _SOURCES.current().key


_locks: weakref.WeakKeyDictionary[AsyncKernelClient, asyncio.Lock] = weakref.WeakKeyDictionary()


async def extract(
    kc: AsyncKernelClient, source: str, options: dict[str, Any] | None = None, timeout: float = 10.0
) -> dict[str, Any]:
    """Run the probe on `source` (the target cell, never executed) in the kernel behind `kc`.

    `options` are the probe's (docs/architecture.md). Raises `KernelTimeout` when no reply arrives
    within `timeout` seconds in all, `KernelDead` when the kernel process goes away, `ProbeError` when the
    probe fails to install or reports a failure, and `ValueError`/`TypeError` for bad arguments.
    """
    if not isinstance(source, str):
        raise TypeError(f"source must be str, not {type(source).__name__}")
    return await invoke(kc, "probe.run", f"{source!r}, {_options_literal(options)}", timeout)


async def invoke(kc: AsyncKernelClient, target: str, arguments: str, timeout: float = 10.0) -> dict[str, Any]:
    """Call `target` ("module.function" of the payload) with `arguments` (Python literals, comma
    separated, made by the caller from trusted values only) silently in the kernel behind `kc`, installing
    the payload first when the kernel lacks it. Errors as for `extract`."""
    if not isinstance(kc, AsyncKernelClient):
        raise TypeError(f"kc must be an AsyncKernelClient, not {type(kc).__name__}")
    if not (isinstance(timeout, (int, float)) and timeout > 0 and math.isfinite(timeout)):
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    call = f"invoke({target!r}, {arguments})"
    sources = _SOURCES.current()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    lock = _locks.setdefault(kc, asyncio.Lock())
    try:
        await asyncio.wait_for(lock.acquire(), timeout)
    except asyncio.TimeoutError:
        raise KernelTimeout(f"another request on this client did not finish within {timeout:g} s") from None
    try:
        try:
            return await _lookup_or_install(kc, sources, call, deadline, timeout)
        except _Aborted:
            # A user cell queued before ours failed and ipykernel aborted the queue; the kernel is
            # free again, so one more try is not a guess.
            try:
                return await _lookup_or_install(kc, sources, call, deadline, timeout)
            except _Aborted:
                raise ProbeError(
                    "the kernel aborted the request twice: cells queued before it failed"
                ) from None
    finally:
        lock.release()


class _Aborted(Exception):
    """ipykernel answered `aborted`: an earlier request in its queue failed."""


async def _lookup_or_install(
    kc: AsyncKernelClient, sources: _Payload, call: str, deadline: float, timeout: float
) -> dict[str, Any]:
    # Looking the module up with .get() keeps a missing module from raising in the kernel.
    lookup = (
        f"(lambda m: None if m is None else m.{call})"
        f"(__import__('sys').modules.get({sources.key + '.envelope'!r}))"
    )
    result: dict[str, Any] | None = await _evaluate(kc, lookup, deadline, timeout)
    if result is None:
        result = await _evaluate(kc, f"{sources.install_prefix}.{call}", deadline, timeout)
    if result is None:
        raise ProbeError("the payload did not install")
    return result


async def history(kc: AsyncKernelClient, timeout: float = 10.0) -> list[str]:
    """The kernel's executed cells (`In[1:]`) in execution order; our silent requests never appear."""
    result = await extract(kc, "", {"history": True}, timeout)
    cells = result.get("history")
    if not isinstance(cells, list) or not all(isinstance(c, str) for c in cells):
        raise ProbeError("the probe returned no history")
    return cells


def _options_literal(options: dict[str, Any] | None) -> str:
    """`options` as a Python literal; only JSON scalars, so the repr is exact and safe to evaluate."""
    if options is None:
        return "None"
    if not isinstance(options, dict):
        raise TypeError(f"options must be a dict, not {type(options).__name__}")
    for key, value in options.items():
        if not isinstance(key, str) or not key.isidentifier():
            raise ValueError(f"option names must be identifiers, got {key!r}")
        if not (value is None or isinstance(value, (bool, int, str))) and not (
            isinstance(value, float) and math.isfinite(value)
        ):
            raise ValueError(f"option {key!r} must be a bool, number, string or None, got {value!r}")
    return repr(options)


async def _evaluate(kc: AsyncKernelClient, expression: str, deadline: float, timeout: float) -> Any:
    """Evaluate `expression` silently in the kernel: its application/json, or None for a None value."""
    msg_id = kc.execute(
        "",
        silent=True,
        store_history=False,
        user_expressions={_EXPRESSION: expression},
        allow_stdin=False,
        stop_on_error=False,
    )
    content = await _reply(kc, msg_id, deadline, timeout)
    if content.get("status") == "aborted":
        raise _Aborted
    if content.get("status") != "ok":
        raise ProbeError(f"request {content.get('status')}: {content.get('ename')}: {content.get('evalue')}")
    value = content.get("user_expressions", {}).get(_EXPRESSION)
    if not isinstance(value, dict):
        raise ProbeError("the reply carries no value for the probe expression")
    if value.get("status") != "ok":
        raise ProbeError(_last_traceback_line(value))
    data = value.get("data", {})
    if "application/json" in data:
        result = data["application/json"]
        if isinstance(result, str):  # some frontends' packers hand JSON over as text
            result = json.loads(result)
        if not isinstance(result, dict):
            raise ProbeError("the probe result is not a JSON object")
        if envelope.ERROR_KEY in result:
            raise ProbeError(str(result[envelope.ERROR_KEY]))
        return result
    if data.get("text/plain") == "None":
        return None
    raise ProbeError("the reply carries no application/json result")


async def _reply(kc: AsyncKernelClient, msg_id: str, deadline: float, timeout: float) -> dict[str, Any]:
    """The content of the execute_reply to `msg_id`; other messages on this client's shell are dropped."""
    loop = asyncio.get_running_loop()
    while True:
        remaining = deadline - loop.time()
        if remaining <= 0:
            raise KernelTimeout(f"no reply from the kernel within {timeout:g} s")
        try:
            msg = await kc.get_shell_msg(timeout=min(remaining, _POLL))
        except queue.Empty:
            if not await kc.is_alive():
                raise KernelDead("the kernel died") from None
            continue
        if msg.get("parent_header", {}).get("msg_id") == msg_id and msg.get("msg_type") == "execute_reply":
            content: dict[str, Any] = msg["content"]
            return content


def _last_traceback_line(value: dict[str, Any]) -> str:
    lines = [line for frame in value.get("traceback") or [] for line in plain(frame).splitlines()]
    lines = [line.strip() for line in lines if line.strip()]
    return lines[-1] if lines else f"{value.get('ename')}: {value.get('evalue')}"
