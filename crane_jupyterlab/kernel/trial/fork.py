"""The fork: the trial's process is a copy-on-write copy of the kernel, so the cell runs on the kernel's own
objects at the cost of copying page tables. Its child side is `child.py`; the thread that watches it is
`watch.py`.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

from . import child
from .outcome import ms
from .watch import Trial


def fork(
    trial: Trial, source: str, ns: dict[str, Any], shell: Any, pack: int = -1, then_run: bool = False
) -> None:
    """Fork the kernel; the child runs `source` on its copy-on-write copy of `ns` (`child.main`), or,
    given a `pack` file, writes the cell's inputs there for a worker (`transfer.pack`), and with
    `then_run` runs the cell after that.
    The kernel is blocked only for the fork itself: the page tables are copied, not the memory."""
    import socket

    reader, writer = os.pipe()
    parent_end, child_end = socket.socketpair()
    state = _random_state()
    parent = os.getpid()
    t0 = time.perf_counter()
    cpu0 = _thread_cpu()
    history = _detach_history_threads()
    try:
        if sys.version_info >= (3, 12):  # it warns about forking with threads, onto the user's stderr
            import warnings

            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                pid = os.fork()
        else:
            pid = os.fork()
    finally:
        if os.getpid() == parent:
            for manager, thread in history:
                manager.save_thread = thread
    if pid == 0:  # pragma: no cover - the child; its coverage is what it reports
        os.close(reader)
        parent_end.close()
        child.main(
            source, ns, shell, trial.opts, trial.scratch, writer, child_end, state, parent, pack, then_run
        )
    trial.fork_ms = ms(time.perf_counter() - t0)
    trial.fork_cpu_ms = ms(_thread_cpu() - cpu0)
    trial.pid = pid
    trial.forked = time.monotonic()
    try:
        trial.memory = os.open(f"/proc/{pid}/mem", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        trial.memory = -1
    os.close(writer)
    child_end.close()
    trial.reader = reader
    trial.control = parent_end


def _detach_history_threads() -> list[Any]:
    """IPython stops (joins) its history-saving thread before every fork and restarts it at the next
    cell: a wait for the kernel and a change to it. The child never touches history, so the thread is
    hidden from that hook for the fork's duration and the kernel's history goes on undisturbed."""
    module = sys.modules.get("IPython.core.history")
    managers = getattr(getattr(module, "HistoryManager", None), "_instances", None)
    detached = []
    try:
        for manager in list(managers or ()):
            thread = getattr(manager, "save_thread", None)
            if thread is not None:
                detached.append((manager, thread))
                manager.save_thread = None
    except Exception:
        pass
    return detached


def _thread_cpu() -> float:
    """This thread's CPU time in seconds (the process's where the platform has no per-thread clock)."""
    try:
        return time.clock_gettime(time.CLOCK_THREAD_CPUTIME_ID)
    except (AttributeError, OSError):
        return time.process_time()


def _random_state() -> Any:
    rnd = sys.modules.get("random")
    try:
        return rnd.getstate() if rnd is not None else None
    except Exception:
        return None
