"""The trial's entry points: the target cell run in a sandbox before the user runs it, one trial per kernel.

Each is called silently through `user_expressions` like the probe, and each returns at once:

- `start(source, options, namespace)` starts the trial: `fork.py` forks the kernel; the child (`child.py`)
  enters the sandbox (`sandbox/`), runs the cell on its copy-on-write copy of the user namespace
  (`execute.py`) and reports through a pipe. A thread of the kernel (`watch.py`) answers the child's
  seccomp notifications (`sandbox/supervisor.py`), ends it at the time budget or the memory cap, reaps it
  (no zombie) and keeps the outcome. At most one trial runs per kernel: a new one ends the previous.
- `result(token)` returns the outcome once it is there (`{"state": "running"}` until then): the server
  polls, with growing pauses, so the kernel never waits for the trial.
- `cancel(token)` ends a trial early.

The child never touches the kernel's sockets or streams: fds 0/1/2 point to /dev/null, inherited sockets
and pipes are replaced by /dev/null, inherited files are reopened read-only with their own offset (the
kernel's file positions stay where they are), and a use of any of them is refused and recorded by the
supervisor (`sandbox/inherited.py`), memory shared with other processes is copied or made read-only,
IPython's publishers and ipykernel's output streams are no-ops, `input()` is refused, and the
child ends with `os._exit` (no atexit handlers, no finalizers). It dies with the kernel (PR_SET_PDEATHSIG)
and lives in its own process group, so an interrupt of the kernel does not reach it.

Outcome (models.TrialOutcome): `crashed` (exception, message, line, frames in the cell), `finished`,
`blocked` (the sandbox refused a side effect, so the cell did not run as it will), `timed_out`,
`out_of_memory`, `unavailable` (with the reason); `writes` says what the cell wrote to its private
copy-on-write copy of the files (`private_writes`, sandbox/overlay.py), which is discarded with the trial.
"""

from __future__ import annotations

import _thread
import os
import sys
import threading
import time
from typing import Any

from ..cell import runnable
from . import execute, fork, tfwork, top, worker
from .outcome import ms, unavailable
from .sandbox import seccomp
from .sandbox.supervisor import gpu_device
from .watch import SETUP_ALLOWANCE_S, Trial

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
    # Where the fork cannot go (TensorFlow's runtime in the kernel), a spawned worker runs the cell on a
    # copy of its inputs (worker.py), copying at most worker_max_mb of them: "auto"; "always" (tests,
    # benchmarks) or "never" (fork or nothing).
    "worker": "auto",
    "worker_max_mb": 1024,
    "worker_gpu_fraction": 0.5,  # the share of each GPU's memory a worker may allocate
    # The code cells below the target ([{"cell_id", "source"}], notebook order): once the target has run
    # to its end, the same trial goes on with them (chain.py), within chain_s seconds in all.
    "below": [],
    "chain_s": 10.0,
    "chain_quick": True,  # the chain's steps in quick mode (a run from the top may ask for full runs)
}
# The most cells below the target a chain takes.
MAX_BELOW = 200
# Scratch directories are named after the kernel's pid, so the next trial can remove those of kernels
# that ended while a trial ran (their watching thread never got to it).
SCRATCH_PREFIX = "crane-trial-"

_current: Trial | worker.WorkerTrial | None = None
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
    relay = _worker_after_a_fork_death(trial)
    if relay is not None:
        return {"state": "running", "token": relay.token, "elapsed_ms": ms(time.monotonic() - trial.forked)}
    return {"state": "done", "token": trial.token, "outcome": trial.outcome, "blocked_ms": trial.blocked_ms}


# The fork trial last started in a kernel with TensorFlow's runtime: what a worker needs to take it over.
_TAKEOVER: dict[str, Any] = {}


def _worker_after_a_fork_death(trial: Any) -> worker.WorkerTrial | None:
    """A fork of a kernel whose TensorFlow runtime is running may die of SIGABRT, wait on a lock of a
    thread it lacks, or reach a graph function, where the cell reads TensorFlow only through an object of
    the notebook (`worker.needed` looks at the names alone): the worker, with a runtime of its own, takes
    the cell, under the same token (run here, on the kernel's thread, which a request to poll the trial
    holds)."""
    global _current
    taken = dict(_TAKEOVER)
    if taken.get("token") != trial.token or not worker.graphs_stopped(trial):
        return None
    _TAKEOVER.clear()
    try:
        why = f"TensorFlow stopped the fork: {(trial.outcome or {}).get('reason')}"
        # (the fork stopped already: no second one runs the cell where the inputs cannot be copied)
        relay = worker.WorkerTrial(dict(taken["opts"], below=[], fork_fallback=False), _scratch, why)
        relay.token = trial.token
        relay.fork_outcome = dict(trial.outcome or {})
        relay.start(taken["source"], taken["ns"], _shell(), fork_first=False)
    except Exception:  # the fork's outcome stands
        return None
    with _lock:
        _current = relay
    return relay


def cancel(token: str | None = None) -> dict[str, Any]:
    """End the running trial (the given one, or any)."""
    trial = _current
    if trial is None or (token and trial.token != token):
        return {"state": "unknown"}
    trial.stop("cancelled")
    return {"state": "cancelled", "token": trial.token}


# -- the kernel's side -------------------------------------------------------------------------------


# -- from the top (top.py) -----------------------------------------------------------------------------

_top: top.TopRun | None = None


def top_start(cells: Any, options: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run the notebook's code cells (`[{"cell_id", "source"}]`) from the top in a fresh sandboxed worker
    of the kernel's Python; `options["chain_s"]` is the whole run's budget. One run per kernel: a new one
    ends the previous. Returns `{"state": "running", "token", "total"}` or a done state. Never raises."""
    global _top
    try:
        if not isinstance(cells, list) or not all(isinstance(c, dict) for c in cells):
            return _done(unavailable("the cells must be a list of {cell_id, source}"))
        opts = _options(options)
        if not worker.possible() or seccomp.arch() is None:
            return _done(unavailable("a run from the top needs a worker and the OS sandbox (Linux)"))
        with _lock:
            if _top is not None:
                _top.stop("replaced by a newer run from the top")
            _top = top.TopRun(cells[:MAX_BELOW], opts, _scratch)
            _top.start()
            return {"state": "running", "token": _top.token, "total": len(_top.cells)}
    except Exception as exc:  # the contract: never raise into the kernel
        return _done(unavailable(f"the run from the top could not start: {type(exc).__name__}: {exc}"))


def top_result(token: str | None = None) -> dict[str, Any]:
    """The run's state: running (with its progress), done (with the outcome), or unknown."""
    run = _top
    if run is None or (token and run.token != token):
        return {"state": "unknown"}
    if run.outcome is None:
        return {"state": "running", "token": run.token, **run.progress()}
    return {"state": "done", "token": run.token, "outcome": run.outcome, **run.progress()}


def top_cancel(token: str | None = None) -> dict[str, Any]:
    run = _top
    if run is None or (token and run.token != token):
        return {"state": "unknown"}
    run.stop("cancelled")
    return {"state": "cancelled", "token": run.token}


def _options(options: dict[str, Any] | None) -> dict[str, Any]:
    """The options with the defaults filled in; a value of the wrong type keeps the default, numbers are
    clamped to their bounds."""
    opts = dict(DEFAULTS)
    bounds = {"budget_s": (0.05, 3600.0), "memory_mb": (16, 1 << 20), "nice": (0, 19), "quick_k": (1, 1000),
              "worker_max_mb": (1, 1 << 20), "worker_gpu_fraction": (0.01, 1.0),
              "chain_s": (0.05, 3600.0)}  # fmt: skip
    for key, value in (options or {}).items():
        if key not in DEFAULTS:
            continue
        if key == "below":
            if isinstance(value, list):
                opts[key] = value[:MAX_BELOW]
        elif isinstance(DEFAULTS[key], bool):
            if isinstance(value, bool):
                opts[key] = value
        elif key == "worker":
            if value in ("auto", "always", "never"):
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
        fork_only = dict(opts, below=[])  # a worker's trial runs no chain (chain.py runs in the fork)
        if gpu and (opts["worker"] == "never" or not worker.possible()):
            return _done(unavailable(f"CUDA in use: {gpu}; a forked process cannot use the GPU"))
        if gpu:  # a fork cannot use the GPU, nor read it: packed on a thread of the kernel instead
            relay = worker.WorkerTrial(
                fork_only, _scratch, f"CUDA in use ({gpu}): a forked process cannot use the GPU"
            )
            relay.start(source, ns, shell, cuda=True)
            relay.blocked_ms = ms(time.perf_counter() - t0)
            _current = relay
            return _running(relay, "worker", relay.setup_s)
        why = None
        if opts["worker"] == "always" and worker.possible():
            why = "asked for (worker: always)"
        elif opts["worker"] == "auto":
            why = worker.needed(runnable(source, shell), ns)
        if why:
            relay = worker.WorkerTrial(fork_only, _scratch, why)
            # auto: the fork first (it observes all it can, on the kernel's own objects), the worker
            # where TensorFlow stops it.
            # (not where the cell calls a Keras fit/predict/evaluate or a tf.function at once)
            first = opts["worker"] == "auto" and not worker.graph_call(runnable(source, shell), ns)
            relay.start(source, ns, shell, fork_first=first)
            relay.blocked_ms = ms(time.perf_counter() - t0)
            _current = relay
            return _running(relay, "worker", relay.setup_s)
        imports = execute.new_imports(runnable(source, shell))  # imported before the budget (child.py)
        trial = Trial(dict(opts, first_imports=imports) if imports else opts, _scratch())
        if imports:
            trial.setup_s += execute.IMPORT_ALLOWANCE_S
        fork.fork(trial, source, ns, shell)
        trial.blocked_ms = ms(time.perf_counter() - t0)
        _current = trial
        # Not threading.Thread: its start() waits until the new thread runs, which the kernel would pay.
        _thread.start_new_thread(trial.watch, ())
        _TAKEOVER.clear()
        if opts["worker"] == "auto" and tfwork.initialised_context() is not None:
            worker.warm_up(opts, _scratch)  # TensorFlow lives here: the next such cell finds a spare
            if worker.possible():
                _TAKEOVER.update(token=trial.token, source=source, opts=opts, ns=ns)
    return _running(trial, "fork", trial.setup_s)


def _running(trial: Any, way: str, setup_s: float) -> dict[str, Any]:
    return {
        "state": "running",
        "token": trial.token,
        "pid": trial.pid,
        "way": way,  # "fork", or "worker" (a fresh process on a copy of the cell's inputs)
        "setup_s": setup_s,  # what the trial may take before the cell's budget starts
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
    if seccomp.arch() is None and not opts["hooks_only"]:
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


def spare(start: bool = False) -> dict[str, Any]:
    """The warm spare worker: whether one is warm, its pid, start time and resident memory; with `start`,
    one is started in the background first where none is (ahead of a trial that will need it)."""
    try:
        if start and worker.possible():
            worker.warm_up(dict(DEFAULTS), _scratch)
        return worker.describe()
    except Exception as exc:  # the contract: never raise into the kernel
        return {"warm": False, "error": f"{type(exc).__name__}: {exc}"}


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


def _scratch() -> str:
    """A new private temporary directory for the trial process (its TMPDIR, writable in the sandbox)."""
    import tempfile

    _sweep_scratch()
    return os.path.realpath(tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-"))


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


def _done(outcome: dict[str, Any]) -> dict[str, Any]:
    return {"state": "done", "outcome": outcome, "blocked_ms": 0.0}


__all__ = [
    "DEFAULTS", "SETUP_ALLOWANCE_S", "cancel", "cuda_in_use", "gpu_device", "result", "spare", "start",
    "top_cancel", "top_result", "top_start",
]  # fmt: skip
