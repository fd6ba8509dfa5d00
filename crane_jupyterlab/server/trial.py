"""Server side of the trial run: start it in the kernel, collect its outcome without making the kernel wait.

`trial.start` (crane_jupyterlab.kernel.trial) forks the kernel and returns at once; the outcome is then
collected by short silent `trial.result` requests, with growing pauses (most cells end within a few
hundred milliseconds; a 5 s budget costs about ten polls). User code always wins: a poll that finds the
kernel busy is retried until the trial's deadline, and a trial whose outcome cannot be collected is
`unavailable`, never an error of the analysis. Used by the server (through its kernel pool) and by
`crane-bench` (on its own client), so both run the same code.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import json
import logging
import subprocess
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from pydantic import ValidationError

from ..kernel.cell import python_source
from ..kernel.trial.control import SETUP_ALLOWANCE_S
from ..models import TrialOutcome
from . import payload
from .errors import KernelBusy, KernelNotFound

log = logging.getLogger(__name__)

# Pauses between polls: the first short, then doubling up to the last.
POLL_FIRST_S = 0.05
POLL_MAX_S = 0.8
# Added to the budget (and the child's setup allowance) before the server gives up on an outcome.
COLLECT_GRACE_S = 5.0
# Seconds one request to the kernel may take.
REQUEST_TIMEOUT_S = 10.0

Invoke = Callable[[str, str], Awaitable[dict[str, Any]]]


@dataclass(frozen=True)
class TrialOptions:
    """What the kernel side takes (see kernel.trial.DEFAULTS)."""

    budget_s: float = 5.0
    memory_mb: int = 2048
    hooks_only: bool = False
    private_writes: bool = True  # the cell's file writes go to a private copy instead of being refused
    quick_k: int = 2  # quick trial: long loops cut after this many iterations (0: never cut)
    worker: str = "auto"  # where the fork cannot go, a spawned worker: auto, never, always
    worker_max_mb: int = 1024  # the most a worker copies of the cell's inputs
    worker_gpu_fraction: float = 0.5  # the share of each GPU's memory a worker may allocate
    # The chain: (cell_id, source) of the code cells below, run after the target when it runs to its end
    below: tuple[tuple[str | None, str], ...] = ()
    chain_s: float = 10.0  # the chain's own budget, after the target's
    chain_quick: bool = True  # the chain's steps in quick mode (False: nothing cut, a hedge asked again)

    def literal(self) -> str:
        return repr(self.as_dict())

    def as_dict(self) -> dict[str, Any]:
        return {"budget_s": self.budget_s, "memory_mb": self.memory_mb, "hooks_only": self.hooks_only,
                     "private_writes": self.private_writes,
                     "quick": self.quick_k > 0, "quick_k": max(self.quick_k, 1),
                     "worker": self.worker, "worker_max_mb": self.worker_max_mb,
                     "worker_gpu_fraction": self.worker_gpu_fraction,
                     "below": [{"cell_id": c, "source": s} for c, s in self.below],
                     "chain_s": self.chain_s, "chain_quick": self.chain_quick}  # fmt: skip

    @property
    def wait_s(self) -> float:
        """The trial's budget, and the chain's when there is one."""
        return self.budget_s + (self.chain_s if self.below else 0.0)


def unavailable(reason: str) -> TrialOutcome:
    return TrialOutcome(status="unavailable", reason=reason)


def parses(source: str) -> bool:
    """Whether the cell parses as the kernel will run it (a cell that does not is a syntax error, which
    the checks report; no trial is needed to know it crashes)."""
    try:
        ast.parse(python_source(source))
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    return True


async def run(invoke: Invoke, source: str, options: TrialOptions) -> TrialOutcome:
    """Run `source` as a trial through `invoke(target, arguments)` (a payload call on the kernel) and
    return its outcome. Never raises but CancelledError: a cancelled caller also ends the trial."""
    try:
        started = await invoke("trial.start", f"{source!r}, {options.literal()}")
    except KernelBusy:
        return unavailable("the kernel started running code before the trial could start")
    except (KernelNotFound, payload.KernelDead):
        return unavailable("the kernel died or is restarting")
    except Exception as exc:  # payload.ExtractError and anything else: the analysis goes on without
        log.debug("crane: trial.start failed", exc_info=True)
        return unavailable(f"the trial could not start: {exc}")
    if started.get("state") == "done":
        return _outcome(started.get("outcome"))
    token = started.get("token")
    if not isinstance(token, str):
        return unavailable("the kernel did not start the trial")
    loop = asyncio.get_running_loop()
    # A worker's setup (copying the inputs, a spare's start) may take longer than a fork's.
    setup_s = started.get("setup_s")
    setup = float(setup_s) if isinstance(setup_s, (int, float)) and setup_s > 0 else SETUP_ALLOWANCE_S
    deadline = loop.time() + options.wait_s + setup + COLLECT_GRACE_S
    delay = POLL_FIRST_S
    busy = False
    try:
        while True:
            await asyncio.sleep(delay)
            delay = min(delay * 2, POLL_MAX_S)
            try:
                state = await invoke("trial.result", repr(token))
                busy = False
            except KernelBusy:
                busy = True  # the user's code comes first; ask again later
                state = {"state": "running"}
            except (KernelNotFound, payload.KernelDead):
                return unavailable("the kernel died or restarted, which ended the trial")
            except payload.ExtractError as exc:
                return unavailable(f"the trial's outcome could not be read: {exc}")
            if state.get("state") == "done":
                return _outcome(state.get("outcome"))
            if state.get("state") != "running":
                return unavailable("the kernel restarted or a newer trial replaced this one")
            if loop.time() > deadline:
                await _cancel(invoke, token)
                if busy:
                    return unavailable("the kernel was busy running code: the outcome could not be read")
                return unavailable("the trial did not report in time")
    except asyncio.CancelledError:
        # The analysis was superseded or its client went away: free the CPU the trial uses.
        cancel = asyncio.ensure_future(_cancel(invoke, token))
        _pending.add(cancel)
        cancel.add_done_callback(_pending.discard)
        raise


_pending: set[asyncio.Future[None]] = set()


async def _cancel(invoke: Invoke, token: str) -> None:
    with contextlib.suppress(Exception):
        await invoke("trial.cancel", repr(token))


def _outcome(raw: Any) -> TrialOutcome:
    try:
        return TrialOutcome.model_validate(raw)
    except ValidationError as exc:
        return unavailable(f"the kernel reported an unreadable outcome ({exc.error_count()} errors)")


def on_client(kc: Any, timeout: float = REQUEST_TIMEOUT_S) -> Invoke:
    """`invoke` on a kernel client nobody else reads (crane-bench, tests)."""

    async def invoke(target: str, arguments: str) -> dict[str, Any]:
        return await payload.invoke(kc, target, arguments, timeout)

    return invoke


@dataclass(frozen=True)
class Platform:
    """What the server's machine allows a trial (its kernels run on it)."""

    available: bool  # an OS sandbox
    sandbox: str | None  # its layers, e.g. "seccomp+landlock+netns"
    reason: str | None  # why not, in words a user can act on


# Run in a fresh interpreter of the server's Python: the probe forks, which the server itself never does.
_PLATFORM_PROBE = "\n".join(
    [
        "import json",
        "from crane_jupyterlab.kernel.trial.sandbox import confine",
        "print(json.dumps(confine.probe()))",
    ]
)


@cache
def platform_sandbox() -> Platform:
    """The OS sandbox of this machine, probed once in a separate process (never by forking the server)."""
    try:
        done = subprocess.run(
            [sys.executable, "-I", "-c", _PLATFORM_PROBE],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        found = json.loads(done.stdout.strip().splitlines()[-1])
    except (OSError, ValueError, IndexError, subprocess.SubprocessError) as exc:
        return Platform(False, None, f"the sandbox probe failed: {exc}")
    available = bool(found.get("available"))
    return Platform(available, found.get("sandbox"), None if available else found.get("reason"))
