"""The trial run: the target cell executed in a sandboxed fork of the kernel, before the user runs it.

Entry points, each called silently through `user_expressions` like the probe and each returning at once:

- `start(source, options, namespace)` forks the kernel. The kernel is blocked only for the fork (the
  page tables are copied, not the memory). The child enters the sandbox (`sandbox.py`, `hooks.py`), runs
  the cell on its copy-on-write copy of the user namespace and reports through a pipe. A thread of the
  kernel (`_Trial.watch`) answers the child's seccomp notifications, ends it at the time budget or the
  memory cap, reaps it (no zombie) and keeps the outcome. At most one trial runs per kernel: a new one
  ends the previous.
- `result(token)` returns the outcome once it is there (`{"state": "running"}` until then): the server
  polls, with growing pauses, so the kernel never waits for the trial.
- `cancel(token)` ends a trial early.

The child never touches the kernel's sockets or streams: fds 0/1/2 point to /dev/null, inherited sockets
and pipes are replaced by /dev/null, inherited files are reopened read-only with their own offset (the
kernel's file positions stay where they are), memory shared with other processes is copied or made
read-only, IPython's display and ipykernel's output streams are no-ops, `input()` is refused, and the
child ends with `os._exit` (no atexit handlers, no finalizers). It dies with the kernel (PR_SET_PDEATHSIG)
and lives in its own process group, so an interrupt of the kernel does not reach it.

Outcome (models.TrialOutcome): `crashed` (exception, message, line, frames in the cell), `finished`,
`blocked` (the sandbox refused a side effect, so the cell did not run as it will), `timed_out`,
`out_of_memory`, `unavailable` (with the reason).
"""

from __future__ import annotations

import _thread
import contextlib
import gc
import json
import os
import sys
import threading
import time
from typing import Any

from . import sandbox
from .cell import python_source
from .hooks import Guard, Refused

DEFAULTS: dict[str, Any] = {
    "budget_s": 5.0,  # the cell's wall time in the child
    "memory_mb": 2048,  # the child's memory beyond what it shares with the kernel
    "hooks_only": False,  # run with audit hooks alone where the OS offers no sandbox (an admin's choice)
    "nice": 5,  # below the kernel: it gets 3x the CPU of the trial where they share a core
}
# Seconds the child may take to enter the sandbox before the cell's budget starts.
SETUP_ALLOWANCE_S = 3.0
# How often the thread checks the child's memory (seconds).
MEMORY_CHECK_S = 0.25
# Shared writable mappings up to this size in all are copied into the child; bigger ones become read-only.
COPY_SHARED_LIMIT = 64 * 1024 * 1024
CELL_FILE = "<crane-trial-cell>"
# Scratch directories are named after the kernel's pid, so the next trial can remove those of kernels
# that ended while a trial ran (their watching thread never got to it).
SCRATCH_PREFIX = "crane-trial-"
MESSAGE_CHARS = 2000
MAX_FRAMES = 20

_current: _Trial | None = None
_lock = threading.Lock()


def start(
    source: str, options: dict[str, Any] | None = None, namespace: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Fork the kernel and run `source` in the sandboxed child. Never raises.

    `options`: see DEFAULTS. `namespace`: the user namespace (default: the IPython shell's).
    Returns `{"state": "running", "token", "pid", "blocked_ms"}`, or `{"state": "done", "outcome"}` when
    no trial can run (the outcome says why).
    """
    t0 = time.perf_counter()
    try:
        return _start(source, _options(options), namespace, t0)
    except Exception as exc:  # the contract: never raise into the kernel
        return _done(_unavailable(f"the trial could not start: {type(exc).__name__}: {exc}"))


def result(token: str | None = None) -> dict[str, Any]:
    """The trial's state: running, done (with the outcome), or unknown (replaced, or the kernel restarted)."""
    trial = _current
    if trial is None or (token and trial.token != token):
        return {"state": "unknown"}
    if trial.outcome is None:
        return {"state": "running", "token": trial.token, "elapsed_ms": _ms(time.monotonic() - trial.forked)}
    return {"state": "done", "token": trial.token, "outcome": trial.outcome, "blocked_ms": trial.blocked_ms}


def cancel(token: str | None = None) -> dict[str, Any]:
    """End the running trial (the given one, or any)."""
    trial = _current
    if trial is None or (token and trial.token != token):
        return {"state": "unknown"}
    trial.stop("cancelled")
    return {"state": "cancelled", "token": trial.token}


# -- the kernel's side -------------------------------------------------------------------------------


def _options(options: dict[str, Any] | None) -> dict[str, Any]:
    """The options with the defaults filled in; a value of the wrong type keeps the default, numbers are
    clamped to their bounds."""
    opts = dict(DEFAULTS)
    bounds = {"budget_s": (0.05, 3600.0), "memory_mb": (16, 1 << 20), "nice": (0, 19)}
    for key, value in (options or {}).items():
        if key not in DEFAULTS:
            continue
        if isinstance(DEFAULTS[key], bool):
            if isinstance(value, bool):
                opts[key] = value
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            low, high = bounds[key]
            opts[key] = type(DEFAULTS[key])(min(max(value, low), high))
    return opts


def _start(source: Any, opts: dict[str, Any], namespace: Any, t0: float) -> dict[str, Any]:
    global _current
    if not isinstance(source, str):
        return _done(_unavailable("the cell's source must be a string"))
    with _lock:
        previous = _current
        if previous is not None:
            previous.stop("replaced by a newer trial")
        shell = _shell()
        ns = namespace if isinstance(namespace, dict) else getattr(shell, "user_ns", None)
        if not isinstance(ns, dict):
            return _done(_unavailable("not an IPython kernel: there is no user namespace to copy"))
        reason = _cannot_fork(opts)
        if reason:
            return _done(_unavailable(reason))
        gpu = cuda_in_use()
        if gpu:
            return _done(_unavailable(f"CUDA in use: {gpu}; a forked process cannot use the GPU"))
        trial = _Trial(opts)
        trial.fork(source, ns, shell)
        trial.blocked_ms = _ms(time.perf_counter() - t0)
        _current = trial
        # Not threading.Thread: its start() waits until the new thread runs, which the kernel would pay.
        _thread.start_new_thread(trial.watch, ())
    return {
        "state": "running",
        "token": trial.token,
        "pid": trial.pid,
        "blocked_ms": trial.blocked_ms,  # the kernel's time in this call
        "fork_ms": trial.fork_ms,  # of which os.fork itself
        "fork_cpu_ms": trial.fork_cpu_ms,  # the fork's CPU time on the kernel's thread (load-independent)
    }


def _shell() -> Any:
    getter = sys.modules.get("IPython.core.getipython")
    try:
        return getter.get_ipython() if getter is not None else None
    except Exception:
        return None


def _cannot_fork(opts: dict[str, Any]) -> str | None:
    if not hasattr(os, "fork"):
        return "this platform cannot fork a process (Windows)"
    if sandbox.arch() is None and not opts["hooks_only"]:
        if not sys.platform.startswith("linux"):
            return (
                f"no OS sandbox on {sys.platform} (Landlock, seccomp and namespaces are Linux features); "
                "an administrator may allow hooks-only trials (c.CraneExtension.trial_hooks_only = True)"
            )
        return (
            f"no OS sandbox for the {sys.platform}/{os.uname().machine} architecture; an administrator may "
            "allow hooks-only trials (c.CraneExtension.trial_hooks_only = True)"
        )
    return None


def cuda_in_use() -> str | None:
    """Why a forked child could not use the GPU the kernel uses (None: no GPU context), found without
    initialising CUDA: torch's own flag where torch is loaded, else a GPU driver's device file open in
    this process (CUDA, ROCm, any library)."""
    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            if torch.cuda.is_initialized():
                return "torch has initialised CUDA in this kernel"
        except Exception:
            pass
    try:
        fds = os.listdir("/proc/self/fd")
    except OSError:
        return None
    for fd in fds:
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if gpu_device(target):
            return f"this kernel has the GPU driver open ({target})"
    return None


def gpu_device(path: str) -> bool:
    """Whether `path` is a GPU driver's device file (NVIDIA, AMD KFD, DRM render nodes)."""
    return path.startswith(("/dev/nvidia", "/dev/kfd", "/dev/dri/renderD"))


class _Trial:
    """One trial: the child's pid, the pipes to it, and the thread that watches it."""

    def __init__(self, opts: dict[str, Any]) -> None:
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
        self.supervisor: sandbox.Supervisor | None = None
        self.scratch = ""
        self.reader = -1
        self.control: Any = None
        self.memory = -1  # /proc/<child>/mem, opened while the child still has the kernel's credentials
        self.timeout_hint = ""
        self.tensorflow = "tensorflow" in sys.modules

    def fork(self, source: str, ns: dict[str, Any], shell: Any) -> None:
        import socket
        import tempfile

        _sweep_scratch()
        self.scratch = os.path.realpath(tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-"))
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
            _child(source, ns, shell, self.opts, self.scratch, writer, child_end, state, parent)
        self.fork_ms = _ms(time.perf_counter() - t0)
        self.fork_cpu_ms = _ms(_thread_cpu() - cpu0)
        self.pid = pid
        self.forked = time.monotonic()
        try:
            self.memory = os.open(f"/proc/{pid}/mem", os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            self.memory = -1
        os.close(writer)
        child_end.close()
        self.reader = reader
        self.control = parent_end

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
        deadline = self.forked + float(self.opts["budget_s"]) + SETUP_ALLOWANCE_S
        next_check = self.forked + MEMORY_CHECK_S
        stuck = _Stuck(self.pid)
        peak_kb = 0
        open_reader = True
        try:
            while open_reader:
                now = time.monotonic()
                if now >= deadline and self.stopped is None:
                    self.stopped = "timeout"
                    self.timeout_hint = _activity(self.pid, now - self.forked)
                    _kill(self.pid)
                if now >= next_check and self.stopped is None:
                    next_check = now + MEMORY_CHECK_S
                    private = _private_kb(self.pid)
                    peak_kb = max(peak_kb, private)
                    if private > int(self.opts["memory_mb"]) * 1024:
                        self.stopped = "memory"
                        _kill(self.pid)
                    elif self.ready and stuck.deadlocked(now):
                        self.stopped = "deadlock"
                        _kill(self.pid)
                wait = max(0.0, min(deadline, next_check) - now) if self.stopped is None else 0.5
                for fd, event in poller.poll(wait * 1000):
                    if fd == self.reader:
                        chunk = os.read(self.reader, 65536)
                        if not chunk:
                            open_reader = False
                        data += chunk
                        if b"\n" in data and not self.ready:
                            line = data.split(b"\n", 1)[0]
                            self.ready = json.loads(line) if line.startswith(b"{") else {}
                            if self.ready.get("phase") == "ready":
                                deadline = time.monotonic() + float(self.opts["budget_s"])
                    elif fd == listener:
                        if event & select.POLLIN and self.supervisor is not None:
                            self.supervisor.handle()
                        if event & (select.POLLHUP | select.POLLERR | select.POLLNVAL):
                            poller.unregister(listener)
                            listener = -1
                    else:
                        listener = self._receive_listener(poller)
            status = _reap(self.pid, time.monotonic() + 10.0)
            self.outcome = self._outcome(data, status, peak_kb)
        except Exception as exc:  # the thread must always leave an outcome and a reaped child
            _kill(self.pid)
            _reap(self.pid, time.monotonic() + 5.0)
            self.outcome = _unavailable(f"the trial's supervisor failed: {type(exc).__name__}: {exc}")
        finally:
            for fd in (self.reader, self.memory):
                _close(fd)
            with contextlib.suppress(OSError):
                self.control.close()
            if self.supervisor is not None:
                self.supervisor.close()
            import shutil

            shutil.rmtree(self.scratch, ignore_errors=True)

    def _receive_listener(self, poller: Any) -> int:
        import select
        import socket

        poller.unregister(self.control.fileno())
        try:
            message, fds, _, _ = socket.recv_fds(self.control, 4096, 1)
            grant = json.loads(message)
        except (OSError, ValueError):
            for fd in locals().get("fds", []):
                _close(fd)
            return -1
        if not fds:
            return -1
        # The child says whether Landlock guards its writable directories; the supervisor lets writes
        # there through only then.
        writable = [w for w in grant.get("writable", []) if isinstance(w, str)]
        self.supervisor = sandbox.Supervisor(
            fds[0], self.pid, writable, bool(grant.get("landlock")), self.memory
        )
        self.memory = -1
        poller.register(fds[0], select.POLLIN)
        return fds[0]

    def _outcome(self, data: bytes, status: int, peak_kb: int) -> dict[str, Any]:
        reports = [json.loads(line) for line in data.split(b"\n") if line.startswith(b"{")]
        ready: dict[str, Any] = next((r for r in reports if r.get("phase") == "ready"), {})
        done: dict[str, Any] | None = next((r for r in reports if r.get("phase") == "done"), None)
        refusals: list[str] = []
        if self.supervisor is not None:
            refusals += self.supervisor.refusals
        if done is not None:
            refusals += done.get("refusals", [])
        refusals = list(dict.fromkeys(refusals))
        sandbox_name = ready.get("sandbox")
        outcome: dict[str, Any]
        refused = False  # the cell's exception was the sandbox's refusal itself
        if self.stopped == "timeout":
            outcome = {
                "status": "timed_out",
                "reason": f"the cell ran past the {float(self.opts['budget_s']):g} s budget"
                + self.timeout_hint,
            }
        elif self.stopped == "memory":
            outcome = {
                "status": "out_of_memory",
                "reason": f"the cell needed more than the trial's {self.opts['memory_mb']} MB of memory",
            }
        elif self.stopped == "deadlock":
            tf = " (TensorFlow's thread pools do not)" if self.tensorflow else ""
            outcome = _unavailable(
                "the cell waited for a lock no thread can release: a library's threads do not survive "
                f"the fork{tf}"
            )
        elif self.stopped is not None:
            outcome = _unavailable(self.stopped)
        elif done is not None:
            outcome = {k: v for k, v in done.items() if k not in ("phase", "refusals")}
            refused = outcome.pop("refused", False)
        else:
            outcome = _died(status, ready)
        # A refused side effect means the cell did not run as it will: neither its crash nor its end
        # was observed, whatever the child saw next.
        if refusals and outcome["status"] in ("crashed", "finished"):
            reason = f"the sandbox refused to {_list(refusals)}"
            if outcome["status"] == "finished":
                reason += " (the cell went on to its end)"
            elif not refused:  # the cell's own error came after: say which
                raised = f"{outcome.get('exception')}: {outcome.get('message') or ''}".strip(": ")
                reason += f" (the cell then raised {raised[:300]})"
            outcome = {"status": "blocked", "reason": reason, "elapsed_ms": outcome.get("elapsed_ms")}
        elif refusals and outcome["status"] in ("timed_out", "out_of_memory"):
            note = f"the sandbox refused to {_list(refusals)}"
            outcome["reason"] = f"{outcome['reason']}; {note}" if outcome.get("reason") else note
        outcome["sandbox"] = sandbox_name
        if peak_kb and "extra_memory_mb" not in outcome:
            outcome["extra_memory_mb"] = round(peak_kb / 1024, 1)
        return outcome


def _sweep_scratch() -> None:
    """Remove the scratch directories of kernels that no longer exist."""
    import shutil
    import tempfile

    root = tempfile.gettempdir()
    try:
        names = [n for n in os.listdir(root) if n.startswith(SCRATCH_PREFIX)]
    except OSError:
        return
    for name in names:
        owner = name[len(SCRATCH_PREFIX) :].split("-", 1)[0]
        if not owner.isdigit() or int(owner) == os.getpid():
            continue
        try:
            os.kill(int(owner), 0)
        except ProcessLookupError:
            shutil.rmtree(os.path.join(root, name), ignore_errors=True)
        except OSError:
            pass  # it exists (another user's): not ours to remove


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


def _list(items: list[str]) -> str:
    shown = "; ".join(items[:3])
    return shown + (f" (and {len(items) - 3} more)" if len(items) > 3 else "")


def _died(status: int, ready: dict[str, Any]) -> dict[str, Any]:
    """The outcome of a child that ended without reporting."""
    import signal

    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        name = _signal_name(sig)
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
        return _unavailable(f"the trial process died of {name} (a library that is not safe to fork?)")
    if os.WIFEXITED(status):
        if not ready:
            return _unavailable(
                f"the trial process exited with code {os.WEXITSTATUS(status)} before the cell ran"
            )
        return _unavailable(f"the cell ended the process (exit code {os.WEXITSTATUS(status)})")
    return _unavailable("the trial process ended without a report")


# The futex call's number, by machine (a thread blocked in it shows it in /proc/<pid>/syscall).
_FUTEX = {"x86_64": 202, "aarch64": 98}
# Seconds without CPU progress, the main thread in an untimed futex wait, before the child counts as
# deadlocked.
STUCK_S = 1.0


class _Stuck:
    """Spots a child that can never go on: its main thread waits, without a timeout, on a futex (a lock
    or condition) while the process uses no CPU. After a fork that is a lock held by, or work handed to,
    a thread that exists only in the kernel (TensorFlow's pools, a lock held by one of the kernel's
    threads at the fork)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.futex = _FUTEX.get(os.uname().machine)
        self.cpu = -1.0
        self.since = 0.0

    def deadlocked(self, now: float) -> bool:
        try:
            with open(f"/proc/{self.pid}/schedstat", "rb") as fh:
                cpu = int(fh.read().split()[0]) / 1e9
            with open(f"/proc/{self.pid}/syscall", "rb") as fh:
                call = fh.read().split()
        except (OSError, ValueError, IndexError):
            return False
        waiting = (
            self.futex is not None
            and len(call) > 4
            and call[0] == str(self.futex).encode()
            and int(call[2], 16) & 0x7F in (0, 9)  # FUTEX_WAIT, FUTEX_WAIT_BITSET
            and int(call[4], 16) == 0  # no timeout
        )
        if not waiting or cpu - self.cpu > 0.005:
            self.cpu, self.since = cpu, now
            return False
        return now - self.since >= STUCK_S


def _activity(pid: int, wall: float) -> str:
    """Why a child ran out of time: computing, starved of CPU by a busy machine, or waiting on something
    (from the scheduler's own accounting: time on a CPU and time waiting for one)."""
    try:
        with open(f"/proc/{pid}/schedstat", "rb") as fh:
            running, queued = (int(x) / 1e9 for x in fh.read().split()[:2])
    except (OSError, ValueError):
        return ""
    if running >= 0.5 * wall:
        return " (it was computing)"
    if queued >= 0.3 * wall:
        return (
            f" (the machine was busy: it ran {running:.1f} s and waited {queued:.1f} s for a CPU, "
            "at a lower priority than the kernel)"
        )
    return f" (it was waiting: sleeping, for I/O or for a lock; {running:.1f} s on a CPU in {wall:.1f} s)"


def _private_kb(pid: int) -> int:
    """The child's memory that is its own (not shared with the kernel): what the fork costs."""
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


def _kill(pid: int) -> None:
    import signal

    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)


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


def _signal_name(number: int) -> str:
    import signal

    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _random_state() -> Any:
    rnd = sys.modules.get("random")
    try:
        return rnd.getstate() if rnd is not None else None
    except Exception:
        return None


def _ms(seconds: float) -> float:
    return round(seconds * 1000.0, 2)


def _done(outcome: dict[str, Any]) -> dict[str, Any]:
    return {"state": "done", "outcome": outcome, "blocked_ms": 0.0}


def _unavailable(reason: str) -> dict[str, Any]:
    return {"status": "unavailable", "reason": reason}


# -- the child's side --------------------------------------------------------------------------------


def _child(
    source: str,
    ns: dict[str, Any],
    shell: Any,
    opts: dict[str, Any],
    scratch: str,
    writer: int,
    control: Any,
    random_state: Any,
    parent: int,
) -> None:  # pragma: no cover - runs in the forked child, which ends with os._exit
    code = 70
    try:
        os.setpgid(0, 0)  # an interrupt of the kernel's process group does not reach us
        if sys.platform.startswith("linux"):
            sandbox.set_pdeathsig()
        if os.getppid() != parent:  # the kernel died before PR_SET_PDEATHSIG took hold
            os._exit(0)
        gc.freeze()  # a collection would touch (and copy) every old object of the kernel
        report = _prepare(shell, opts, scratch, writer, control, random_state)
        guard = report.pop("guard")
        _send(writer, {"phase": "ready", **report})
        done = _run(source, ns, shell, guard, report)
        done["refusals"] = guard.refusals
        done["extra_memory_mb"] = round(_private_kb(os.getpid()) / 1024, 1)
        _send(writer, {"phase": "done", **done})
        code = 0
    except BaseException as exc:
        try:
            reason = (
                exc.args[0]
                if isinstance(exc, _NoSandbox)
                else f"the trial failed: {type(exc).__name__}: {exc}"
            )
            _send(writer, {"phase": "done", **_unavailable(str(reason)[:MESSAGE_CHARS])})
        except BaseException:
            pass
    finally:
        os._exit(code)


class _NoSandbox(Exception):
    """The OS sandbox could not be entered (and hooks-only trials are not allowed)."""


def _send(fd: int, message: dict[str, Any]) -> None:
    data = (json.dumps(message, default=str) + "\n").encode()
    while data:
        data = data[os.write(fd, data) :]


def _prepare(
    shell: Any, opts: dict[str, Any], scratch: str, writer: int, control: Any, random_state: Any
) -> dict[str, Any]:  # pragma: no cover - child only
    """Everything between the fork and the cell; returns what the "ready" report carries."""
    t0 = time.perf_counter()
    steps: dict[str, float] = {}

    def step(name: str) -> None:
        steps[name] = _ms(time.perf_counter() - t0)

    layers: dict[str, Any] = {}
    table = sandbox.arch()
    if table is not None:
        # First: a new user namespace needs a single-threaded process, and the libraries below may
        # start threads.
        try:
            layers["private_shm"] = sandbox.enter_namespaces(shm_mb=max(16, int(opts["memory_mb"]) // 4))
            layers["netns"] = True
        except OSError as exc:  # not allowed here (Docker, Ubuntu's AppArmor): the other layers hold
            layers["netns"] = False
            layers["netns_error"] = exc.strerror or str(exc)
    step("namespaces")
    _quiet(shell)
    downgraded = _private_fds(keep={writer, control.fileno()})
    step("fds")
    protected = _private_mappings()
    step("mappings")
    _limits(opts)
    _single_threaded()
    step("threads")
    _libraries(scratch, random_state)
    step("libraries")
    os_layer = False
    failure = "no seccomp filter for this platform"
    if table is not None:
        try:
            layers["landlock_abi"] = sandbox.landlock_abi()
            sandbox.drop_privileges(table[1])
            writable = [scratch] + ([sandbox.SHM] if layers.get("private_shm") else [])
            if layers["landlock_abi"]:
                sandbox.restrict_files(layers["landlock_abi"], writable)
            listener = sandbox.install_filter(table[1], table[0])
            import socket

            # What the supervisor may let through: writes Landlock guards, in these directories.
            grant = {"landlock": bool(layers["landlock_abi"]), "writable": writable}
            socket.send_fds(control, [json.dumps(grant).encode()], [listener])
            os.close(listener)
            os_layer = True
        except OSError as exc:
            failure = f"the kernel refused the sandbox ({exc.strerror or exc})"
    control.close()
    if not os_layer and not opts["hooks_only"]:
        raise _NoSandbox(
            f"no OS sandbox: {failure}; an administrator may allow hooks-only trials "
            "(c.CraneExtension.trial_hooks_only = True)"
        )
    guard = Guard(scratch, os_layer, (sandbox.SHM,) if layers.get("private_shm") else ())
    sys.addaudithook(guard)
    _refuse_input(guard)
    guard.active = True
    return {
        "guard": guard,
        "sandbox": sandbox.sandbox_name(layers) + "+hooks" if os_layer else "audit hooks only",
        "landlock": bool(layers.get("landlock_abi")),
        "netns_error": layers.get("netns_error"),
        "downgraded": downgraded,
        "protected_mappings": protected,
        "setup_ms": _ms(time.perf_counter() - t0),
        "steps": steps,
    }


def _quiet(shell: Any) -> None:  # pragma: no cover - child only
    """No output can reach the notebook: fds 0/1/2 and sys.std* to /dev/null, IPython's display and
    ipykernel's streams and session as no-ops (they would talk to the kernel's sockets)."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    sys.stdin = open(os.devnull)  # noqa: SIM115 - lives until os._exit
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115
    sys.stderr = sys.stdout

    def nothing(*args: Any, **kwargs: Any) -> None:
        return None

    iostream = sys.modules.get("ipykernel.iostream")
    if iostream is not None:
        for name in ("OutStream", "IOPubThread", "BackgroundSocket"):
            cls = getattr(iostream, name, None)
            for method in ("write", "writelines", "flush", "_flush", "send_multipart", "schedule"):
                if cls is not None and hasattr(cls, method):
                    setattr(cls, method, (lambda self, s="", *a, **k: len(s) if isinstance(s, str) else None))
    session = sys.modules.get("jupyter_client.session")
    if session is not None and hasattr(session, "Session"):
        session.Session.send = nothing
    publisher = getattr(shell, "display_pub", None)
    if publisher is not None:
        publisher.publish = nothing
        publisher.clear_output = nothing


def _private_fds(keep: set) -> list[str]:  # type: ignore[type-arg]  # pragma: no cover - child only
    """Inherited descriptors made private: files reopened read-only with their own offset (reading moves
    the kernel's position no more), sockets, pipes and devices replaced by /dev/null. Returns the
    files that were open for writing."""
    import fcntl
    import stat

    downgraded: list[str] = []
    try:
        fds = [int(fd) for fd in os.listdir("/proc/self/fd")]
    except OSError:
        return downgraded
    null = os.open(os.devnull, os.O_RDWR)
    for fd in fds:
        if fd <= 2 or fd in keep or fd == null:
            continue
        try:
            st = os.fstat(fd)
        except OSError:
            continue
        try:
            inheritable = os.get_inheritable(fd)
            if stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode):
                flags = fcntl.fcntl(fd, fcntl.F_GETFL)
                if flags & (os.O_WRONLY | os.O_RDWR):
                    downgraded.append(os.readlink(f"/proc/self/fd/{fd}"))
                mode = os.O_RDONLY | (os.O_DIRECTORY if stat.S_ISDIR(st.st_mode) else 0)
                fresh = os.open(f"/proc/self/fd/{fd}", mode | (flags & os.O_NONBLOCK))
                with contextlib.suppress(OSError):
                    os.lseek(fresh, os.lseek(fd, 0, os.SEEK_CUR), os.SEEK_SET)
                os.dup2(fresh, fd, inheritable=inheritable)
                os.close(fresh)
            elif stat.S_ISCHR(st.st_mode) and os.readlink(f"/proc/self/fd/{fd}") in (
                "/dev/null",
                "/dev/zero",
                "/dev/urandom",
                "/dev/random",
            ):
                continue
            else:
                os.dup2(null, fd, inheritable=inheritable)
        except OSError:
            with contextlib.suppress(OSError):
                os.dup2(null, fd)
    os.close(null)
    return downgraded


def _private_mappings() -> int:  # pragma: no cover - child only
    """Memory the kernel shares with other processes (np.memmap in r+ mode, multiprocessing locks, shared
    memory) becomes the child's own: small mappings are copied, big ones made read-only (a write then
    ends the child, reported as blocked). Returns how many were made read-only."""
    try:
        with open("/proc/self/maps") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return 0
    shared = []
    for line in lines:
        parts = line.split()
        if len(parts) >= 2 and parts[1][1] == "w" and parts[1][3] == "s":
            start, end = (int(x, 16) for x in parts[0].split("-"))
            shared.append((start, end - start, parts[1][0] == "r"))
    if not shared:
        return 0
    c = sandbox.libc()
    table = sandbox.arch()
    protected, copied = 0, 0
    for start, size, readable in shared:
        if readable and table is not None and copied + size <= COPY_SHARED_LIMIT:
            tmp = c.lib.mmap(None, size, 3, 0x22, -1, 0)  # PROT_READ|WRITE, MAP_PRIVATE|ANONYMOUS
            if tmp not in (None, -1, 0xFFFFFFFFFFFFFFFF):
                c.ctypes.memmove(tmp, start, size)
                try:
                    c.syscall(
                        table[1]["mremap"], c.ctypes.c_void_p(tmp), size, size, 3, c.ctypes.c_void_p(start)
                    )
                    copied += size
                    continue
                except OSError:
                    pass
        if c.lib.mprotect(start, size, 1) == 0:  # PROT_READ
            protected += 1
    return protected


def _limits(opts: dict[str, Any]) -> None:  # pragma: no cover - child only
    """Lower priority, the first to go when memory runs out, no core dumps, and an address-space cap."""
    with contextlib.suppress(OSError):
        os.nice(int(opts["nice"]))
    try:
        with open("/proc/self/oom_score_adj", "w") as fh:
            fh.write("1000")
    except OSError:
        pass
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        with open("/proc/self/statm") as fh:
            size = int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        # A backstop for one huge allocation before the watching thread's next look; the cap itself is
        # measured on the child's own pages (copy-on-write copies included), which this cannot see.
        limit = size + 2 * int(opts["memory_mb"]) * 1024 * 1024 + (1 << 30)
        hard = resource.getrlimit(resource.RLIMIT_AS)[1]
        if hard == resource.RLIM_INFINITY or limit < hard:
            resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (OSError, ValueError, ImportError):
        pass


def _single_threaded() -> None:  # pragma: no cover - child only
    """One thread for torch, OpenMP and BLAS in the child: their pools' threads do not survive the fork,
    and the kernel keeps its cores."""
    torch = sys.modules.get("torch")
    if torch is not None:
        with contextlib.suppress(Exception):
            torch.set_num_threads(1)
    try:
        with open("/proc/self/maps") as fh:
            paths = {line.split()[-1] for line in fh if ".so" in line and "/" in line}
    except OSError:
        return
    import ctypes

    setters = {
        "openblas": ("openblas_set_num_threads", "openblas_set_num_threads64_",
                     "scipy_openblas_set_num_threads", "scipy_openblas_set_num_threads64_"),
        "gomp": ("omp_set_num_threads",), "iomp": ("omp_set_num_threads",),
        "libomp": ("omp_set_num_threads",),
        "mkl_rt": ("MKL_Set_Num_Threads",), "blis": ("bli_thread_set_num_threads",),
    }  # fmt: skip
    for path in paths:
        base = os.path.basename(path)
        for key, names in setters.items():
            if key in base:
                try:
                    lib = ctypes.CDLL(path)
                except OSError:
                    continue
                for name in names:
                    fn = getattr(lib, name, None)
                    if fn is not None:
                        with contextlib.suppress(Exception):
                            fn(1)


def _libraries(scratch: str, random_state: Any) -> None:  # pragma: no cover - child only
    """The child behaves like the kernel where the fork changed something, and writes nothing by itself."""
    rnd = sys.modules.get("random")
    if rnd is not None and random_state is not None:
        with contextlib.suppress(Exception):
            rnd.setstate(random_state)  # random reseeds itself in a forked child
    sys.dont_write_bytecode = True  # an import would write .pyc files (refused, and then "blocked")
    import tempfile

    tempfile.tempdir = scratch
    for name in ("TMPDIR", "TEMP", "TMP"):
        os.environ[name] = scratch
    mpl = sys.modules.get("matplotlib")
    if mpl is None:
        os.environ["MPLBACKEND"] = "agg"
    else:
        try:
            current = mpl.rcParams._get_backend_or_none() or ""
        except Exception:
            current = ""
        if current and "inline" not in current and current.lower() != "agg":
            with contextlib.suppress(Exception):
                mpl.use("agg", force=True)  # a GUI backend in a forked child would use the kernel's display
    asyncio = sys.modules.get("asyncio")
    if asyncio is not None:
        with contextlib.suppress(Exception):
            asyncio.events._set_running_loop(None)  # the kernel's loop does not run here


def _refuse_input(guard: Guard) -> None:  # pragma: no cover - child only
    import builtins

    def refused(*args: Any, **kwargs: Any) -> str:
        guard.refuse("wait for input from the user")
        return ""

    builtins.input = refused
    module = sys.modules.get("getpass")
    if module is not None:
        setattr(module, "getpass", refused)  # noqa: B010 - a module the kernel loaded, in the child


def _run(
    source: str, ns: dict[str, Any], shell: Any, guard: Guard, report: dict[str, Any]
) -> dict[str, Any]:  # pragma: no cover
    """Run the cell as IPython would (its transformation, its compiler flags) on the child's copy of the
    namespace; the outcome as the child sees it."""
    import linecache

    transform = getattr(shell, "transform_cell", None)
    code_text = transform(source) if callable(transform) else python_source(source)
    linecache.cache[CELL_FILE] = (len(source), None, source.splitlines(True), CELL_FILE)
    flags = getattr(getattr(shell, "compile", None), "flags", 0) | 0x2000  # PyCF_ALLOW_TOP_LEVEL_AWAIT
    t0 = time.perf_counter()
    try:
        code = compile(code_text, CELL_FILE, "exec", flags, dont_inherit=True)
        value = eval(code, ns)
        if getattr(value, "cr_code", None) is not None:
            import asyncio

            loop = asyncio.new_event_loop()
            loop.run_until_complete(value)
    except BaseException as exc:
        elapsed = _ms(time.perf_counter() - t0)
        return _classify(exc, source, guard, report, elapsed)
    return {"status": "finished", "elapsed_ms": _ms(time.perf_counter() - t0)}


_OOM_TEXT = (
    "can't allocate memory",
    "cannot allocate memory",
    "bad_alloc",
    "out of memory",
    "unable to allocate",
)


def _classify(
    exc: BaseException, source: str, guard: Guard, report: dict[str, Any], elapsed: float
) -> dict[str, Any]:  # pragma: no cover
    chain = _chain(exc)
    texts = [f"{type(e).__name__}: {_text(e)}".lower() for e in chain]
    if any(isinstance(e, MemoryError) for e in chain) or any(t in s for s in texts for t in _OOM_TEXT):
        return {"status": "out_of_memory", "elapsed_ms": elapsed,
                "reason": f"the cell ran out of the trial's memory ({type(exc).__name__})"}  # fmt: skip
    if any("cannot re-initialize cuda in forked subprocess" in s for s in texts):
        return {**_unavailable("CUDA in use: a forked process cannot use the GPU"), "elapsed_ms": elapsed}
    refused = any(isinstance(e, Refused) for e in chain)
    if refused and not guard.refusals:
        guard.refusals.append("an operation the sandbox refused")
    downgraded = report.get("downgraded") or []
    if downgraded and any(isinstance(e, OSError) and e.errno == 9 for e in chain):  # EBADF
        guard.refusals.append(f"write to a file the kernel holds open ({downgraded[0]})")
    frames = _frames(exc, source)
    return {
        "status": "crashed",
        "exception": type(exc).__name__,
        "message": _text(exc)[:MESSAGE_CHARS],
        "line": frames[-1]["line"] if frames else None,
        "frames": frames[:MAX_FRAMES],
        "elapsed_ms": elapsed,
        "refused": refused,  # the exception is the sandbox's own refusal (not part of the outcome)
    }


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen and len(seen) < 20:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def _text(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:
        return "<unprintable message>"


def _frames(exc: BaseException, source: str) -> list[dict[str, Any]]:  # pragma: no cover - child only
    """The traceback's frames that lie in the cell, outermost first: (line, text)."""
    lines = source.splitlines()
    out: list[dict[str, Any]] = []
    tb = exc.__traceback__
    timed = source.lstrip().startswith("%%")  # a %%time body starts on the cell's second line
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        line = tb.tb_lineno
        if filename == CELL_FILE or (timed and filename == "<timed exec>"):
            number = line + (1 if filename != CELL_FILE else 0)
            text = lines[number - 1].strip() if 0 < number <= len(lines) else ""
            out.append({"line": number, "text": text[:300]})
        tb = tb.tb_next
    if not out and isinstance(exc, SyntaxError) and exc.filename == CELL_FILE and exc.lineno:
        text = lines[exc.lineno - 1].strip() if 0 < exc.lineno <= len(lines) else ""
        out.append({"line": exc.lineno, "text": text[:300]})
    return out


__all__ = ["DEFAULTS", "cancel", "cuda_in_use", "gpu_device", "result", "start"]
