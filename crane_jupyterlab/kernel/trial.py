"""The trial run: the target cell executed in a sandboxed fork of the kernel, before the user runs it.

Entry points, each called silently through `user_expressions` like the probe and each returning at once:

- `start(source, options, namespace)` forks the kernel. The kernel is blocked only for the fork (the
  page tables are copied, not the memory). The child (`child.py`) enters the sandbox (`sandbox.py`,
  `hooks.py`), runs the cell on its copy-on-write copy of the user namespace and reports through a pipe.
  A thread of the kernel (`_Trial.watch`) answers the child's seccomp notifications (`supervisor.py`),
  ends it at the time budget or the memory cap, reaps it (no zombie) and keeps the outcome. At most one
  trial runs per kernel: a new one ends the previous.
- `result(token)` returns the outcome once it is there (`{"state": "running"}` until then): the server
  polls, with growing pauses, so the kernel never waits for the trial.
- `cancel(token)` ends a trial early.

The child never touches the kernel's sockets or streams: fds 0/1/2 point to /dev/null, inherited sockets
and pipes are replaced by /dev/null, inherited files are reopened read-only with their own offset (the
kernel's file positions stay where they are), and a use of any of them is refused and recorded by the
supervisor (`inherited.py`), memory shared with other processes is copied or made read-only, IPython's
publishers and ipykernel's output streams are no-ops, `input()` is refused, and the
child ends with `os._exit` (no atexit handlers, no finalizers). It dies with the kernel (PR_SET_PDEATHSIG)
and lives in its own process group, so an interrupt of the kernel does not reach it.

Outcome (models.TrialOutcome): `crashed` (exception, message, line, frames in the cell), `finished`,
`blocked` (the sandbox refused a side effect, so the cell did not run as it will), `timed_out`,
`out_of_memory`, `unavailable` (with the reason); `writes` says what the cell wrote to its private
copy-on-write copy of the files (`private_writes`, overlay.py), which is discarded with the trial.

Over 500 lines, kept whole: what is left is the kernel's side only, one `_Trial` and the thread that
watches it (budget, memory, deadlock, the outcome); the forked child's code is in `child.py`.
"""

from __future__ import annotations

import _thread
import contextlib
import json
import os
import sys
import threading
import time
from typing import Any

from . import child, overlay, sandbox
from .child import ms, private_kb, unavailable
from .supervisor import Supervisor

DEFAULTS: dict[str, Any] = {
    "budget_s": 5.0,  # the cell's wall time in the child
    "memory_mb": 2048,  # the child's memory beyond what it shares with the kernel
    "hooks_only": False,  # run with audit hooks alone where the OS offers no sandbox (an admin's choice)
    "nice": 5,  # below the kernel: it gets 3x the CPU of the trial where they share a core
    # Writes beneath the working, home and temporary directories land in a private copy-on-write copy
    # (overlay.py) instead of being refused; off here, so a caller that does not ask keeps refusals.
    "private_writes": False,
    "quick": False,  # a quick trial: long loops cut after their first quick_k iterations (quick.py)
    "quick_k": 2,
    "progress": True,  # a full trial counts its loops' iterations, to say how far it got at a timeout
}
# Seconds the child may take to enter the sandbox before the cell's budget starts.
SETUP_ALLOWANCE_S = 3.0
# How often the thread checks the child's memory (seconds).
MEMORY_CHECK_S = 0.25
# Scratch directories are named after the kernel's pid, so the next trial can remove those of kernels
# that ended while a trial ran (their watching thread never got to it).
SCRATCH_PREFIX = "crane-trial-"

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
        return _done(unavailable(f"the trial could not start: {type(exc).__name__}: {exc}"))


def result(token: str | None = None) -> dict[str, Any]:
    """The trial's state: running, done (with the outcome), or unknown (replaced, or the kernel restarted)."""
    trial = _current
    if trial is None or (token and trial.token != token):
        return {"state": "unknown"}
    if trial.outcome is None:
        return {"state": "running", "token": trial.token, "elapsed_ms": ms(time.monotonic() - trial.forked)}
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
    bounds = {"budget_s": (0.05, 3600.0), "memory_mb": (16, 1 << 20), "nice": (0, 19), "quick_k": (1, 1000)}
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
        return _done(unavailable("the cell's source must be a string"))
    with _lock:
        previous = _current
        if previous is not None:
            previous.stop("replaced by a newer trial")
        shell = _shell()
        ns = namespace if isinstance(namespace, dict) else getattr(shell, "user_ns", None)
        if not isinstance(ns, dict):
            return _done(unavailable("not an IPython kernel: there is no user namespace to copy"))
        reason = _cannot_fork(opts)
        if reason:
            return _done(unavailable(reason))
        gpu = cuda_in_use()
        if gpu:
            return _done(unavailable(f"CUDA in use: {gpu}; a forked process cannot use the GPU"))
        trial = _Trial(opts)
        trial.fork(source, ns, shell)
        trial.blocked_ms = ms(time.perf_counter() - t0)
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
        self.supervisor: Supervisor | None = None
        self.scratch = ""
        self.reader = -1
        self.control: Any = None
        self.memory = -1  # /proc/<child>/mem, opened while the child still has the kernel's credentials
        self.timeout_hint = ""
        self.tensorflow = "tensorflow" in sys.modules
        self.layer = -1  # the child's private copy-on-write layer (a tmpfs), sent by the child
        self.layer_peak = 0  # bytes it held at most

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
            child.main(source, ns, shell, self.opts, self.scratch, writer, child_end, state, parent)
        self.fork_ms = ms(time.perf_counter() - t0)
        self.fork_cpu_ms = ms(_thread_cpu() - cpu0)
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
                    private = private_kb(self.pid)
                    peak_kb = max(peak_kb, private)
                    # Files the cell wrote to its private copy live in memory too: they count.
                    layer = overlay.used_bytes(self.layer) if self.layer >= 0 else 0
                    self.layer_peak = max(self.layer_peak, layer)
                    if private + layer // 1024 > int(self.opts["memory_mb"]) * 1024:
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
            fds[0], self.pid, writable, bool(grant.get("landlock")), self.memory, layers, watched
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
            progress = [r for r in reports if r.get("phase") == "progress"]
            if progress:  # how far it got (quick.py counts the loops' iterations)
                last = progress[-1]
                outcome["progress"] = {"line": last.get("line"), "loops": last.get("loops") or [],
                                       "elapsed_ms": ms(float(self.opts["budget_s"]))}  # fmt: skip
        elif self.stopped == "memory":
            cap = self.opts["memory_mb"]
            files = f", {overlay.size(self.layer_peak)} of it files written" if self.layer_peak else ""
            outcome = {
                "status": "out_of_memory",
                "reason": f"the cell needed more than the trial's {cap} MB of memory{files}",
            }
        elif self.stopped == "deadlock":
            tf = " (TensorFlow's thread pools do not)" if self.tensorflow else ""
            outcome = unavailable(
                "the cell waited for a lock no thread can release: a library's threads do not survive "
                f"the fork{tf}"
            )
        elif self.stopped is not None:
            outcome = unavailable(self.stopped)
        elif done is not None:
            outcome = {k: v for k, v in done.items() if k not in ("phase", "refusals")}
            refused = outcome.pop("refused", False)
        else:
            outcome = _died(status, ready)
        written = self._written(outcome)
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
        if written:
            outcome["writes"] = written
        if peak_kb and "extra_memory_mb" not in outcome:
            outcome["extra_memory_mb"] = round(peak_kb / 1024, 1)
        return outcome

    def _written(self, outcome: dict[str, Any]) -> str | None:
        """What the cell wrote to its private copy, in words (see overlay.settle)."""
        if self.layer < 0:
            return None
        self.layer_peak = max(self.layer_peak, overlay.used_bytes(self.layer))
        layers = self.supervisor.layers if self.supervisor is not None else []
        cap = int(self.opts["memory_mb"])
        return overlay.settle(outcome, self.layer, layers, cap, self.layer_peak, self.scratch)


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
        return unavailable(f"the trial process died of {name} (a library that is not safe to fork?)")
    if os.WIFEXITED(status):
        if not ready:
            return unavailable(
                f"the trial process exited with code {os.WEXITSTATUS(status)} before the cell ran"
            )
        return unavailable(f"the cell ended the process (exit code {os.WEXITSTATUS(status)})")
    return unavailable("the trial process ended without a report")


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


def _done(outcome: dict[str, Any]) -> dict[str, Any]:
    return {"state": "done", "outcome": outcome, "blocked_ms": 0.0}


__all__ = ["DEFAULTS", "cancel", "cuda_in_use", "gpu_device", "result", "start"]
