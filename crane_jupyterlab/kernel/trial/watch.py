"""The kernel's side of a running trial: a thread that answers the trial process's seccomp notifications
(`sandbox/supervisor.py`), ends it at the time budget, at the memory cap or when it is deadlocked, reads its
report, reaps it (no zombie), removes its scratch directory and keeps the outcome.

The process reports JSON lines on a pipe: "ready" once its sandbox holds (the cell's budget starts then),
"progress" (quick.py: how far its loops got), "done" with the outcome as it sees it. Any refused side effect
makes a crash or an end `blocked`: the cell did not run as it will.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from typing import Any

from . import forecast
from .outcome import OS_REFUSED, REBUILD_REFUSED, died, listed, ms, private_kb, started_kb, unavailable
from .sandbox import overlay
from .sandbox.supervisor import Supervisor
from .stuck import Stuck, activity

# Seconds the trial process may take to enter the sandbox before the cell's budget starts.
SETUP_ALLOWANCE_S = 3.0
# How often the thread checks the process's memory (seconds).
MEMORY_CHECK_S = 0.25


class Trial:
    """One trial: the process's pid, the pipes to it, and the thread that watches it (`watch`). A way of
    starting the process (`fork.fork`) fills in `pid`, `forked`, `reader`, `control` and `memory`."""

    def __init__(self, opts: dict[str, Any], scratch: str) -> None:
        self.opts = opts
        self.token = os.urandom(6).hex()
        self.pid = 0
        self.forked = 0.0
        self.blocked_ms = 0.0
        self.fork_ms = 0.0
        self.fork_cpu_ms = 0.0
        self.outcome: dict[str, Any] | None = None
        self.stopped: str | None = None  # why we ended the child: "timeout", "memory", a reason
        self.ready: dict[str, Any] = {}
        self.rebuild_refusals: list[str] = []
        self.supervisor: Supervisor | None = None
        self.scratch = scratch  # the process's private temporary directory, removed at the end
        self.reader = -1
        self.control: Any = None
        self.memory = -1  # /proc/<child>/mem, opened while the child still has the kernel's credentials
        self.timeout_hint = ""
        self.tensorflow = "tensorflow" in sys.modules
        self.layer = -1  # the child's private copy-on-write layer (a tmpfs), sent by the child
        self.layer_peak = 0  # bytes it held at most
        self.setup_s = SETUP_ALLOWANCE_S  # its time to say "ready", before the cell's budget starts
        self.warm_kb = 0  # memory it held of its own before the trial (a worker's warm libraries)
        # the memory a run from the top starts from (a fresh interpreter's); None: a kernel's trial
        self.baseline_kb: int | None = None
        # A forked child waiting on a lock with no CPU progress can never go on; a worker's main thread
        # waits like that while TensorFlow's pools compute.
        self.detect_deadlock = True
        # The chain of cells below (chain.py): once the target is done they get chain_s more seconds.
        below = opts.get("below")
        self.below: list[Any] = below if isinstance(below, list) else []
        self.target_refusals: list[str] | None = None  # the supervisor's refusals when the target ended
        self.steps: dict[int, dict[str, Any]] = {}  # the chain's reports, by the cell's index
        self.running_step: int | None = None
        self._step_mark = 0
        self._seen = 0  # bytes of the report already read as lines
        self._told = False  # the child was told of a refusal in this step (_tell_child)

    def stop(self, why: str) -> None:
        """End the child (the watching thread reports it); idempotent."""
        if self.outcome is None and self.stopped is None:
            self.stopped = why
            _kill(self.pid)

    def watch(self) -> None:
        """The thread: answer the child's notifications, enforce the budget and the memory cap, collect
        its report, reap it, clean up. Blocking calls release the GIL, so the kernel runs on."""
        import select

        data = b""
        poller = select.poll()
        poller.register(self.reader, select.POLLIN)
        poller.register(self.control.fileno(), select.POLLIN)
        listener = -1
        deadline = self.forked + float(self.opts["budget_s"]) + self.setup_s
        next_check = self.forked + MEMORY_CHECK_S
        stuck = Stuck(self.pid)
        peak_kb = 0
        open_reader = True
        try:
            while open_reader:
                now = time.monotonic()
                if now >= deadline and self.stopped is None:
                    self.stopped = "timeout"
                    self.timeout_hint = activity(self.pid, now - self.forked)
                    _kill(self.pid)
                if now >= next_check and self.stopped is None:
                    next_check = now + MEMORY_CHECK_S
                    # its own pages and those of the programs it started, all in the one cap
                    private = max(0, private_kb(self.pid) - self.warm_kb) + started_kb(self.pid)
                    peak_kb = max(peak_kb, private)
                    # Files the cell wrote to its private copy live in memory too: they count.
                    layer = overlay.used_bytes(self.layer) if self.layer >= 0 else 0
                    self.layer_peak = max(self.layer_peak, layer)
                    if private + layer // 1024 > int(self.opts["memory_mb"]) * 1024:
                        self.stopped = "memory"
                        _kill(self.pid)
                    elif self.detect_deadlock and self.ready and stuck.deadlocked(now):
                        self.stopped = "deadlock"
                        _kill(self.pid)
                wait = max(0.0, min(deadline, next_check) - now) if self.stopped is None else 0.5
                for fd, event in poller.poll(wait * 1000):
                    if fd == self.reader:
                        chunk = os.read(self.reader, 65536)
                        if not chunk:
                            open_reader = False
                        data += chunk
                        deadline = self._read_lines(data, deadline)
                    elif fd == listener:
                        if event & select.POLLIN and self.supervisor is not None:
                            self.supervisor.handle()
                        if event & (select.POLLHUP | select.POLLERR | select.POLLNVAL):
                            poller.unregister(listener)
                            listener = -1
                    else:
                        listener = self._receive_listener(poller)
            _end_group(self.pid)  # what the cell started and left running (`!cmd &`), before the reap
            status = _reap(self.pid, time.monotonic() + 10.0)
            self.outcome = self._outcome(data, status, peak_kb)
        except Exception as exc:  # the thread must always leave an outcome and a reaped child
            _kill(self.pid)
            _reap(self.pid, time.monotonic() + 5.0)
            self.outcome = unavailable(f"the trial's supervisor failed: {type(exc).__name__}: {exc}")
        finally:
            for fd in (self.reader, self.memory, self.layer):
                _close(fd)
            self.layer = -1
            with contextlib.suppress(OSError):
                self.control.close()
            if self.supervisor is not None:
                self.supervisor.close()
            import shutil

            shutil.rmtree(self.scratch, ignore_errors=True)

    def _read_lines(self, data: bytes, deadline: float) -> float:
        """Act on the report's new complete lines: "ready" starts the cell's budget, the target's "done"
        the chain's, and each step of the chain takes the refusals recorded while it ran. Returns the
        deadline now in force."""
        end = data.rfind(b"\n") + 1
        for line in data[self._seen : end].split(b"\n"):
            if not line.startswith(b"{"):
                continue
            try:
                report = json.loads(line)
            except ValueError:
                continue
            phase = report.get("phase")
            refusals = self.supervisor.refusals if self.supervisor is not None else []
            if not self.ready:
                self.ready = report
                if phase == "ready":
                    deadline = time.monotonic() + float(self.opts["budget_s"])
                    if self.ready.get("worker"):
                        # refused while the worker rebuilt the inputs, not by the cell
                        self.rebuild_refusals = list(refusals)
            elif phase == "done" and self.target_refusals is None:
                self.target_refusals = list(refusals)
                self._step_mark = len(refusals)
                self._told = False
                if self.supervisor is not None:
                    self.supervisor.barrier()
                if self.below and report.get("status") == "finished":
                    deadline = time.monotonic() + float(self.opts.get("chain_s") or 10.0)
            elif phase == "step":
                self.running_step = report.get("index")
                self._step_mark = len(refusals)
                self._told = False
                if self.supervisor is not None:
                    self.supervisor.barrier()
            elif phase == "below" and isinstance(report.get("index"), int):
                report["os_refusals"] = list(refusals[self._step_mark :])
                self._step_mark = len(refusals)
                self.steps[report["index"]] = report
                self.running_step = None
        self._seen = end
        return deadline

    def _receive_listener(self, poller: Any) -> int:
        import select
        import socket

        poller.unregister(self.control.fileno())
        try:
            message, fds, _, _ = socket.recv_fds(self.control, 1 << 16, 2)
            # The grant names every watched descriptor: it may take more than one read (the child
            # closes its end once it is sent).
            self.control.settimeout(SETUP_ALLOWANCE_S)
            while not message.endswith(b"}") or len(message) >= 1 << 16:
                more = self.control.recv(1 << 16)
                if not more:
                    break
                message += more
            grant = json.loads(message)
            # From now on only `_tell_child` writes to it, and never waits (a timeout would make the
            # socket wait for room before each send, and the supervisor with it).
            self.control.setblocking(False)
        except (OSError, ValueError):
            for fd in locals().get("fds", []):
                _close(fd)
            return -1
        if not fds:
            return -1
        if len(fds) > 1:
            self.layer = fds[1]
        # The child says whether Landlock guards its writable directories; the supervisor lets writes
        # there through only then.
        writable = [w for w in grant.get("writable", []) if isinstance(w, str)]
        layers = [w for w in grant.get("layers", []) if isinstance(w, str)]  # private copies (overlay.py)
        watched = {int(fd): entry for fd, entry in (grant.get("watched") or {}).items()}
        self.supervisor = Supervisor(
            fds[0],
            self.pid,
            writable,
            bool(grant.get("landlock")),
            self.memory,
            layers,
            watched,
            processes=bool(grant.get("processes")),
        )
        self.supervisor.gpu = bool(grant.get("gpu"))
        self.supervisor.on_refusal = self._tell_child
        self.memory = -1
        poller.register(fds[0], select.POLLIN)
        return fds[0]

    def _tell_child(self) -> None:
        """A byte on the control socket at the first refusal of a step (the target, or each step of the
        chain): the child learns that a program it started was refused something (hooks.Guard.os_refused),
        which only this side sees. One per step: a program that is refused in a loop (a traceback written
        to a descriptor of the kernel's, byte by byte) cannot fill the socket."""
        if self._told:
            return
        self._told = True
        with contextlib.suppress(OSError):
            self.control.send(b"!")

    def _outcome(self, data: bytes, status: int, peak_kb: int) -> dict[str, Any]:
        reports = [json.loads(line) for line in data.split(b"\n") if line.startswith(b"{")]
        ready: dict[str, Any] = next((r for r in reports if r.get("phase") == "ready"), {})
        done: dict[str, Any] | None = next((r for r in reports if r.get("phase") == "done"), None)
        refusals: list[str] = []
        if self.supervisor is not None:
            # the target's own: those recorded once it was done belong to the cells below it
            target = self.target_refusals if self.target_refusals is not None else self.supervisor.refusals
            refusals += target
        if done is not None:
            refusals += done.get("refusals", [])
        refusals = list(dict.fromkeys(refusals))
        sandbox_name = ready.get("sandbox")
        outcome: dict[str, Any]
        refused = False  # the cell's exception was the sandbox's refusal itself
        # Ended after the target was done: the chain's budget, memory or a lock, not the target's.
        chain_stopped = self.stopped if done is not None else None
        stopped = None if done is not None else self.stopped
        if stopped == "timeout":
            outcome = {
                "status": "timed_out",
                "reason": f"the cell ran past the {float(self.opts['budget_s']):g} s budget"
                + self.timeout_hint,
                "elapsed_ms": ms(float(self.opts["budget_s"])),  # it runs at least that long
            }
            progress = [r for r in reports if r.get("phase") == "progress"]
            if progress:  # how far it got (quick.py counts the loops' iterations)
                last = progress[-1]
                outcome["progress"] = {"line": last.get("line"), "loops": last.get("loops") or [],
                                       "elapsed_ms": ms(float(self.opts["budget_s"]))}  # fmt: skip
        elif stopped == "memory":
            cap = self.opts["memory_mb"]
            files = f", {overlay.size(self.layer_peak)} of it files written" if self.layer_peak else ""
            outcome = {
                "status": "out_of_memory",
                "reason": f"the cell needed more than the trial's {cap} MB of memory{files}",
            }
        elif stopped == "deadlock":
            tf = " (TensorFlow's thread pools do not)" if self.tensorflow else ""
            outcome = unavailable(
                "the cell waited for a lock no thread can release: a library's threads do not survive "
                f"the fork{tf}"
            )
        elif stopped is not None:
            outcome = unavailable(stopped)
        elif self.rebuild_refusals:
            outcome = unavailable(REBUILD_REFUSED + listed(list(dict.fromkeys(self.rebuild_refusals))))
            refusals = []
        elif done is not None:
            outcome = {k: v for k, v in done.items() if k not in ("phase", "refusals")}
            refused = outcome.pop("refused", False)
        else:
            outcome = died(status, ready)
        written = self._written(outcome)
        # A refused side effect means the cell did not run as it will: neither its crash nor its end
        # was observed, whatever the child saw next.
        if refusals and outcome["status"] in ("crashed", "finished", "packed"):
            reason = f"the sandbox refused to {listed(refusals)}"
            if outcome["status"] == "finished":
                reason += " (the cell went on to its end)"
            elif not refused:  # the cell's own error came after: say which
                raised = f"{outcome.get('exception')}: {outcome.get('message') or ''}".strip(": ")
                reason += f" (the cell then raised {raised[:300]})"
            outcome = {"status": "blocked", "reason": reason, "elapsed_ms": outcome.get("elapsed_ms")}
        elif refusals and outcome["status"] in ("timed_out", "out_of_memory"):
            note = f"the sandbox refused to {listed(refusals)}"
            outcome["reason"] = f"{outcome['reason']}; {note}" if outcome.get("reason") else note
        outcome["sandbox"] = sandbox_name
        if written:
            outcome["writes"] = written
        if done is not None:
            # The checks run every MEMORY_CHECK_S: a cell that grows to its end (a list it keeps) peaks
            # after the last one. The child's own reading at its end is the peak they missed.
            with contextlib.suppress(TypeError, ValueError):
                peak_kb = max(peak_kb, int(float(done.get("extra_memory_mb") or 0) * 1024))
        if peak_kb and "extra_memory_mb" not in outcome:
            outcome["extra_memory_mb"] = round(peak_kb / 1024, 1)
        if not self.below or self.baseline_kb is None:  # a run from the top has no target of its own
            # the kernel's GPU, read only for a trial that counted CUDA memory (a worker of a CUDA kernel)
            gpu = forecast.gpu_kb() if "gpu_extra_kb" in outcome else None
            ahead = forecast.build(outcome, peak_kb, forecast.resident_kb(), forecast.available_kb(), gpu)
            if ahead is not None:
                outcome["forecast"] = ahead
        if self.below:
            outcome["below"] = self._below(outcome["status"], chain_stopped)
            if self.baseline_kb is not None:  # the whole run from the top: a fresh interpreter's memory
                outcome["forecast"] = self._whole(outcome["below"], peak_kb)
        return outcome

    def _whole(self, steps: list[dict[str, Any]], peak_kb: int) -> dict[str, Any]:
        """The forecast of a run from the top: its cells' times added up to the first that did not run
        to its end; its memory the fresh interpreter's plus the run's peak."""
        ahead = [step.get("forecast") for step in steps if step.get("status") in ("finished", "crashed")]
        known = [a for a in ahead if isinstance(a, dict)]
        seconds = sum(float(a["seconds"] or 0.0) for a in known)
        low = sum(float(a["seconds_low"] or 0.0) for a in known)
        highs = [a.get("seconds_high") for a in known]
        projected = any(a.get("basis") == "projected" for a in known)
        whole: dict[str, Any] = {"seconds": round(seconds, 2), "seconds_low": round(low, 2),
                 "seconds_high": None if None in highs else round(sum(highs), 2),  # type: ignore[arg-type]
                 "at_least": any(a.get("at_least") for a in known),
                 "basis": "projected" if projected else "observed", "projected_from": []}  # fmt: skip
        return forecast.memory(whole, peak_kb, 0.0, self.baseline_kb, forecast.available_kb(), None)

    def _below(self, target: str, stopped: str | None) -> list[dict[str, Any]]:
        """One entry per cell below: its step's outcome, or why it was not reached."""
        out: list[dict[str, Any]] = []
        why = None if target == "finished" else "the edited cell did not run to its end"
        for index, cell in enumerate(self.below):
            entry: dict[str, Any] = {"cell_id": cell.get("cell_id") if isinstance(cell, dict) else None}
            step = self.steps.get(index) if why is None else None
            if step is not None:
                entry.update({k: v for k, v in step.items() if k in _STEP_KEYS})
                ahead = forecast.build(entry, 0)  # time only: the trial's memory is the whole chain's
                if ahead is not None:
                    entry["forecast"] = ahead
                refusals = list(dict.fromkeys(step["os_refusals"]))
                if refusals and OS_REFUSED in str(entry.get("reason")):
                    entry["reason"] = str(entry["reason"]).replace(OS_REFUSED, listed(refusals))
                elif step["os_refusals"] and step.get("status") in ("crashed", "finished"):
                    exc = entry.get("exception")
                    refused = f"the sandbox refused to {listed(refusals)}"
                    refused += f" (the cell then raised {exc})" if exc else ""
                    entry.update(status="blocked", exception=None, message=None, reason=refused)
                if entry.get("status") not in ("finished", "skipped") and not step.get("goes_on"):
                    why = "an earlier cell below did not run to its end"
            elif why is None and index == self.running_step:
                chain_s = float(self.opts.get("chain_s") or 10.0)
                entry["status"], entry["reason"] = {
                    "timeout": ("timed_out", f"the chain ran past its {chain_s:g} s budget in this cell"),
                    "memory": ("out_of_memory", f"the chain needed more than {self.opts['memory_mb']} MB"),
                }.get(str(stopped), ("unavailable", stopped or "the trial process ended while this cell ran"))
                why = "the chain ended at an earlier cell"
            else:
                entry["status"] = "not_reached"
                if why is None:
                    why = (f"the chain ran past its {float(self.opts.get('chain_s') or 10.0):g} s budget"
                           if stopped == "timeout" else "the trial process ended before it")  # fmt: skip
                entry["reason"] = why
            out.append(entry)
        return out

    def _written(self, outcome: dict[str, Any]) -> str | None:
        """What the cell wrote to its private copy, in words (see overlay.settle)."""
        if self.layer < 0:
            return None
        self.layer_peak = max(self.layer_peak, overlay.used_bytes(self.layer))
        layers = self.supervisor.layers if self.supervisor is not None else []
        cap = int(self.opts["memory_mb"])
        return overlay.settle(outcome, self.layer, layers, cap, self.layer_peak, self.scratch)


# What a step of the chain reports that the outcome keeps (models.BelowOutcome).
_STEP_KEYS = (
    "status", "exception", "message", "line", "reads", "elapsed_ms", "reason", "after_cut", "quick",
    "installs",
)  # fmt: skip


def _kill(pid: int) -> None:
    import signal

    _end_group(pid)
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)


def _end_group(pid: int) -> None:
    """Kill the trial's process group, whose id is the child's pid (child.py), and which every process
    the cell started stays in (the sandbox refuses setsid and setpgid). Called while the child is not
    yet reaped, so the id cannot name another group."""
    import signal

    with contextlib.suppress(OSError):
        os.killpg(pid, signal.SIGKILL)


def _reap(pid: int, deadline: float) -> int:
    """waitpid without hanging: the child is killed if it will not end by `deadline`."""
    while True:
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return 0  # someone else reaped it (a user's os.wait())
        if done:
            return status
        if time.monotonic() > deadline:
            _kill(pid)
            deadline = time.monotonic() + 5.0
        time.sleep(0.005)


def _close(fd: int) -> None:
    with contextlib.suppress(OSError):
        os.close(fd)
