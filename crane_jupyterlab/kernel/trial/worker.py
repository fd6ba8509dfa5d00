"""The kernel's side of the trial worker: a trial where the fork cannot go, in a fresh process.

A forked child cannot run TensorFlow's graph functions or big ops (its thread pools do not survive the
fork) nor use the kernel's GPU. There the trial runs in a worker: a fresh interpreter of the kernel's own
Python (`spawned.py`), started ahead of need as a warm spare with the libraries the kernel has loaded,
sandboxed as the forked child is, used for one trial and discarded; the next spare starts in the
background. The cell's inputs reach it as a copy (`transfer.py`), packed in a sandboxed fork of the
kernel (the kernel is blocked only for the fork, and reading its objects changes none of them), and the
worker's outcome comes back through the same supervising thread as the fork's (`watch.py`).

`needed` says when: the kernel has a live TensorFlow runtime and the cell reaches TensorFlow or Keras
(a model, a tensor, the module, a notebook function that uses them). What cannot be copied faithfully
makes the outcome *unavailable* with the reason, never *crashed* or *finished*.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
import time
from typing import Any

from ..cell import python_source, runnable
from . import execute, fork, kerascopy, spawned, state, tfwork, transfer
from .outcome import ms, unavailable
from .watch import Trial

# Seconds a worker may take from its job to "ready": a spare still warming up imports its libraries,
# and the inputs are rebuilt (a cold start with TensorFlow takes several seconds on a small machine).
SETUP_S = 60.0
# Seconds the packing fork may take, beyond the cell's budget.
PACK_S = 30.0
# The share of each GPU's memory a worker may allocate (torch's per-process cap): the kernel keeps the rest.
GPU_FRACTION = 0.5
# Libraries whose objects a forked child cannot run once their runtime lives in the kernel.
GRAPH_ROOTS = ("tensorflow", "keras", "tf_keras")

_spare: Spare | None = None
_spare_lock = threading.Lock()


def possible() -> bool:
    """A worker needs a memory file to hand the inputs over (Linux) and the kernel's interpreter."""
    return hasattr(os, "memfd_create") and bool(sys.executable)


def needed(code_text: str, ns: dict[str, Any]) -> str | None:
    """Why this cell's trial should run in a worker (None: the fork will do)."""
    if tfwork.initialised_context() is None or not possible():
        return None
    for name in transfer.working_set(code_text, ns):
        if _uses_graphs(ns[name]):
            return f"the cell uses TensorFlow (`{name}`), whose thread pools do not survive a fork"
    return None


# Keras methods that always run a graph function: a fork would only reach it and stop.
_GRAPH_METHODS = frozenset(
    {"fit", "predict", "evaluate", "train_on_batch", "test_on_batch", "predict_on_batch"}
)


def graph_call(code_text: str, ns: dict[str, Any]) -> bool:
    """Whether the cell's first statement calls a Keras model's fit/predict/evaluate or a `tf.function`
    of the notebook: the fork would stop there, so the worker takes the cell at once. (A later call: what
    comes before it may crash in the fork, on the kernel's own objects, even where the inputs cannot be
    copied to a worker.)"""
    import ast

    try:
        tree = ast.parse(code_text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            return False  # what the cell defines may be called or not: the fork decides
    for stmt in tree.body[:1]:  # the first statement: nothing before it can crash in a fork first
        call = getattr(stmt, "value", None)
        if not isinstance(call, ast.Call):
            continue
        func = call.func
        if (
            isinstance(func, ast.Attribute)
            and func.attr in _GRAPH_METHODS
            and isinstance(func.value, ast.Name)
        ):
            if kerascopy.keras_model(ns.get(func.value.id)):
                return True
        elif isinstance(func, ast.Name) and _tf_function(ns.get(func.id)):
            return True
    return False


def _tf_function(value: Any) -> bool:
    kind = type(value)
    return kind.__qualname__ == "Function" and kind.__module__.split(".", 1)[0] == "tensorflow"


def _uses_graphs(value: Any) -> bool:
    """A TensorFlow or Keras module, or an object or class of theirs (a notebook's subclass included)."""
    kind = type(value)
    if kind is type(sys):
        name = value.__dict__.get("__name__")
        return isinstance(name, str) and name.split(".", 1)[0] in GRAPH_ROOTS
    try:
        mro = type.__dict__["__mro__"].__get__(value if isinstance(value, type) else kind)
    except Exception:
        return False
    for cls in mro:
        name = type.__dict__["__module__"].__get__(cls)
        if isinstance(name, str) and name.split(".", 1)[0] in GRAPH_ROOTS:
            return True
    return False


# -- the spare ----------------------------------------------------------------------------------------


class Spare:
    """A spawned worker waiting for its one job."""

    def __init__(
        self,
        opts: dict[str, Any],
        scratch: str,
        python: str | None = None,
        modules: list[str] | None = None,
        sys_path: list[str] | None = None,
    ) -> None:
        """`python`: the interpreter (the kernel's by default); `modules`: what it imports while it waits
        (the kernel's libraries by default); `sys_path`: its import path (the kernel's by default)."""
        import socket
        import subprocess

        self.scratch = scratch
        self.cwd = os.getcwd()
        self.modules = state.loaded_modules() if modules is None else modules
        self.started = time.monotonic()
        self.warm: dict[str, Any] | None = None
        self.buffer = b""
        report_r, report_w = os.pipe()
        life_r, life_w = os.pipe()
        self.control, theirs = socket.socketpair()
        args = {
            "report": report_w, "lifeline": life_r, "control": theirs.fileno(), "modules": self.modules,
            "memory_mb": int(opts["memory_mb"]), "nice": int(opts["nice"]),
            "sys_path": list(sys.path) if sys_path is None else sys_path,
            "scratch": scratch,
            # A kernel on the GPU: the spare makes its own CUDA context while it waits (seconds, paid
            # ahead of need), capped as the job will say.
            "cuda": _cuda_initialised(),
            "gpu_fraction": float(opts.get("worker_gpu_fraction") or GPU_FRACTION),
        }  # fmt: skip
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", MPLBACKEND="agg")
        try:
            self.proc = subprocess.Popen(
                [python or sys.executable, "-I", "-c", spawned.BOOTSTRAP],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                pass_fds=(report_w, life_r, theirs.fileno()),
                start_new_session=True,  # an interrupt of the kernel's process group does not reach it
                cwd=self.cwd,
                env=env,
            )
        finally:
            for fd in (report_w, life_r):
                os.close(fd)
            theirs.close()
        self.pid = self.proc.pid
        self.report = report_r
        self.lifeline = life_w
        try:  # the supervisor reads the worker's memory; opened before it leaves our credentials
            self.memory = os.open(f"/proc/{self.pid}/mem", os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            self.memory = -1
        key, sources = payload_sources()
        data = json.dumps({"key": key, "sources": sources, "args": args}).encode()
        stdin = self.proc.stdin
        try:
            if stdin is not None:
                stdin.write(data)
                stdin.close()
        except OSError:
            pass

    def ready(self, timeout: float) -> dict[str, Any] | None:
        """The worker's "warm" report, waiting up to `timeout` seconds; None if it died or is not warm."""
        import select

        deadline = time.monotonic() + timeout
        while self.warm is None:
            left = max(0.0, deadline - time.monotonic())  # 0: look once, without waiting
            readable, _, _ = select.select([self.report], [], [], left)
            if not readable:
                if left <= 0 or self.proc.poll() is not None:
                    return None
                continue
            chunk = os.read(self.report, 65536)
            if not chunk:
                return None
            self.buffer += chunk
            if b"\n" in self.buffer:
                line, self.buffer = self.buffer.split(b"\n", 1)
                with contextlib.suppress(ValueError):
                    self.warm = json.loads(line)
        return self.warm

    def alive(self) -> bool:
        return self.proc.poll() is None

    def top_up(self, modules: list[str]) -> None:
        """Have the waiting worker import the modules the kernel loaded since it started (its control
        socket takes them before the job), so that the job finds them imported."""
        have = set(self.modules)
        new = [name for name in modules if name not in have]
        if not new:
            return
        try:
            self.control.sendall(json.dumps({"warm": new}).encode() + b"\n")
            self.modules = sorted(set(self.modules) | set(new))
        except OSError:
            pass

    def discard(self) -> None:
        """End it and leave nothing: the process, its descriptors, its scratch directory."""
        import shutil
        import signal

        # Only while it is still our unreaped child: once reaped (the watching thread does), its pid
        # may name another process.
        if self.proc.poll() is None:
            with contextlib.suppress(OSError):
                os.killpg(self.pid, signal.SIGKILL)
            with contextlib.suppress(Exception):
                self.proc.wait(timeout=5)
        for fd in (self.report, self.lifeline, self.memory):
            with contextlib.suppress(OSError):
                os.close(fd)
        with contextlib.suppress(OSError):
            self.control.close()
        shutil.rmtree(self.scratch, ignore_errors=True)


def _cuda_initialised() -> bool:
    torch = sys.modules.get("torch")
    try:
        return bool(torch is not None and torch.cuda.is_initialized())
    except Exception:
        return False


def describe() -> dict[str, Any]:
    """The spare as benchmarks and tests see it: warm or not, its pid, start time, resident memory."""
    with _spare_lock:
        spare = _spare
        if spare is None or not spare.alive():
            return {"warm": False}
        warm = spare.ready(0)
    rss_kb = 0
    with contextlib.suppress(OSError, ValueError), open(f"/proc/{spare.pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                rss_kb = int(line.split()[1])
    return {
        "warm": warm is not None,
        "pid": spare.pid,
        "warm_ms": (warm or {}).get("warm_ms"),
        "rss_mb": round(rss_kb / 1024, 1),
        "modules": spare.modules,
    }


def payload_sources() -> tuple[str, list[tuple[str, str, str]]]:
    """The payload's name for the worker and its sources: those the kernel received (envelope.py keeps
    them), or the files of the source tree where the payload was imported as a package (tests)."""
    package = __name__.rsplit(".", 2)[0]
    envelope = sys.modules.get(package + ".envelope")
    kept = getattr(envelope, "kept_sources", None)
    if kept:
        return package, list(kept)
    root = sys.modules[package]
    folder = os.path.dirname(os.path.abspath(root.__file__ or ""))
    sources = []
    for name in root.MANIFEST:
        with open(os.path.join(folder, f"{name}.py"), encoding="utf-8") as fh:
            sources.append((name, f"crane_jupyterlab/kernel/{name}.py", fh.read()))
    prefix = getattr(envelope, "PREFIX", "_crane_jupyterlab_probe_")
    return prefix + "worker", sources


def warm_up(opts: dict[str, Any], scratch: Any) -> None:
    """Start a spare in the background unless a live one for this working directory is there; a live
    one imports what the kernel has loaded since it started."""
    import _thread

    with _spare_lock:
        spare = _spare
        if spare is not None and spare.alive() and spare.cwd == os.getcwd():
            # off the kernel's thread: listing what it loaded takes ~20 ms with torch and TensorFlow
            _thread.start_new_thread(_top_up, (spare,))
            return
    _thread.start_new_thread(_replace, (opts, scratch))


def _top_up(spare: Spare) -> None:
    with contextlib.suppress(Exception):
        modules = state.loaded_modules()
        with _spare_lock:  # still the spare: no job was sent on its socket (`_take` removes it first)
            if _spare is spare:
                spare.top_up(modules)


def _replace(opts: dict[str, Any], scratch: Any) -> None:
    global _spare
    with contextlib.suppress(Exception):
        fresh = Spare(opts, scratch())
        with _spare_lock:
            old, _spare = _spare, fresh
        if old is not None:
            old.discard()


def discard_spare() -> None:
    """End the spare, if any (a kernel that no longer needs one; tests)."""
    global _spare
    with _spare_lock:
        spare, _spare = _spare, None
    if spare is not None:
        spare.discard()


def _take(opts: dict[str, Any], scratch: Any) -> tuple[Spare, str]:
    """The spare if one is alive for this directory (it was warm or is warming), else a new one."""
    global _spare
    with _spare_lock:
        spare, _spare = _spare, None
    if spare is not None and spare.alive() and spare.cwd == os.getcwd():
        return spare, "warm" if spare.warm is not None or spare.ready(0) else "warming"
    if spare is not None:
        spare.discard()
    return Spare(opts, scratch()), "cold"


# -- one trial through the worker ---------------------------------------------------------------------


def graphs_stopped(forked: Trial) -> bool:
    """The forked child could not run the cell because TensorFlow's pools are not in it: it reached a
    graph function, or waited forever on one of their locks."""
    outcome = forked.outcome or {}
    if outcome.get("status") != "unavailable":
        return False
    if outcome.get("signal") in FORK_DEATHS and forked.tensorflow:
        # TensorFlow's runtime aborts in a fork of a process whose threads it started (a lock held by a
        # thread the fork lacks): named, and the worker, with a runtime of its own, takes the cell.
        outcome["reason"] = (
            f"the trial process died of {outcome['signal']} in the fork: TensorFlow's runtime, whose "
            "threads a fork of the kernel does not have"
        )
        return True
    return outcome.get("reason") == tfwork.REASON or (forked.stopped == "deadlock" and forked.tensorflow)


FORK_DEATHS = ("SIGABRT", "SIGSEGV", "SIGBUS")


def _fork_instead(outcome: dict[str, Any]) -> dict[str, Any]:
    """The outcome of the packing fork that ran the cell itself, its inputs being beyond a worker: what it
    observed on the kernel's own objects stands; where TensorFlow stopped it, the reason says why no
    worker took over."""
    outcome = dict(outcome)
    uncopied = outcome.pop("uncopied", None) or "its inputs were not packed"
    if outcome.get("status") == "unavailable":
        outcome["reason"] = f"{outcome.get('reason')}; a worker could not take over: {uncopied}"
    return outcome


class WorkerTrial:
    """What `control` keeps for a trial that runs in a worker: the packing fork, then the worker, each
    watched by this object's thread; one token and one outcome for both."""

    def __init__(self, opts: dict[str, Any], scratch: Any, reason: str) -> None:
        self.opts = opts
        self.scratch = scratch  # makes a new scratch directory
        self.reason = reason
        self.token = os.urandom(6).hex()
        self.outcome: dict[str, Any] | None = None
        self.current: Trial | None = None
        self.stopped: str | None = None
        self.forked = 0.0
        self.blocked_ms = 0.0
        self.fork_ms = 0.0
        self.fork_cpu_ms = 0.0
        self.pid = 0
        self.setup_s = PACK_S + SETUP_S
        self.pack = -1
        self.cuda = False
        self.fork_first = False
        self.packing: Any = None
        self.source = ""
        self.environment: dict[str, Any] = {}
        self.fork_outcome: dict[str, Any] | None = None  # a fork this worker took the cell over from

    def start(
        self, source: str, ns: dict[str, Any], shell: Any, cuda: bool = False, fork_first: bool = False
    ) -> None:
        """On the kernel's thread: fork the packer (the only time the kernel waits), then let a thread
        of the kernel do the rest. With `cuda` (a fork could not read the GPU) the inputs are packed on
        that thread instead, without running any code of the notebook (transfer.pack's `guarded`).
        With `fork_first` the forked child packs the inputs and then runs the cell itself: its outcome
        stands unless TensorFlow stopped it, and only then does the worker run the cell on the pack."""
        import _thread

        self.pack = os.memfd_create("crane-trial-inputs", os.MFD_CLOEXEC)
        self.cuda = cuda
        self.fork_first = fork_first
        # The names the kernel has: a NameError in the worker for one of them is the copy's, not the cell's.
        self.kernel_names = [name for name in list(ns) if isinstance(name, str)]
        if cuda:
            self.packing = (runnable(source, shell), ns, shell)
            self.forked = time.monotonic()
        else:
            budget = float(self.opts["budget_s"])
            # the cell's first imports, made before its budget starts where this fork runs it (child.py)
            imports = execute.new_imports(runnable(source, shell)) if fork_first else []
            packer = Trial(
                {
                    **self.opts,
                    "budget_s": budget if fork_first else budget + PACK_S,
                    "first_imports": imports,
                },
                self.scratch(),
            )
            if fork_first:
                packer.setup_s += PACK_S  # the pack is written before the cell's budget starts
                if imports:
                    packer.setup_s += execute.IMPORT_ALLOWANCE_S
                    self.setup_s += execute.IMPORT_ALLOWANCE_S
                self.setup_s += budget
            fork.fork(packer, source, ns, shell, pack=self.pack, then_run=fork_first)
            self.current = packer
            self.forked, self.pid = packer.forked, packer.pid
            self.fork_ms, self.fork_cpu_ms = packer.fork_ms, packer.fork_cpu_ms
        # What the worker takes from the kernel's process besides the pack (getters only; the modules
        # beside the notebook that the cell imports are looked for on the relay's thread).
        self.environment = {"cwd": os.getcwd(), "sys_path": list(sys.path), "environ": dict(os.environ)}
        self.source = source
        _thread.start_new_thread(self._run, ())

    def stop(self, why: str) -> None:
        if self.outcome is None and self.stopped is None:
            self.stopped = why
            current = self.current
            if current is not None:
                current.stop(why)

    def _run(self) -> None:
        try:
            try:
                outcome = self._through_worker()
            except Exception as exc:  # the thread always leaves an outcome
                outcome = unavailable(f"the trial worker failed: {type(exc).__name__}: {exc}")
            if self.fork_outcome is not None and outcome.get("status") == "unavailable":
                # taken over from a fork that TensorFlow stopped: its reason first, then the worker's
                why = f"a worker could not take over: {outcome.get('reason')}"
                outcome = {**self.fork_outcome, "reason": f"{self.fork_outcome.get('reason')}; {why}"}
            self.outcome = outcome
        finally:
            with contextlib.suppress(OSError):
                os.close(self.pack)
            warm_up(self.opts, self.scratch)  # the next trial finds a spare

    def _packed_here(self) -> dict[str, Any]:
        """The inputs packed on this thread of the kernel (CUDA in use)."""
        code_text, ns, shell = self.packing
        limit = float(self.opts.get("worker_max_mb") or transfer.DEFAULT_LIMIT_MB)
        try:
            return {"status": "packed", **transfer.pack(self.pack, code_text, ns, limit, shell, guarded=True)}
        except transfer.Uncopyable as exc:
            return unavailable(str(exc))
        finally:
            self.packing = None

    def _through_worker(self) -> dict[str, Any]:
        t0 = time.monotonic()
        if self.cuda:
            packed = self._packed_here()
        else:
            packer = self.current
            assert packer is not None
            packer.watch()
            packed = packer.outcome or {}
            if "uncopied" in packed:  # no worker could take the inputs, so the packing fork ran the cell
                return _fork_instead(packed)
            if self.fork_first:
                if not graphs_stopped(packer):
                    return packed  # the fork concluded (or failed for a reason a worker shares)
                fork_outcome = packed
                packed = packer.ready.get("packed") or unavailable("the inputs were not packed")
                if packed.get("status") != "packed":  # the fork's "unavailable" stands: say why it stays
                    why = packed.get("reason") or "its inputs were not packed"
                    return {
                        **fork_outcome,
                        "reason": f"{fork_outcome.get('reason')}; a worker could not take over: {why}",
                    }
        pack_ms = ms(time.monotonic() - t0)
        if self.stopped is not None:
            return unavailable(self.stopped)
        if packed.get("status") != "packed":
            why = packed.get("reason") or packed.get("message") or packed.get("status")
            if packed.get("status") == "crashed":
                why = f"{packed.get('exception')}: {packed.get('message')}"
            return unavailable(f"the cell's inputs could not be copied to a worker: {why}")
        self.environment["local_modules"] = state.local_modules(python_source(self.source))
        t1 = time.monotonic()
        spare, temperature = _take(self.opts, self.scratch)
        warm = spare.ready(SETUP_S)
        if warm is None:
            spare.discard()
            return unavailable("the trial worker did not start (its interpreter failed to warm up)")
        trial = Trial(self.opts, spare.scratch)
        trial.setup_s = SETUP_S
        trial.pid, trial.reader, trial.control = spare.pid, spare.report, spare.control
        trial.memory = spare.memory
        trial.detect_deadlock = False
        trial.warm_kb = int(warm.get("warm_kb") or 0)
        spare.memory = spare.report = -1  # the watching thread closes them now
        job = {
            "source": self.source,
            "opts": self.opts,
            "scratch": spare.scratch,
            "package": packed.get("package"),
            "cuda": self.cuda,
            "modules": state.loaded_modules(),
            "gpu_fraction": float(self.opts.get("worker_gpu_fraction") or GPU_FRACTION),
            "kernel_names": self.kernel_names,
            **self.environment,
        }
        import socket

        socket.send_fds(spare.control, [json.dumps(job).encode() + b"\n"], [self.pack])
        trial.forked = time.monotonic()
        self.current = trial
        if self.stopped is not None:
            trial.stop(self.stopped)
        trial.watch()
        spare.discard()  # the watching thread closed its pipes already; closing twice is harmless
        outcome = dict(trial.outcome or unavailable("the worker left no outcome"))
        outcome["worker"] = {
            "spare": temperature,
            "warm_ms": warm.get("warm_ms"),
            "pack_ms": pack_ms,
            "handover_ms": ms(trial.forked - t1),
            "rebuild_ms": (trial.ready or {}).get("rebuild_ms"),
            # modules the spare had not imported before the job (imported then, before the rebuild)
            "late_imports": (trial.ready or {}).get("late_imports"),
            "rebuild_phases_ms": (trial.ready or {}).get("phases_ms"),
            "import_failed": warm.get("import_failed") or None,  # what the spare could not import
            "inputs_mb": round(float(packed.get("inputs_bytes") or 0) / (1 << 20), 2),
            "names": len(packed.get("names") or []),
            "reason": self.reason,
        }
        return outcome
