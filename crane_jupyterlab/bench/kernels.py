"""Fresh ipykernels of the current interpreter, for the benchmarks and the tests, and notebook cells run in
them as Jupyter runs them (`execute`, `run_cells`: crane-bench notebooks and chain)."""

from __future__ import annotations

import asyncio
import os
import queue
import re
import sys
import sysconfig
import tempfile
import time
from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from jupyter_client.asynchronous.client import AsyncKernelClient
from jupyter_client.kernelspec import KernelSpec, KernelSpecManager
from jupyter_client.manager import AsyncKernelManager

from ..models import plain

# Figures are drawn after each cell as in a notebook; TensorFlow keeps its C++ log lines to itself.
KERNEL_ENV = {
    "MPLBACKEND": "module://matplotlib_inline.backend_inline",
    "TF_CPP_MIN_LOG_LEVEL": "2",
    "PYDEVD_DISABLE_FILE_VALIDATION": "1",
}
# Seconds a cell gets to answer after an interrupt before its notebook is given up.
INTERRUPT_GRACE_S = 20.0
# The traceback's frame of the executed cell: IPython >= 8 names it "Cell In[<count>], line <n>".
_CELL_FRAME = re.compile(r"Cell In\[(\d+)\], line (\d+)")
MESSAGE_CHARS = 500


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


# ---- notebooks: cells run as Jupyter runs them, whatever happens ------------------------------------


async def run_cells(
    kc: Any, manager: Any, cells: Iterable[tuple[int, str]], timeout: float, *, stop_on_error: bool = False
) -> list[tuple[int, dict[str, Any]]]:
    """Run the cells in order, each as `execute` does, going on after errors as a user would: (position,
    what happened) of each cell that ran. It stops after a cell the kernel cannot go on from (`halted`) and,
    with `stop_on_error`, after the first cell that did not run to its end."""
    ran: list[tuple[int, dict[str, Any]]] = []
    for index, source in cells:
        run = await execute(kc, manager, source, timeout)
        ran.append((index, run))
        if halted(run) or (stop_on_error and run["status"] != "ok"):
            break
    return ran


def halted(run: dict[str, Any]) -> str:
    """Why no later cell can run after this one (the kernel died, or it ignored the interrupt), or ""."""
    if run["status"] == "died" or run.get("stuck"):
        return str(run.get("message") or run["status"])
    return ""


async def execute(kc: Any, manager: Any, source: str, timeout: float) -> dict[str, Any]:
    """Run the cell as a notebook does; what happened: status ok|error|timeout|died, the exception, its
    message and the cell's line, `stuck` when even an interrupt did not end it, and `ms`."""
    t0 = time.perf_counter()
    msg_id = kc.execute(source, silent=False, store_history=True, allow_stdin=False, stop_on_error=True)
    run: dict[str, Any] = {"status": "ok"}
    try:
        try:
            content = await wait_reply(kc, msg_id, timeout)
        except TimeoutError:
            run = {"status": "timeout", "message": f"ran past {timeout:g} s and was interrupted"}
            await manager.interrupt_kernel()
            try:
                content = await wait_reply(kc, msg_id, INTERRUPT_GRACE_S)
            except TimeoutError:
                run.update(stuck=True, message=f"ran past {timeout:g} s and ignored the interrupt")
                content = {}
    except CellFailed as exc:  # the kernel died
        run = {"status": "died", "message": str(exc)}
        content = {}
    run["ms"] = round((time.perf_counter() - t0) * 1000, 2)
    await drain_iopub(kc)
    if run["status"] == "ok" and content.get("status") != "ok":
        evalue = str(content.get("evalue", ""))
        run.update(
            status="error",
            exception=str(content.get("ename") or "Error"),
            message=evalue[:MESSAGE_CHARS],
            line=_line(content),
            raised_in=_raised_in(content),
        )
    return run


def _line(content: dict[str, Any]) -> int | None:
    """The line of the executed cell the exception was raised from (its last frame in the cell)."""
    count = str(content.get("execution_count"))
    line = None
    for entry in content.get("traceback") or []:
        for match in _CELL_FRAME.finditer(plain(str(entry))):
            if match.group(1) == count:
                line = int(match.group(2))
    return line


_FILE_FRAME = re.compile(r"File (.+?):\d+")
# Where Python and the installed libraries live: a frame there is not the notebook's own code.
_INSTALLED = tuple(
    {
        str(Path(p).resolve()) + os.sep
        for k, p in sysconfig.get_paths().items()
        if k.endswith(("stdlib", "lib"))
    }
)


def _raised_in(content: dict[str, Any]) -> str | None:
    """Where the innermost frame that is not a library's lies: "cell" (the executed cell), "other cell"
    (a function an earlier cell defined) or "file" (a module beside the notebook); None when the
    traceback names no frame."""
    count = str(content.get("execution_count"))
    where = None
    for entry in content.get("traceback") or []:
        text = plain(str(entry)).lstrip()
        cell = _CELL_FRAME.match(text)
        if cell:
            where = "cell" if cell.group(1) == count else "other cell"
            continue
        found = _FILE_FRAME.match(text)
        if found:
            path = Path(found.group(1)).expanduser()
            # A module beside the notebook is shown by its absolute path; a relative one is a compiled
            # library's own source (pandas/_libs/tslibs/offsets.pyx): the library's.
            if path.is_absolute() and not str(path.resolve()).startswith(_INSTALLED):
                where = "file"
    return where
