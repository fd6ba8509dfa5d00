"""The cell run in the trial child as IPython runs it (child side), and its outcome as the child sees it.

As `InteractiveShell.run_cell`: the cell's Python (`cell.runnable`: the kernel's own transform), its
statements run one by one, those `ast_node_interactivity` names (by default the last, if it is an
expression) in "single" mode so their value goes to the kernel's displayhook, unless the cell ends with
`;`. The displayhook formats it with the formatters the kernel has active (text/plain, text/html,
images...), `display(...)` formats its arguments, and figures are drawn after the cell as the inline
backend draws them; the output goes nowhere (the child's publishers are no-ops). An error IPython shows
as a traceback while the cell goes on (a formatter's, a figure's) is the cell's crash, as in the kernel.
Formatting happens within the cell's budget.
"""

from __future__ import annotations

import ast
import contextlib
import sys
import time
from typing import Any

from ..cell import runnable
from . import cudamemory, quick, shell_commands, tfwork, threads
from .outcome import ms
from .sandbox.hooks import Guard, Refused

CELL_FILE = "<crane-trial-cell>"
MESSAGE_CHARS = 2000
MAX_FRAMES = 20
PyCF_ALLOW_TOP_LEVEL_AWAIT = 0x2000


def run(
    source: str, ns: dict[str, Any], shell: Any, guard: Guard, report: dict[str, Any], loops: Any = None
) -> dict[str, Any]:  # pragma: no cover - child only
    """Run the cell on the child's copy of the namespace; the outcome as the child sees it. `loops`
    (quick.py's preparer) may rewrite the cell's tree: its loops counted (a timed-out trial says how far
    it got) or cut short (a quick trial)."""
    import linecache

    code_text = runnable(source, shell)
    linecache.cache[CELL_FILE] = (len(source), None, source.splitlines(True), CELL_FILE)
    flags = getattr(getattr(shell, "compile", None), "flags", 0) | PyCF_ALLOW_TOP_LEVEL_AWAIT
    shown = _ShownErrors(shell)
    installs = shell_commands.mark()
    gpu = cudamemory.Trial()  # a worker's: above its copies of the inputs
    sampler = threads.Sampler()  # torch's compute, which this fork runs on one thread
    t0 = time.perf_counter()
    sampler.start()
    try:
        prepared = loops(code_text, CELL_FILE, ns) if loops is not None else code_text
        _execute(prepared, code_text, ns, shell, flags)
        _draw_figures(shell)
    except BaseException as exc:
        outcome = classify(exc, source, guard, report, ms(time.perf_counter() - t0))
        sampled = sampler.stop()  # where the cell ended, not what concludes it
        return _noted(quick.conclude(outcome, ns, exc), installs, gpu, sampled)
    finally:
        shown.restore()
    elapsed = ms(time.perf_counter() - t0)
    sampled = sampler.stop()
    if shown.first is not None:
        error, line = shown.first
        crashed = classify(error, source, guard, report, elapsed, line)
        return _noted(quick.conclude(crashed, ns, error), installs, gpu, sampled)
    finished = {"status": "finished", "elapsed_ms": elapsed}
    return _noted(quick.conclude(finished, ns, None), installs, gpu, sampled)


def _noted(
    outcome: dict[str, Any], installs: int, gpu: cudamemory.Trial, sampled: dict[str, Any] | None
) -> dict[str, Any]:
    """The outcome with what the cell's package installs were answered with (shell_commands.py); where
    the process counts CUDA memory, the cell's peak on the GPU above what it held before (`gpu_extra_kb`);
    where this fork ran torch on fewer threads than the kernel has, the share of its time that took
    (`threads`, the sampler's report)."""
    note = shell_commands.installs_note(installs)
    if note:
        outcome["installs"] = note
    extra = gpu.extra_kb()
    if extra is not None:
        outcome["gpu_extra_kb"] = extra
    if sampled is not None and sampled["share"] > 0:
        outcome["threads"] = sampled
    return outcome


def _execute(
    prepared: Any, code_text: str, ns: dict[str, Any], shell: Any, flags: int
) -> None:  # pragma: no cover - child only
    """`prepared`: the cell's text, or its tree as quick.py rewrote it."""
    if isinstance(prepared, ast.Module):
        tree = prepared
    else:
        tree = compile(prepared, CELL_FILE, "exec", flags | ast.PyCF_ONLY_AST, dont_inherit=True)
    transform_ast = getattr(shell, "transform_ast", None)
    if callable(transform_ast):
        tree = transform_ast(tree) or tree  # the kernel's AST transformers, as run_cell applies them
    nodes = list(tree.body)
    if not nodes:
        return
    hook: Any = getattr(shell, "displayhook", None) if shell is not None else None
    # Without IPython's shell nothing displays a value (no kernel would): no display step.
    interactive = _interactive(nodes, shell.ast_node_interactivity) if callable(hook) else 0
    saved = sys.displayhook
    if interactive:
        quiet = _ends_with_semicolon(code_text)
        with _suppress_attribute_errors():
            hook.quiet = lambda: quiet  # the kernel reads ';' from its history, which the trial is not in
        sys.displayhook = hook
    loop = None
    try:
        for index, node in enumerate(nodes):
            single = index >= len(nodes) - interactive
            module: Any = ast.Interactive([node]) if single else ast.Module([node], [])
            code = compile(module, CELL_FILE, "single" if single else "exec", flags, dont_inherit=True)
            value = eval(code, ns)
            if getattr(value, "cr_code", None) is not None:  # top-level await
                if loop is None:
                    import asyncio

                    loop = asyncio.new_event_loop()
                loop.run_until_complete(value)
    finally:
        sys.displayhook = saved


# What a trial may spend importing the modules a cell's leading imports load for the first time, before the
# cell's budget starts (`new_imports`): TensorFlow's first import alone takes 4-6 s on a loaded machine.
IMPORT_ALLOWANCE_S = 30.0


def new_imports(code_text: str) -> list[str]:
    """The modules the cell's leading `import` statements (those before any other statement) name whose
    package this process has not loaded. The trial imports them before the cell's budget starts: nothing
    of the cell runs before them, so only the import's time is moved, not what the cell does."""
    try:
        tree = ast.parse(code_text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    found: list[str] = []
    for stmt in tree.body:
        if isinstance(stmt, ast.Import):
            found += [alias.name for alias in stmt.names]
        elif isinstance(stmt, ast.ImportFrom) and stmt.level == 0 and stmt.module:
            found.append(stmt.module)
        else:
            break
    return [name for name in found if name.split(".", 1)[0] not in sys.modules]


def import_first(names: list[str]) -> None:  # pragma: no cover - child only
    """Import `names` (`new_imports`); a failure is left for the cell's own import to raise again."""
    import importlib

    for name in names:
        with contextlib.suppress(Exception, SystemExit):
            importlib.import_module(name)


def _interactive(nodes: list[ast.stmt], mode: Any) -> int:
    """How many of the last statements run in "single" mode (their value displayed), as
    `InteractiveShell.run_ast_nodes` decides from `ast_node_interactivity`."""
    if mode == "last_expr_or_assign":
        last = nodes[-1]
        target = None
        if isinstance(last, ast.Assign) and len(last.targets) == 1:
            target = last.targets[0]
        elif isinstance(last, (ast.AugAssign, ast.AnnAssign)):
            target = last.target
        if isinstance(target, ast.Name):
            shown = ast.Expr(ast.Name(target.id, ast.Load()))
            ast.copy_location(shown, last)
            ast.fix_missing_locations(shown)
            nodes.append(shown)
        mode = "last_expr"
    if mode == "last_expr":
        return 1 if isinstance(nodes[-1], ast.Expr) else 0
    return {"none": 0, "last": 1, "all": len(nodes)}.get(mode, 0)


def _ends_with_semicolon(text: str) -> bool:
    """IPython's rule (DisplayHook.semicolon_at_end_of_expression): the last token is `;`."""
    import io
    import tokenize

    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return False
    skip = (tokenize.ENDMARKER, tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT)
    for token in reversed(tokens):
        if token[0] in skip:
            continue
        return token[0] == tokenize.OP and token[1] == ";"
    return False


def _draw_figures(shell: Any) -> None:  # pragma: no cover - child only
    """Figures drawn after the cell, as the kernel draws them: the inline backend's own post-execute
    callbacks (other callbacks are the kernel's business, not the cell's)."""
    events = getattr(shell, "events", None)
    callbacks = getattr(events, "callbacks", {}).get("post_execute", []) if events is not None else []
    for callback in list(callbacks):
        if getattr(callback, "__module__", "").startswith(("matplotlib_inline", "ipykernel.pylab")):
            callback()  # it shows its own errors (recorded); one it raises, IPython shows too: the cell's


class _ShownErrors:
    """The kernel's `showtraceback` in the child: an error IPython shows while the cell goes on (a
    formatter's, a figure's) is recorded, with the cell's line that was running, and shown nowhere."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.first: tuple[BaseException, int | None] | None = None
        if shell is None or not hasattr(shell, "showtraceback"):
            return

        def showtraceback(exc_tuple: Any = None, *args: Any, **kwargs: Any) -> None:
            exc = exc_tuple[1] if isinstance(exc_tuple, tuple) and len(exc_tuple) > 1 else sys.exc_info()[1]
            if isinstance(exc, BaseException) and self.first is None:
                self.first = (exc, _running_line())

        with _suppress_attribute_errors():
            shell.showtraceback = showtraceback

    def restore(self) -> None:
        if self.shell is not None:
            with _suppress_attribute_errors():
                del self.shell.showtraceback


def _running_line() -> int | None:
    """The line of the cell that is running (the innermost frame of the cell on the stack)."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename == CELL_FILE:
            return frame.f_lineno
        frame = frame.f_back  # type: ignore[assignment]
    return None


def _suppress_attribute_errors() -> Any:
    return contextlib.suppress(AttributeError, TypeError)


# -- the outcome -----------------------------------------------------------------------------------

_OOM_TEXT = (
    "can't allocate memory",
    "cannot allocate memory",
    "bad_alloc",
    "out of memory",
    "unable to allocate",
)
# Errors a neutralised descriptor gives where the OS layer did not record its use (hooks-only mode):
# EBADF (a file reopened read-only), ENOTSOCK (/dev/null in a socket's place). Others (EINVAL, ENOTTY)
# are too common in cells of their own to count.
_NEUTRALISED_ERRNOS = (9, 88)


def classify(
    exc: BaseException,
    source: str,
    guard: Guard,
    report: dict[str, Any],
    elapsed: float,
    line: int | None = None,
) -> dict[str, Any]:  # pragma: no cover
    chain = _chain(exc)
    texts = [f"{type(e).__name__}: {_text(e)}".lower() for e in chain]
    if any(isinstance(e, MemoryError) for e in chain) or any(t in s for s in texts for t in _OOM_TEXT):
        return {"status": "out_of_memory", "elapsed_ms": elapsed,
                "reason": f"the cell ran out of the trial's memory ({type(exc).__name__})"}  # fmt: skip
    if any("cannot re-initialize cuda in forked subprocess" in s for s in texts):
        return {"status": "unavailable", "reason": "CUDA in use: a forked process cannot use the GPU",
                "elapsed_ms": elapsed}  # fmt: skip
    if any(isinstance(e, tfwork.GraphFunctionCall) for e in chain):
        return {"status": "unavailable", "reason": tfwork.REASON, "elapsed_ms": elapsed}
    lacking = shell_commands.lacking(chain)
    if lacking:  # the notebook installs what this import needs; the trial answered that install offline
        return {"status": "unavailable", "reason": lacking, "elapsed_ms": elapsed}
    refused = any(isinstance(e, Refused) for e in chain)
    if refused and not guard.refusals:
        guard.refusals.append("an operation the sandbox refused")
    downgraded = report.get("downgraded") or []
    if downgraded and any(isinstance(e, OSError) and e.errno == 9 for e in chain):  # EBADF
        guard.refusals.append(f"write to a file the kernel holds open ({downgraded[0]})")
    neutralised = bool(report.get("watched")) and not report.get("os_layer")
    if neutralised and (
        any(isinstance(e, OSError) and e.errno in _NEUTRALISED_ERRNOS for e in chain)
        or any("disk i/o error" in s or "readonly database" in s for s in texts)
    ):
        guard.refusals.append("use a resource the kernel had open (a connection, pipe or database)")
    frames = _frames(exc, source)
    if line is None and frames:
        line = frames[-1]["line"]
    if not frames and line is not None:
        lines = source.splitlines()
        frames = [{"line": line, "text": lines[line - 1].strip()[:300] if 0 < line <= len(lines) else ""}]
    return {
        "status": "crashed",
        "exception": type(exc).__name__,
        "message": _text(exc)[:MESSAGE_CHARS],
        "line": line,
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
