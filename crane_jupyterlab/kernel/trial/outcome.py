"""What both sides of a trial say about its outcome: times, the outcome of a trial that could not decide,
the memory a trial process holds of its own, and the outcome of a process that ended without a report.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any


def ms(seconds: float) -> float:
    return round(seconds * 1000.0, 2)


# A side effect refused while a worker rebuilt the cell's inputs (or imported a module the cell imports):
# what the cell would meet is not what the kernel has, so nothing the cell then does is observed.
REBUILD_REFUSED = (
    "the worker could not rebuild what the cell uses as the kernel has it: the sandbox refused to "
)


def unavailable(reason: str) -> dict[str, Any]:
    return {"status": "unavailable", "reason": reason}


def private_kb(pid: int) -> int:
    """The trial process's memory that is its own (not shared with the kernel): what the fork costs."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as fh:
            text = fh.read()
    except OSError:
        return 0
    total = 0
    for line in text.split(b"\n"):
        if line.startswith((b"Private_Clean:", b"Private_Dirty:", b"Private_Hugetlb:")):
            with contextlib.suppress(IndexError, ValueError):
                total += int(line.split()[1])
    return total


def started_kb(pid: int) -> int:
    """The memory of the processes the trial process started (`!cmd`, `subprocess`): each one's own,
    walked down from its children (/proc/<pid>/task/*/children); 0 where the kernel does not list them."""
    total, todo = 0, [pid]
    seen: set[int] = set()
    while todo and len(seen) < 512:
        parent = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{parent}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{parent}/task/{task}/children", "rb") as fh:
                    children = [int(c) for c in fh.read().split()]
            except (OSError, ValueError):
                continue
            for child in children:
                if child not in seen:
                    seen.add(child)
                    todo.append(child)
                    total += private_kb(child)
    return total


def listed(items: list[str]) -> str:
    shown = "; ".join(items[:3])
    return shown + (f" (and {len(items) - 3} more)" if len(items) > 3 else "")


def died(status: int, ready: dict[str, Any]) -> dict[str, Any]:
    """The outcome of a child that ended without reporting."""
    import signal

    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        name = signal_name(sig)
        if sig == signal.SIGKILL:
            return {
                "status": "out_of_memory",
                "reason": "the system killed the trial process (SIGKILL), most likely because memory ran out",
            }
        if sig in (signal.SIGSEGV, signal.SIGBUS) and ready.get("protected_mappings"):
            return {
                "status": "blocked",
                "reason": "the cell wrote to memory shared with other processes (np.memmap, shared memory), "
                "which the sandbox keeps read-only",
            }
        return {**unavailable(f"the trial process died of {name} (a library that is not safe to fork?)"),
                "signal": name}  # fmt: skip
    if os.WIFEXITED(status):
        if not ready:
            return unavailable(
                f"the trial process exited with code {os.WEXITSTATUS(status)} before the cell ran"
            )
        return unavailable(f"the cell ended the process (exit code {os.WEXITSTATUS(status)})")
    return unavailable("the trial process ended without a report")


def signal_name(number: int) -> str:
    import signal

    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


# What a step of the chain says the sandbox refused when only the OS layer saw it (a program the cell
# ran): the kernel's side, whose supervisor recorded it, puts the words in its place (watch.py).
OS_REFUSED = "let one of its programs do what it asked"
