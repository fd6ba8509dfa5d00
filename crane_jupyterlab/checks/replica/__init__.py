"""Let the libraries judge: run the cell on replicas rebuilt from the runtime facts, in another process.

The rules list crash classes by hand; the long tail (an attribute the class lacks, an argument a
function refuses, an array of a rank a library function rejects, a metric given the wrong kind of
values...) is raised by the libraries themselves from the objects' types, shapes and values, which the
facts already hold. `judge` rebuilds each value the cell reads from its facts (`spec.py`: frames with the
recorded columns, dtypes and values, arrays and tensors of the recorded shapes and dtypes, estimators of
the recorded class in the recorded state), replays the executed cells' imports and definitions, and runs
the cell on them under the trial's audit hooks (`runner.py`), never on the user's objects.

A crash is claimed only when it is the cell's own and every variant raises it the same way: each variant
fills what the facts leave open (unsampled values, the index, NaN on a sampled column, text beyond the
examples) differently, so a crash they share was decided by what the facts hold. A variant that touches a
value we could not rebuild, runs out of time, is refused by the sandbox, or raises an error of the
machine (a missing file, a module, a name) says nothing.
"""

from __future__ import annotations

import ast
import atexit
import json
import os
import re
import select
import subprocess
import sys
import threading
from importlib import metadata
from typing import Any

from ...kernel.cell import python_source
from ...models import Finding
from ..view import RuntimeView
from .spec import definitions, specs

RULE = "replica"
VARIANTS = 2
# Errors of the machine or of what we could not rebuild, not of the cell on these facts.
_NOT_CLAIMED = frozenset(
    {"OSError", "NameError", "ImportError", "MemoryError", "RecursionError", "AssertionError",
     "StopIteration", "Warning", "TimeoutError", "KeyboardInterrupt", "SystemExit", "Abort"}
)  # fmt: skip


_DISTRIBUTIONS = {
    "sklearn": "scikit-learn",
    "PIL": "pillow",
    "cv2": "opencv-python",
    "skimage": "scikit-image",
}


def other_environment(view: RuntimeView) -> str | None:
    """Why this process cannot stand in for the kernel's libraries (None: it can).

    The replicas run in this process's interpreter: a claim holds only when it has the kernel's Python
    and the kernel's version of every library the cell uses."""
    ours = ".".join(str(v) for v in sys.version_info[:2])
    kernel = ".".join((view.python or "").split(".")[:2])
    if kernel != ours:
        return f"the kernel runs Python {kernel or '(unknown)'}, the server {ours}"
    for module in view.modules.values():
        root = module.module.split(".", 1)[0]
        if module.version is None or root in sys.stdlib_module_names:
            continue
        try:
            installed = metadata.version(_DISTRIBUTIONS.get(root, root))
        except metadata.PackageNotFoundError:
            return f"{root} is not installed beside the server"
        if installed != module.version:
            return f"the kernel has {root} {module.version}, the server {installed}"
    return None


def _reads(tree: ast.Module) -> set[str]:
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def request_for(source: str, view: RuntimeView, executed_cells: list[str] | None) -> dict[str, Any] | None:
    """The runner's request, or None when there is nothing the replicas could decide."""
    cell = python_source(source)
    try:
        tree = ast.parse(cell)
    except (SyntaxError, ValueError, RecursionError):
        return None
    read = _reads(tree)
    all_specs = specs(view)
    rebuilt = [n for n in read if n in all_specs and all_specs[n]["kind"] not in ("unknown", "module")]
    if not rebuilt:
        return None  # the cell reads nothing we rebuild: it would only run library calls on literals
    return {
        "cell": cell,
        "definitions": definitions(list(executed_cells or [])),
        "specs": all_specs,
        "variants": VARIANTS,
        "timeout": 10,
    }


class Server:
    """One warm replica process (`runner.py`): the libraries stay imported, each variant runs in a fork
    of it. Requests are answered one at a time; a process that dies or overruns is replaced."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen[str] | None = None
        self._lock = threading.Lock()

    def _start(self) -> subprocess.Popen[str]:
        if self._proc is None or self._proc.poll() is not None:
            env = dict(os.environ, MPLBACKEND="Agg", PYTHONUNBUFFERED="1")
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "crane_jupyterlab.checks.replica.runner"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                env=env,
                start_new_session=True,
            )
        return self._proc

    def ask(self, request: dict[str, Any], timeout: float) -> dict[str, Any]:
        with self._lock:
            try:
                proc = self._start()
                assert proc.stdin is not None and proc.stdout is not None
                proc.stdin.write(json.dumps(request, default=str) + "\n")
                proc.stdin.flush()
                ready, _, _ = select.select([proc.stdout], [], [], timeout)
                line = proc.stdout.readline() if ready else ""
            except (OSError, ValueError) as exc:
                self.close()
                return {"error": f"the replica process failed: {exc}"}
            if not line:
                self.close()
                return {"error": f"no answer from the replica process within {timeout:g} s"}
            try:
                answer = json.loads(line)
            except ValueError:
                self.close()
                return {"error": "the replica process answered something unreadable"}
            return answer if isinstance(answer, dict) else {"error": "unreadable answer"}

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()


_server = Server()
atexit.register(_server.close)


def run(request: dict[str, Any], timeout: float = 60.0) -> dict[str, Any]:
    """The runner's answer ({"variants": [...]}); {"error": ...} when it could not answer."""
    return _server.ask(request, timeout)


_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")


def _masked(message: str) -> str:
    return _QUOTED.sub("'…'", message)


def agreed(answer: dict[str, Any]) -> dict[str, Any] | None:
    """The crash every variant raised the same way, if it is one we may claim.

    The same way: the same exception class at the same line of the cell, with the same message but for
    quoted values (which value of a text column fails first is the replica's order, not the user's); the
    message then shows them as '…'."""
    variants = answer.get("variants") or []
    if len(variants) < VARIANTS or any(v.get("status") != "raised" for v in variants):
        return None
    first = dict(variants[0])
    if any((v["exception"], v["module"], _masked(v["message"]), v["line"]) !=
           (first["exception"], first["module"], _masked(first["message"]), first["line"])
           for v in variants):  # fmt: skip
        return None
    if any(v["message"] != first["message"] for v in variants):
        first["message"] = _masked(first["message"])
    if first["line"] is None or _NOT_CLAIMED & set(first.get("bases") or []):
        return None
    if "NameError" in first["message"] or "is not defined" in first["message"]:
        return None  # a library that evaluates text (a formula, a query) met a name we did not rebuild
    return first


def judge(
    source: str, view: RuntimeView, executed_cells: list[str] | None = None, timeout: float = 60.0
) -> list[Finding]:
    """The crash the libraries raise on every replica of the cell's inputs ([] when they do not agree)."""
    request = request_for(source, view, executed_cells)
    if request is None:
        return []
    return finding(request, view, run(request, timeout))


def finding(request: dict[str, Any], view: RuntimeView, answer: dict[str, Any]) -> list[Finding]:
    """The finding the runner's answer to `request` proves ([] when it proves none)."""
    crash = agreed(answer)
    if crash is None:
        return []
    line = crash["line"]
    cell_lines = request["cell"].splitlines()
    text = cell_lines[line - 1].strip() if 0 < line <= len(cell_lines) else ""
    try:
        used = _reads(ast.parse(text)) if text else set()
    except SyntaxError:
        used = set()
    evidence = [fact for name in sorted(used) if (info := view.get(name)) for fact in info.facts[:4]]
    evidence.append(
        f"line {line} raised {crash['exception']} on {VARIANTS} replicas rebuilt from these facts, which "
        "differ in everything the facts leave open"
    )
    message = f"{crash['exception']}: {crash['message']}" if crash["message"] else crash["exception"]
    return [Finding(rule=RULE, message=message, evidence=evidence, line=line)]
