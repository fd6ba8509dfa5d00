"""Fresh ipykernels of the current interpreter, for the benchmarks and the tests."""

from __future__ import annotations

import asyncio
import os
import queue
import sys
import tempfile
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

from jupyter_client.asynchronous.client import AsyncKernelClient
from jupyter_client.kernelspec import KernelSpec, KernelSpecManager
from jupyter_client.manager import AsyncKernelManager

# Figures are drawn after each cell as in a notebook; TensorFlow keeps its C++ log lines to itself.
KERNEL_ENV = {
    "MPLBACKEND": "module://matplotlib_inline.backend_inline",
    "TF_CPP_MIN_LOG_LEVEL": "2",
    "PYDEVD_DISABLE_FILE_VALIDATION": "1",
}


class CellFailed(Exception):
    """An executed cell raised (or the kernel refused it)."""


class _ThisInterpreter(KernelSpecManager):
    """Always this interpreter's ipykernel, whatever kernelspecs the user has installed."""

    def get_kernel_spec(self, kernel_name: str) -> KernelSpec:
        return KernelSpec(
            argv=[sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            display_name="Python (crane-bench)",
            language="python",
            resource_dir="",
        )


@asynccontextmanager
async def fresh_kernel(
    *, cwd: str | None = None, env: Mapping[str, str] | None = None, startup_timeout: float = 120.0
) -> AsyncIterator[tuple[AsyncKernelManager, AsyncKernelClient]]:
    """A new kernel and a started client, shut down (and the client closed) on exit."""
    # IPC sockets (local only, and no "running over TCP without encryption" warning per kernel) under an
    # absolute path, as the kernel's working directory is not ours.
    with tempfile.TemporaryDirectory(prefix="crane-kernel-", ignore_cleanup_errors=True) as sockets:
        km = AsyncKernelManager(
            kernel_spec_manager=_ThisInterpreter(),
            kernel_name="python3",
            transport="ipc",
            ip=os.path.join(sockets, "k"),
        )
        kernel_env = {**os.environ, **KERNEL_ENV, **(env or {})}
        await km.start_kernel(cwd=cwd or os.getcwd(), env=kernel_env)
        kc: AsyncKernelClient = km.client()
        try:
            kc.start_channels()
            await kc.wait_for_ready(timeout=startup_timeout)
            yield km, kc
        finally:
            kc.stop_channels()
            await km.shutdown_kernel(now=True)


async def run_cell(
    kc: AsyncKernelClient, code: str, timeout: float = 300.0, outputs: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """Execute `code` as a notebook cell would be (counted, in history); the execute_reply content.

    Raises `CellFailed` with the exception's first line when the cell raises, `TimeoutError` when no reply
    comes within `timeout` seconds. IOPub is drained so outputs do not pile up in the client; pass
    `outputs` to receive this cell's IOPub messages instead.
    """
    msg_id = kc.execute(code, silent=False, store_history=True, allow_stdin=False, stop_on_error=True)
    content = await wait_reply(kc, msg_id, timeout)
    if outputs is None:
        await drain_iopub(kc)
    else:
        outputs.extend(await iopub_of(kc, msg_id))
    if content.get("status") != "ok":
        evalue = str(content.get("evalue", "")).strip().splitlines()
        raise CellFailed(f"{content.get('ename')}: {evalue[0] if evalue else ''}")
    return content


async def wait_reply(kc: AsyncKernelClient, msg_id: str, timeout: float) -> dict[str, Any]:
    """The content of the shell reply to `msg_id`; other replies on this client are dropped."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        remaining = deadline - loop.time()
        if remaining <= 0:
            raise TimeoutError(f"cell did not finish within {timeout:g} s")
        try:
            msg = await kc.get_shell_msg(timeout=min(remaining, 1.0))
        except queue.Empty:
            if not await kc.is_alive():
                raise CellFailed("the kernel died") from None
            continue
        if msg["parent_header"].get("msg_id") == msg_id:
            content: dict[str, Any] = msg["content"]
            return content


async def iopub_of(kc: AsyncKernelClient, *msg_ids: str, timeout: float = 10.0) -> list[dict[str, Any]]:
    """The IOPub messages the requests caused, up to each one's idle status (others' are dropped)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    pending = set(msg_ids)
    msgs = []
    while pending and loop.time() < deadline:
        try:
            msg = await kc.get_iopub_msg(timeout=max(deadline - loop.time(), 0.0))
        except queue.Empty:
            break
        parent = msg["parent_header"].get("msg_id")
        if parent not in msg_ids:
            continue
        msgs.append(msg)
        if msg["msg_type"] == "status" and msg["content"].get("execution_state") == "idle":
            pending.discard(parent)
    if pending:
        raise TimeoutError(f"no idle status for {sorted(pending)} within {timeout:g} s")
    return msgs


async def drain_iopub(kc: AsyncKernelClient) -> list[dict[str, Any]]:
    """Every IOPub message already received, without waiting."""
    msgs = []
    while True:
        try:
            msgs.append(await kc.get_iopub_msg(timeout=0))
        except queue.Empty:
            return msgs
