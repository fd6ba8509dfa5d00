"""The replica process: rebuild the cell's inputs from specs, run the cell on them, say how it ended.

Run as `python -m crane_jupyterlab.checks.replica.runner`. It imports the libraries replicas are made of,
says `{"phase": "warm"}` on stdout, then answers JSON requests on stdin
(`{"cell", "definitions", "specs", "variants", "budget_s", "memory_mb"}`, or `{"batch": [request, ...]}`)
with one JSON line each:
`{"variants": [{"status": "ok"|"raised"|"aborted", "exception", "message", "line", "why"}], "sandbox"}`.

Every variant runs in a process forked from this one and confined by the trial's own sandbox, entered
exactly as a trial's fork enters it (`kernel/trial/child.enter_sandbox`: user, network and mount
namespaces, the private copy of writes, Landlock, seccomp whose notifications this process answers as the
kernel does for a trial (`kernel/trial/watch.Trial`), no capabilities, the audit hooks); where that
sandbox cannot be entered the variant runs nothing. Each variant gets a fresh namespace: the executed
cells' imports and definitions, then one value per spec, filled from the recorded facts and, where the
facts leave something open, differently per variant. A name we cannot rebuild is bound to a placeholder
whose every use aborts the variant. All variants run at once, within one wall-clock budget; a variant that
outlasts it, needs more memory, or meets a refusal of the sandbox says nothing.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
import time
import traceback
from typing import Any

from ...kernel.trial import child
from ...kernel.trial.sandbox import confine
from ...kernel.trial.watch import Trial
from .build import build

CELL_FILE = "<crane-replica-cell>"
# Builtins IPython rebinds in the user namespace with a wrapper of its own that behaves the same here.
_IPYTHON_BUILTINS = frozenset({"open"})


class Abort(BaseException):
    """The replica cannot say: a value we could not rebuild was used."""


_touched: list[str] = []


def _abort(why: str) -> Abort:
    _touched.append(why)
    return Abort(why)


class Unknown:
    """A value the facts do not rebuild: any use aborts the judgement (never a crash of the cell)."""

    def __init__(self, name: str, why: str) -> None:
        object.__setattr__(self, "_crane_name", name)
        object.__setattr__(self, "_crane_why", why)

    def _stop(self, *args: Any, **kwargs: Any) -> Any:
        raise _abort(
            f"{object.__getattribute__(self, '_crane_name')}: {object.__getattribute__(self, '_crane_why')}"
        )

    def __getattribute__(self, name: str) -> Any:
        if name in ("_stop", "__class__"):
            return object.__getattribute__(self, name)
        return object.__getattribute__(self, "_stop")()


_DUNDERS = (
    "__call__ __getitem__ __setitem__ __delitem__ __iter__ __len__ __bool__ __contains__ __add__ __radd__ "
    "__sub__ __rsub__ __mul__ __rmul__ __truediv__ __rtruediv__ __floordiv__ __rfloordiv__ __mod__ "
    "__rmod__ __pow__ __rpow__ __matmul__ __rmatmul__ __neg__ __pos__ __abs__ __eq__ __ne__ __lt__ "
    "__le__ __gt__ __ge__ __hash__ __int__ __float__ __index__ __str__ __repr__ __format__ __setattr__ "
    "__delattr__ __enter__ __exit__ __array__ __array_ufunc__ __array_function__ __fspath__ __round__ "
    "__and__ __or__ __xor__ __invert__ __rand__ __ror__"
)
for _dunder in _DUNDERS.split():
    setattr(Unknown, _dunder, Unknown._stop)


# ---- one variant (in its sandboxed child) --------------------------------------------------------


def run_variant(request: dict[str, Any], variant: int, guard: Any) -> dict[str, Any]:
    """Rebuild the inputs and run the cell; the sandbox (`guard` and the OS layers) already holds."""
    import random

    try:
        import numpy as np

        rng: Any = np.random.default_rng(1000 + variant)
    except ImportError:
        rng = random.Random(1000 + variant)
    ns: dict[str, Any] = {"__name__": "__main__", "__builtins__": __builtins__}
    for source in request.get("definitions") or []:
        try:
            exec(compile(source, "<crane-replica-definition>", "exec"), ns)
        except BaseException:
            continue
    built: dict[str, str] = {}
    for name, spec in (request.get("specs") or {}).items():
        if spec["kind"] == "defined":
            # IPython's `open` (a guard for fds 0-2 around the builtin) is the kernel's, not the notebook's.
            if name not in ns and name not in _IPYTHON_BUILTINS:
                ns[name] = Unknown(name, "its definition was not replayed")
            continue
        if spec["kind"] == "unknown":
            ns[name] = Unknown(name, spec.get("why") or "not rebuilt")
            continue
        try:
            ns[name] = build(spec, rng, variant)
            built[name] = spec["kind"]
        except BaseException as exc:
            ns[name] = Unknown(name, f"could not be rebuilt ({type(exc).__name__}: {exc})"[:200])
    if guard.refusals:  # the definitions or the builders met the sandbox: the replicas are not the facts
        return {"status": "aborted", "why": f"the sandbox refused to {guard.refusals[0]} while rebuilding"}
    del _touched[:]
    code = compile(request["cell"], CELL_FILE, "exec")
    try:
        exec(code, ns)
        status: dict[str, Any] = {"status": "ok"}
    except Abort as exc:
        status = {"status": "aborted", "why": str(exc)}
    except BaseException as exc:
        line = None
        for frame, lineno in traceback.walk_tb(exc.__traceback__):
            if frame.f_code.co_filename == CELL_FILE:
                line = lineno
        cls = type(exc)
        # The exception and every one it was raised from or during: a formula's NameError wrapped in
        # the library's own error is still a name we did not rebuild.
        chain, seen = [], set()
        link: BaseException | None = exc
        while link is not None and id(link) not in seen:
            seen.add(id(link))
            chain += [c.__name__ for c in type(link).__mro__]
            link = link.__cause__ or link.__context__
        status = {
            "status": "raised",
            "exception": cls.__name__,
            "module": cls.__module__,
            "bases": chain,
            "message": (str(exc).strip().splitlines() or [""])[0][:300],
            "line": line,
        }
    if _touched and status["status"] != "aborted":
        status = {"status": "aborted", "why": _touched[0]}
    status["built"] = built
    return status


def _send(fd: int, message: dict[str, Any]) -> None:
    data = (json.dumps(message, default=str) + "\n").encode()
    while data:
        data = data[os.write(fd, data) :]


# What a variant says, as a trial's child says it: the watching side (watch.Trial) then turns a crash or
# an end after a refusal into "blocked", as for any trial.
_AS_TRIAL = {"raised": "crashed", "ok": "finished"}


def _variant_main(
    request: dict[str, Any],
    variant: int,
    opts: dict[str, Any],
    scratch: str,
    writer: int,
    control: Any,
    parent: int,
) -> None:  # pragma: no cover - runs in the forked child, which ends with os._exit
    code = 70
    try:
        os.setpgid(0, 0)
        if sys.platform.startswith("linux"):
            confine.set_pdeathsig()
        if os.getppid() != parent:
            os._exit(0)
        report = child.enter_sandbox(None, opts, scratch, writer, control, None)
        guard = report.pop("guard")
        _send(writer, {"phase": "ready", **report})
        answer = run_variant(request, variant, guard)
        status = answer.pop("status")
        done = {**answer, "status": _AS_TRIAL.get(status, "unavailable"), "replica": status}
        if status == "aborted":
            done["reason"] = answer.get("why") or "aborted"
        done["refusals"] = guard.refusals
        _send(writer, {"phase": "done", **done})
        code = 0
    except BaseException as exc:
        with contextlib.suppress(BaseException):
            reason = exc.args[0] if isinstance(exc, child.NoSandbox) else f"{type(exc).__name__}: {exc}"
            _send(writer, {"phase": "done", "status": "unavailable", "reason": str(reason)[:500]})
    finally:
        os._exit(code)


# ---- this process's side -------------------------------------------------------------------------

# Seconds a variant may take to enter the sandbox, before its share of the budget starts.
SETUP_S = 1.0
DEFAULT_BUDGET_S = 2.0
DEFAULT_MEMORY_MB = 1024


def _fork(request: dict[str, Any], variant: int, opts: dict[str, Any]) -> Trial:
    """A variant's process, watched as a trial's fork is (`kernel/trial/fork.py`)."""
    import socket
    import tempfile

    trial = Trial(opts, os.path.realpath(tempfile.mkdtemp(prefix="crane-replica-v")))
    trial.setup_s = SETUP_S
    trial.detect_deadlock = False  # a replica's libraries start their pools in the child itself
    reader, writer = os.pipe()
    ours, theirs = socket.socketpair()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(reader)
        ours.close()
        _variant_main(request, variant, opts, trial.scratch, writer, theirs, parent)
    trial.pid = pid
    trial.forked = time.monotonic()
    try:  # opened while the child still has our credentials (the supervisor reads its memory)
        trial.memory = os.open(f"/proc/{pid}/mem", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        trial.memory = -1
    os.close(writer)
    theirs.close()
    trial.reader = reader
    trial.control = ours
    return trial


def _as_variant(outcome: dict[str, Any]) -> dict[str, Any]:
    """A variant's outcome in the judge's words: raised, ok, or aborted with the reason."""
    status = outcome.get("status")
    replica = outcome.get("replica")
    keep = {k: v for k, v in outcome.items() if k not in ("status", "replica", "reason", "refusals")}
    if status == "crashed" and replica == "raised":
        return {**keep, "status": "raised"}
    if status == "finished" and replica == "ok":
        return {**keep, "status": "ok"}
    why = outcome.get("reason") or status
    if status == "timed_out":
        why = "ran out of time"
    return {"status": "aborted", "why": str(why), "outcome": status, "built": outcome.get("built") or {}}


def judge(request: dict[str, Any]) -> dict[str, Any]:
    """Every variant of one request, run at once, each in its own sandboxed child."""
    budget = float(request.get("budget_s") or DEFAULT_BUDGET_S)
    opts = {
        "budget_s": budget,
        "memory_mb": int(request.get("memory_mb") or DEFAULT_MEMORY_MB),
        "private_writes": True,
        "hooks_only": False,  # no OS sandbox, no replica: audit hooks alone do not see native code
        "nice": 5,
    }
    # Every child is forked before any watcher receives a child's seccomp listener, so no child inherits
    # another's (and each neutralises the other's pipes: kernel/trial/sandbox/inherited.py).
    trials = [_fork(request, v, opts) for v in range(int(request.get("variants") or 2))]
    threads = [threading.Thread(target=t.watch, daemon=True) for t in trials]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    variants = [_as_variant(t.outcome or {"status": "unavailable", "reason": "no outcome"}) for t in trials]
    sandbox = next((t.outcome.get("sandbox") for t in trials if t.outcome and t.outcome.get("sandbox")), None)
    return {"variants": variants, "sandbox": sandbox}


# Libraries this process keeps imported (TensorFlow is not: it deadlocks in a fork).
_WARM = ("numpy", "pandas", "sklearn", "scipy", "torch", "matplotlib", "statsmodels")


def _warm_all() -> list[str]:
    """The libraries replicas are made of, imported once, before any request: each fork finds them."""
    import importlib.util

    warm = []
    for name in _WARM:
        with contextlib.suppress(BaseException):
            if importlib.util.find_spec(name) is not None:
                __import__(name)
                warm.append(name)
    with contextlib.suppress(BaseException):
        if "matplotlib" in sys.modules:
            __import__("matplotlib.pyplot")
    return warm


# Libraries no fork may start with (their runtime's threads and locks do not survive one): a replica's
# child would import them itself, and TensorFlow's import alone (3 to 4 s on a 2-core machine) outlasts
# a replica's 2 s budget.
_UNFORKABLE = ("tensorflow", "keras", "tf_keras")


def _imported(request: dict[str, Any]) -> set[str]:
    """The modules the request's definitions import and its specs live in."""
    import ast

    modules = set()
    for spec in (request.get("specs") or {}).values():
        path = spec.get("module") or spec.get("path") or ""
        modules.add(path if spec["kind"] == "module" else path.rpartition(".")[0])
    for source in request.get("definitions") or []:
        try:
            node = ast.parse(source).body[0]
        except (SyntaxError, IndexError, ValueError):
            continue
        if isinstance(node, ast.Import):
            modules |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            modules.add(node.module)
    return {m for m in modules if m}


def _unforkable(request: dict[str, Any]) -> str | None:
    """The library of `_UNFORKABLE` the request's definitions import, unless this process has it."""
    roots = {m.split(".", 1)[0] for m in _imported(request)}
    return next((r for r in _UNFORKABLE if r in roots and r not in sys.modules), None)


def _warm(request: dict[str, Any]) -> None:
    """Import the submodules the definitions name, of the libraries kept warm, before forking."""
    for module in sorted(m for m in _imported(request) if m.split(".", 1)[0] in _WARM):
        with contextlib.suppress(BaseException):  # the child will say what failed
            __import__(module)


def main() -> int:
    """Serve requests, one JSON line each, until stdin closes (the libraries stay imported)."""
    out = sys.stdout
    sys.stdout = sys.stderr  # nothing but answers on the answer channel
    os.environ.setdefault("MPLBACKEND", "Agg")
    # Nothing of a variant lands here: each writes in its own scratch directory and private copies.
    os.chdir(os.path.realpath(__import__("tempfile").gettempdir()))
    warm = _warm_all()
    out.write(json.dumps({"phase": "warm", "libraries": warm}) + "\n")
    out.flush()
    for line in sys.stdin:
        try:
            request = json.loads(line)
        except ValueError:
            continue
        for one in request.get("batch", [request]):
            try:
                unwarmed = _unforkable(one)
                if unwarmed:  # answered at once: the variants would wait out the budget importing it
                    answer = {
                        "variants": [],
                        "error": f"the definitions import {unwarmed}, which a replica "
                        "imports only after its fork (it is not fork-safe), longer than its budget",
                    }
                    out.write(json.dumps(answer) + "\n")
                    out.flush()
                    continue
                _warm(one)
                answer = judge(one)
            except Exception as exc:
                answer = {"variants": [], "error": f"the replica process failed: {type(exc).__name__}: {exc}"}
            out.write(json.dumps(answer, default=str) + "\n")
            out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
