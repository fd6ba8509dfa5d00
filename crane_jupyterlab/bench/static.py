"""Static analyzers as crash detectors: the baseline of `crane-bench junobench --backend pyright|pylint`.

The CRANE-LLM paper ran pyright and pylint on each case as one module and read their reports as crash /
no crash (its replication repository: `main_sa.py`, `sas/`). We do the same, with a reading that is
deterministic and written down here instead of the paper's LLM-judged reading of the report.

The module (one file per case):

1. a prelude binding what an IPython kernel provides without an import (`get_ipython`, `display`);
2. every executed cell, in execution order, turned into plain Python by IPython's own transformer
   (`%magic` and `!cmd` become the `get_ipython()` calls the kernel runs);
3. +RT only: the runtime types, as annotations (below);
4. the target cell, transformed the same way. Its lines are the *target lines*.

+RT, runtime information as type annotations: for every top-level name of the case's runtime
information (not the `__method__<name>_<attr>` entries: an attribute cannot be declared) whose recorded
`type` is a class, one bare annotation `name: T` just before the target cell, as the paper placed them.
`T` is the recorded class, reached through a private import of its defining module
(`import pandas.core.frame as _crane_rt_0`, then `df: _crane_rt_0.DataFrame`), so no alias table and no
name of the notebook's is touched; builtins are written bare (`n: int`). Skipped: modules, functions,
methods, classes themselves (`type`, metaclasses), `NoneType`, classes defined in the notebook
(`__main__.*`, which no import reaches) and anything that is not a dotted class path. Only the `type`
facts (category R) can become annotations, so `--categories` without R leaves +RT equal to -RT.

The reading (crash = positive): a crash is predicted when the analyzer reports at least one *error*
located on a target line, except
- errors about the analyzer's environment, which is not the notebook's: a module it cannot find
  (pyright `reportMissingImports`, `reportMissingModuleSource`; pylint `import-error`);
- errors Python never raises at run time: pyright's annotation-conformance rules (`reportAssignmentType`,
  `reportRedeclaration`, `reportReturnType`, `reportInvalidTypeForm`, `reportIncompatibleMethodOverride`,
  `reportIncompatibleVariableOverride`: +RT's declarations make a target cell that rebinds a name to
  another type "wrong" without any crash), and pylint's `function-redefined` (notebooks redefine),
  `assignment-from-no-return`, `assignment-from-none`.
pyright errors are `severity == "error"` under its default (standard) rules; pylint errors are the
E-messages (only those are enabled). Diagnostics on other lines are ignored: the executed cells ran.

What the paper did differently: it counted errors anywhere in the module, and filtered a hand-made list
of messages it had seen on JunoBench (e.g. `"keras" is not a known attribute of module "tensorflow"`,
pylint's `no-name-in-module`, `Module 'cv2' has no 'resize' member`); we filter no message by its text.
Both analyzers resolve imports against the Python environment that runs `crane-bench` (pyright is given
`--pythonpath sys.executable`), so a library that is not installed there is unknown to them, as libraries
missing from the paper's image were to its analyzers.
"""

from __future__ import annotations

import asyncio
import builtins
import json
import keyword
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from ..checks.cell import to_python
from ..llm.errors import BadRequest, LLMError, LLMTimeout
from ..models import PredictionRequest
from .runtime_facts import parse_runtime_info

Tool = Literal["pyright", "pylint"]
TOOLS: tuple[Tool, ...] = ("pyright", "pylint")

PRELUDE = (
    "from IPython.core.getipython import get_ipython  # an IPython kernel's builtin\n"
    "from IPython.display import display  # an IPython kernel's builtin\n"
)
RT_PREFIX = "_crane_rt_"

# Environment, not code: the analyzer's Python lacks a module the notebook had.
_ENVIRONMENT = {
    "pyright": {"reportMissingImports", "reportMissingModuleSource"},
    "pylint": {"import-error"},
}
# Typing rules and redefinitions: Python runs such code without raising.
_NEVER_RAISED = {
    "pyright": {
        "reportAssignmentType",
        "reportRedeclaration",
        "reportReturnType",
        "reportInvalidTypeForm",
        "reportIncompatibleMethodOverride",
        "reportIncompatibleVariableOverride",
    },
    "pylint": {"function-redefined", "assignment-from-no-return", "assignment-from-none"},
}
_SKIPPED_TYPES = {
    "module",
    "function",
    "method",
    "builtin_function_or_method",
    "method-wrapper",
    "type",
    "NoneType",
    "abc.ABCMeta",
    "enum.EnumMeta",
    "enum.EnumType",
}
_TYPE_REPR = re.compile(r"^<class '([A-Za-z_][\w.]*)'>$")
_DOTTED = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")


# ---------------------------------------------------------------- the module


@dataclass
class Module:
    """One case as the analyzers see it."""

    text: str
    target_first: int  # 1-based line numbers of the target cell in `text`
    target_last: int
    annotations: list[str] = field(default_factory=list)  # the +RT lines (imports and annotations)

    def on_target(self, line: int) -> bool:
        return self.target_first <= line <= self.target_last


def _cell_text(source: str) -> str:
    return to_python(source).strip("\n") + "\n"


def annotation_type(raw: Any) -> str | None:
    """The dotted class path of a recorded `type` (`<class 'a.B'>` or `a.B`), None when not annotatable."""
    if not isinstance(raw, str):
        return None
    text = raw.strip()
    match = _TYPE_REPR.match(text)
    path = match.group(1) if match else text
    if not _DOTTED.match(path) or path in _SKIPPED_TYPES or path.startswith(("__main__.", "builtins.type")):
        return None
    if "." not in path:
        # A bare name is a builtin class, or nothing the annotation could name.
        value = getattr(builtins, path, None)
        return path if isinstance(value, type) else None
    if path.startswith("builtins."):
        return annotation_type(path.removeprefix("builtins."))
    return path


def runtime_annotations(runtime: dict[str, Any] | None) -> list[str]:
    """The +RT lines for a case's runtime information: private imports, then `name: T` annotations."""
    imports: dict[str, str] = {}
    lines: list[str] = []
    for name, record in (runtime or {}).items():
        if not isinstance(name, str) or name.startswith("__method__") or not isinstance(record, dict):
            continue
        if not name.isidentifier() or keyword.iskeyword(name):
            continue
        path = annotation_type(record.get("type"))
        if path is None:
            continue
        if "." in path:
            module, cls = path.rsplit(".", 1)
            alias = imports.setdefault(module, f"{RT_PREFIX}{len(imports)}")
            lines.append(f"{name}: {alias}.{cls}")
        else:
            lines.append(f"{name}: {path}")
    return [f"import {module} as {alias}" for module, alias in imports.items()] + lines


def request_runtime(request: PredictionRequest) -> dict[str, Any] | None:
    """The runtime information a request carries, parsed from its text (all 148 cases have one)."""
    if request.runtime_text:
        try:
            return parse_runtime_info(request.runtime_text)
        except ValueError:
            pass
    return request.runtime


def build_module(request: PredictionRequest, with_runtime: bool) -> Module:
    """The module for one case (see the module docstring for its layout)."""
    parts = [PRELUDE]
    for number, cell in enumerate(request.executed_cells, 1):
        parts.append(f"\n# In [{number}]\n" + _cell_text(cell))
    annotations = runtime_annotations(request_runtime(request)) if with_runtime else []
    if annotations:
        parts.append("\n# Runtime types (+RT)\n" + "\n".join(annotations) + "\n")
    parts.append("\n# Target cell\n")
    head = "".join(parts)
    target = _cell_text(request.target_cell)
    first = head.count("\n") + 1
    last = first + max(target.count("\n"), 1) - 1
    return Module(head + target, first, last, annotations)


# ---------------------------------------------------------------- running the analyzers


@dataclass(frozen=True)
class Diagnostic:
    line: int  # 1-based, in the module
    column: int
    severity: str  # pyright: error/warning/information; pylint: its message type
    code: str  # pyright rule, pylint symbol
    message: str


def tool_version(tool: Tool) -> str:
    """The installed analyzer's version; BadRequest when it is not installed."""
    try:
        return metadata.version(tool)
    except metadata.PackageNotFoundError:
        raise BadRequest(
            f"{tool} is not installed in this environment (pip install '.[test]' installs the pinned one)"
        ) from None


def _pyright_command(project: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "pyright",
        "--outputjson",
        "--pythonpath",
        sys.executable,
        "-p",
        str(project),
    ]


def _pylint_command(project: Path, files: Sequence[Path]) -> list[str]:
    rcfile = project / "pylintrc"
    return [
        sys.executable,
        "-m",
        "pylint",
        f"--rcfile={rcfile}",
        "--output-format=json",
        "--persistent=n",
        "--disable=all",
        "--enable=E",
        *map(str, files),
    ]


def parse_pyright(output: str, files: dict[str, Path]) -> dict[str, list[Diagnostic]]:
    """pyright's `--outputjson` report, per key of `files`."""
    report = json.loads(output)
    by_name = {path.name: key for key, path in files.items()}  # one folder: names are unique
    found: dict[str, list[Diagnostic]] = {key: [] for key in files}
    for item in report.get("generalDiagnostics", []):
        key = by_name.get(Path(item.get("file", "")).name)
        if key is None:
            continue
        start = item.get("range", {}).get("start", {})
        found[key].append(
            Diagnostic(
                line=int(start.get("line", -1)) + 1,
                column=int(start.get("character", 0)) + 1,
                severity=str(item.get("severity", "")),
                code=str(item.get("rule") or ""),
                message=str(item.get("message", "")),
            )
        )
    return found


def parse_pylint(output: str, files: dict[str, Path]) -> dict[str, list[Diagnostic]]:
    """pylint's `--output-format=json` report, per key of `files`."""
    report = json.loads(output) if output.strip() else []
    by_name = {path.name: key for key, path in files.items()}  # pylint prints paths relative to its cwd
    found: dict[str, list[Diagnostic]] = {key: [] for key in files}
    for item in report:
        key = by_name.get(Path(item.get("path", "")).name)
        if key is None:
            continue
        found[key].append(
            Diagnostic(
                line=int(item.get("line") or 0),
                column=int(item.get("column") or 0) + 1,
                severity=str(item.get("type", "")),
                code=str(item.get("symbol", "")),
                message=str(item.get("message", "")),
            )
        )
    return found


def crash_diagnostics(tool: Tool, module: Module, diagnostics: Sequence[Diagnostic]) -> list[Diagnostic]:
    """The diagnostics that make the reading say "crash" (see the module docstring)."""
    ignored = _ENVIRONMENT[tool] | _NEVER_RAISED[tool]
    return [
        d for d in diagnostics if d.severity == "error" and module.on_target(d.line) and d.code not in ignored
    ]


# ---------------------------------------------------------------- the backend


class StaticVerdict(BaseModel):
    """An analyzer's reading of one case, shaped like a `Verdict` for the benchmark's rows."""

    detection: bool
    reasoning: str
    source: Tool
    model: str  # e.g. "pyright 1.1.414"
    diagnostics: list[dict[str, Any]] = Field(default_factory=list)  # the errors on target lines
    excluded: list[dict[str, Any]] = Field(default_factory=list)  # target-line errors the reading excludes
    ignored: int = 0  # diagnostics of the module the reading did not count
    annotations: int = 0  # +RT annotation lines injected
    latency_ms: float | None = None  # the analyzer's run time divided by the cases of its batch
    prompt_tokens: int | None = None


def _target_relative(module: Module, diagnostic: Diagnostic) -> dict[str, Any]:
    """A diagnostic as a row stores it, its line counted within the target cell."""
    return {
        "line": diagnostic.line - module.target_first + 1,
        "column": diagnostic.column,
        "code": diagnostic.code,
        "message": diagnostic.message,
    }


def _describe(module: Module, diagnostic: Diagnostic) -> str:
    line = diagnostic.line - module.target_first + 1
    code = f" [{diagnostic.code}]" if diagnostic.code else ""
    return f"line {line} of the target cell{code}: {' '.join(diagnostic.message.split())}"


class StaticAnalyzerBackend:
    """A `Backend` that runs pyright or pylint; `predict_many` analyzes a batch in one process."""

    def __init__(self, tool: Tool, *, runtime: bool = False, timeout: float = 120.0):
        if tool not in TOOLS:
            raise ValueError(f"unknown static analyzer {tool!r}; choose {' or '.join(TOOLS)}")
        self.tool: Tool = tool
        self.name = tool
        self.runtime = runtime
        self.timeout = float(timeout)
        self.version = tool_version(tool)

    async def predict(self, request: PredictionRequest) -> StaticVerdict:
        result = (await self.predict_many([request]))[0]
        if isinstance(result, LLMError):
            raise result
        return result

    async def predict_many(self, requests: Sequence[PredictionRequest]) -> list[StaticVerdict | LLMError]:
        """One analyzer run over all `requests`; a result (or the error) per request, in order."""
        modules = [build_module(r, self.runtime) for r in requests]
        with tempfile.TemporaryDirectory(prefix=f"crane-{self.tool}-") as tmp:
            project = Path(tmp)
            files = {str(i): project / f"case_{i:04d}.py" for i in range(len(modules))}
            for key, module in zip(files, modules, strict=True):
                files[key].write_text(module.text, encoding="utf-8")
            started = time.perf_counter()
            try:
                found = await self._run(project, files)
            except LLMError as error:
                return [error for _ in requests]
            # The run is shared: each case gets its share of the batch's wall time.
            latency = round((time.perf_counter() - started) * 1000 / len(modules), 1)
        results: list[StaticVerdict | LLMError] = []
        for key, module in zip(files, modules, strict=True):
            diagnostics = found.get(key, [])
            crash = crash_diagnostics(self.tool, module, diagnostics)
            excluded = [
                d
                for d in diagnostics
                if d.severity == "error" and module.on_target(d.line) and d not in crash
            ]
            if crash:
                reasoning = f"{self.tool} reports " + "; ".join(_describe(module, d) for d in crash[:3])
                if len(crash) > 3:
                    reasoning += f" (and {len(crash) - 3} more)"
            else:
                reasoning = f"{self.tool} reports no error in the target cell"
            results.append(
                StaticVerdict(
                    detection=bool(crash),
                    reasoning=reasoning,
                    source=self.tool,
                    model=f"{self.tool} {self.version}",
                    diagnostics=[_target_relative(module, d) for d in crash],
                    excluded=[_target_relative(module, d) for d in excluded],
                    ignored=len(diagnostics) - len(crash),
                    annotations=sum(1 for line in module.annotations if not line.startswith("import ")),
                    latency_ms=latency,
                )
            )
        return results

    async def _run(self, project: Path, files: dict[str, Path]) -> dict[str, list[Diagnostic]]:
        if self.tool == "pyright":
            (project / "pyrightconfig.json").write_text(
                json.dumps({"include": ["."], "typeCheckingMode": "standard"}), encoding="utf-8"
            )
            command = _pyright_command(project)
        else:
            (project / "pylintrc").write_text("[MAIN]\n", encoding="utf-8")
            command = _pylint_command(project, list(files.values()))
        limit = self.timeout * max(1, len(files))
        process = await asyncio.create_subprocess_exec(
            *command,
            cwd=project,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            out, err = await asyncio.wait_for(process.communicate(), timeout=limit)
        except TimeoutError:
            process.kill()
            await process.wait()
            raise LLMTimeout(
                f"{self.tool} did not finish {len(files)} case(s) within {limit:.0f} s"
            ) from None
        try:
            if self.tool == "pyright":
                return parse_pyright(out.decode("utf-8", "replace"), files)
            return parse_pylint(out.decode("utf-8", "replace"), files)
        except (json.JSONDecodeError, TypeError, ValueError, AttributeError):
            detail = (err or out).decode("utf-8", "replace").strip()[-300:]
            raise LLMError(
                f"{self.tool} exited {process.returncode} without a report: {detail or 'no output'}"
            ) from None


def analyzer_available(tool: Tool) -> bool:
    """Whether `tool` is installed in this environment (and pyright finds node to run on)."""
    try:
        tool_version(tool)
    except BadRequest:
        return False
    return tool != "pyright" or shutil.which("node") is not None
