"""The replica process: rebuild the cell's inputs from specs, run the cell on them, say how it ended.

Run as `python -m crane_jupyterlab.checks.replica.runner`, a JSON request on stdin
(`{"cell", "definitions", "specs", "variants", "timeout"}`, or `{"batch": [request, ...]}`),
one JSON line per request on stdout:
`{"variants": [{"status": "ok"|"raised"|"aborted", "exception", "message", "line", "why"}]}`.

Each variant gets a fresh namespace: the executed cells' imports and definitions, then one value per spec,
filled from the recorded facts and, where the facts leave something open, differently per variant. A name
we cannot rebuild is bound to a placeholder whose every use aborts the variant. The cell runs under the
trial's audit hooks (no files written outside a scratch directory, no processes, no network).
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import sys
import tempfile
import time
import traceback
from typing import Any

from .build import build

CELL_FILE = "<crane-replica-cell>"


class Abort(BaseException):
    """The replica cannot say: a placeholder was used, or the variant ran out of time."""


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


# ---- running --------------------------------------------------------------------------------------


def _timeout(signum: int, frame: Any) -> None:
    raise _abort("ran out of time")


def run_variant(request: dict[str, Any], variant: int, guard: Any) -> dict[str, Any]:
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
            if name not in ns:
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
    del _touched[:]
    code = compile(request["cell"], CELL_FILE, "exec")
    signal.signal(signal.SIGALRM, _timeout)
    signal.setitimer(signal.ITIMER_REAL, float(request.get("timeout") or 10))
    refused = len(guard.refusals)
    try:
        guard.active = True
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
    finally:
        guard.active = False
        signal.setitimer(signal.ITIMER_REAL, 0)
    if len(guard.refusals) > refused and status["status"] != "aborted":
        status = {"status": "aborted", "why": f"the sandbox refused {guard.refusals[refused]}"}
    if _touched and status["status"] != "aborted":
        status = {"status": "aborted", "why": _touched[0]}
    status["built"] = built
    try:
        if "matplotlib.pyplot" in sys.modules:
            sys.modules["matplotlib.pyplot"].close("all")
    except Exception:
        pass
    return status


# Libraries the server keeps imported between requests (TensorFlow is not: it deadlocks in a fork).
_WARM = ("numpy", "pandas", "sklearn", "scipy", "torch", "matplotlib")


def _warm(request: dict[str, Any]) -> None:
    """Import in the server what the variants will import, so each fork finds it loaded."""
    import ast

    modules = set()
    for spec in (request.get("specs") or {}).values():
        path = spec.get("module") or spec.get("path") or ""
        modules.add(path if spec["kind"] == "module" else path.rpartition(".")[0])
        modules |= {"frame": {"pandas"}, "series": {"pandas"}, "ndarray": {"numpy"}, "tensor": {"torch"}}.get(
            spec["kind"], set()
        )
    for source in request.get("definitions") or []:
        try:
            node = ast.parse(source).body[0]
        except (SyntaxError, IndexError, ValueError):
            continue
        if isinstance(node, ast.Import):
            modules |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            modules.add(node.module)
    for module in sorted(m for m in modules if m and m.split(".", 1)[0] in _WARM):
        with contextlib.suppress(BaseException):  # the child will say what failed
            __import__(module)


def _in_child(request: dict[str, Any], variant: int, guard: Any, limit: float) -> dict[str, Any]:
    """One variant in a forked child, so no variant sees what another's cell changed."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(read)
        try:
            answer = run_variant(request, variant, guard)
        except BaseException as exc:
            answer = {"status": "aborted", "why": f"the runner failed: {exc!r:.200}"}
        data = json.dumps(answer, default=str).encode()
        while data:
            data = data[os.write(write, data) :]
        os._exit(0)
    os.close(write)
    chunks = []
    deadline = time.monotonic() + limit
    while True:
        left = deadline - time.monotonic()
        ready, _, _ = select.select([read], [], [], max(left, 0))
        if not ready:
            os.kill(pid, signal.SIGKILL)
            break
        chunk = os.read(read, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(read)
    os.waitpid(pid, 0)
    try:
        reply: dict[str, Any] = json.loads(b"".join(chunks).decode())
        return reply
    except ValueError:
        return {"status": "aborted", "why": "the variant's process ended without an answer"}


def main() -> int:
    """Serve requests, one JSON line each, until stdin closes (the libraries stay imported)."""
    out = sys.stdout
    sys.stdout = sys.stderr  # the cell's prints must not mix with the answers
    scratch = tempfile.mkdtemp(prefix="crane-replica-")
    os.chdir(scratch)
    os.environ.setdefault("MPLBACKEND", "Agg")
    try:
        from ...kernel.trial.sandbox.hooks import Guard

        guard: Any = Guard(scratch, os_layer=False)
        sys.addaudithook(guard)
    except Exception:
        guard = None
    for line in sys.stdin:
        try:
            request = json.loads(line)
        except ValueError:
            continue
        requests = request.get("batch", [request])
        for one in requests:
            if guard is None:
                answer: dict[str, Any] = {"variants": [], "error": "the audit hooks could not be installed"}
            else:
                _warm(one)
                limit = float(one.get("timeout") or 10) + 20
                answer = {
                    "variants": [
                        _in_child(one, v, guard, limit) for v in range(int(one.get("variants") or 2))
                    ]
                }
            out.write(json.dumps(answer, default=str) + "\n")
            out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
