"""`crane-bench notebooks PATH...`: audit real notebooks, cell by cell, against what really happens.

Each notebook (`.ipynb` files, or every notebook under a folder) runs in a fresh kernel of this
interpreter whose working directory is the notebook's folder. Every code cell, in order, is first
analysed exactly as the server analyses it (`AnalysisService`: the probe, the deterministic checks, a
trial run per `--trial`, the model when `--model` is given), then executed, and what really happened is
recorded: it ran, or it raised (the exception, its message and the cell's line), or it ran past
`--timeout` (it is interrupted and the notebook goes on). A kernel that dies or cannot be interrupted
ends its notebook; the cells left are recorded as skipped.

One JSON line per cell goes to `--out`:
`{"notebook", "index", "source", "framework", "analysis", "verdict", "warning", "trial", "fix", "timing",
"run", "outcome", "fix_run"}`: `index` is the cell's position in the notebook (markdown cells count),
`verdict` the server's verdict (`detection`, `source`, `reasoning`, `rules`), `warning` "certain" (a
crash the checks, a syntax error or the trial vouch for), "predicted" (the model's) or null, `timing`
analyze/extraction/trial/fix/run ms, `run` the real execution (`status` ok|error|timeout|died|skipped,
`exception`, `message`, `line`, `raised_in`: where the innermost frame outside the libraries lies, this
cell, another cell (a function it defined) or a file beside the notebook), `outcome` its class: ok,
crash, cascade (a NameError of a name an earlier failed cell should have defined), network,
missing_file (the crash came from the machine, not the code), timeout, died, skipped.

With `--fixes` the service also tries its verified fixes (the server's `fixes` option; without the flag
it is off, so figures stay comparable with runs made before fixes existed): `fix` is the fix offered
(`title`, `origin`, `line`, `tried`, `shortened`, `trial_ms`, `source`: the whole new cell) or null, and
`timing.fix_ms` the time spent trying candidates. When a fix was offered and the real run then raised,
the fixed cell runs right after it in the same kernel, so later cells see the state of a user who applied
the fix: `fix_run` (`status` ok|error|timeout|died, `exception`, `message`, `line`, `ms`). The fixed cell
runs after the original's partial run, whose side effects (an append, a file written) stay: a user
applying the fix before running would not have them.

At the end a summary: certain warnings against real crashes (precision, recall on crashes, on
non-NameError crashes, cascades and machine-caused crashes counted apart), trial outcomes and how they
compare with the real run, analyze latency p50/p95 (all cells and by the notebook's framework), and
every false warning and every missed crash. With `--fixes`: real crashes and cascades with a fix offered,
the share of the crashes an edit of the cell could fix that got one (fixable.py sets apart a missing
package, a removed dataset, state an earlier failed cell should have made: each listed), fix precision
(fixed runs that succeeded / fixed runs), fixes offered on cells that did not crash (not counted against
precision, listed), every offered fix with its real outcome, the fix trials' time p50/p95 (`fix_ms`,
cells whose candidates were tried) beside the analyze latency, and the real crashes an edit could fix
that no fix was offered for. `--summarize FILE` prints the summary of an earlier --out file without
running anything.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import IO, Any

from ..checks.astutil import bound_names
from . import notebook_summary as summary
from .kernels import execute, fresh_kernel, halted

KERNEL_ID = "crane-bench-notebook"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "notebooks",
        help="audit real notebooks: analyse each cell as the server does, run it, compare",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("paths", nargs="*", type=Path, help=".ipynb files or folders (searched recursively)")
    p.add_argument("--out", type=Path, help="results file to write (JSON lines, one per cell)")
    p.add_argument(
        "--trial",
        choices=("off", "on-demand", "auto"),
        help="trial runs as the server's mode: off (checks only), on-demand (every cell as if the user "
        "chose Trial-Run Cell), auto (with every analysis); default: the server's default on this machine",
    )
    p.add_argument("--timeout", type=float, default=120.0, help="seconds per executed cell (default 120)")
    p.add_argument("--jobs", type=int, default=1, help="notebooks run at the same time (default 1)")
    p.add_argument("--trial-budget", type=float, default=5.0, help="seconds per trial (default 5)")
    p.add_argument(
        "--fixes",
        action="store_true",
        help="try the server's verified fixes after a certain or observed crash (needs trials), record the "
        "one offered, and run it in place of a cell that really crashed; off by default",
    )
    p.add_argument("--model", help="litellm model name: a model judges what nothing certain decides")
    p.add_argument("--api-base", default="", help="OpenAI-compatible endpoint for --model")
    add_shared_options(p)
    p.set_defaults(func=main)


def add_shared_options(p: argparse.ArgumentParser) -> None:
    """The options `notebooks` and `chain` both end with: --env, --summary-json, --summarize."""
    p.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="add to each kernel's environment (PIP_NO_INDEX=1: `%%pip install` cells install nothing)",
    )
    p.add_argument("--summary-json", type=Path, help="also write the summary as JSON")
    p.add_argument(
        "--summarize", type=Path, metavar="FILE", help="print the summary of an earlier --out file"
    )


def main(args: argparse.Namespace) -> int:
    if args.summarize is not None:
        try:
            rows = summary.load(args.summarize)
        except (OSError, ValueError) as exc:
            print(f"crane-bench notebooks: {exc}", file=sys.stderr)
            return 2
        return _report(rows, args)
    try:
        notebooks = find_notebooks(args.paths)
        env = _env(args.env)
        _check_args(args)
    except (OSError, ValueError) as exc:
        print(f"crane-bench notebooks: {exc}", file=sys.stderr)
        return 2
    if args.trial is None:
        from ..server.config import default_trial_mode

        args.trial = default_trial_mode()
    out = args.out.open("w", encoding="utf-8") if args.out else None
    try:
        rows = asyncio.run(_run_all(notebooks, args, env, out))
    finally:
        if out is not None:
            out.close()
    return _report(rows, args)


def _report(rows: list[dict[str, Any]], args: argparse.Namespace) -> int:
    figures = summary.summarize(rows)
    return report(figures, summary.render(figures), args)


def report(figures: dict[str, Any], text: str, args: argparse.Namespace) -> int:
    """Print the summary's text, write its figures to --summary-json if asked; the exit code."""
    print(text)
    if args.summary_json is not None:
        args.summary_json.write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")
    return 0


def _check_args(args: argparse.Namespace) -> None:
    if args.jobs < 1:
        raise ValueError("--jobs must be at least 1")
    if args.timeout <= 0 or args.trial_budget <= 0:
        raise ValueError("--timeout and --trial-budget must be positive")
    if args.fixes and args.trial == "off":
        raise ValueError("--fixes needs trials: --trial on-demand or auto")
    check_outputs(args)


def check_outputs(args: argparse.Namespace) -> None:
    """ValueError when the folder of --out or --summary-json does not exist."""
    for path in (args.out, args.summary_json):
        if path is not None and not path.parent.is_dir():
            raise ValueError(f"directory {path.parent} does not exist")


def _env(pairs: list[str]) -> dict[str, str]:
    env = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ValueError(f"--env wants KEY=VALUE, got {pair!r}")
        env[key] = value
    return env


def find_notebooks(paths: list[Path]) -> list[Path]:
    """The notebooks named or found under the folders, in order, each once; an error names a path that
    is neither."""
    if not paths:
        raise ValueError("name at least one .ipynb file or folder")
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found += sorted(
                p for p in path.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts and p.is_file()
            )
        elif path.is_file() and path.suffix == ".ipynb":
            found.append(path)
        else:
            raise ValueError(f"{path}: not an .ipynb file or a folder")
    unique = list(dict.fromkeys(p.resolve() for p in found))
    if not unique:
        raise ValueError("no notebook found under " + ", ".join(map(str, paths)))
    return unique


def code_cells(path: Path) -> list[tuple[int, str]]:
    """(position in the notebook, source) of each non-empty code cell; ValueError for a file that is not
    a notebook."""
    try:
        nb = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not a notebook ({exc})") from None
    cells = nb.get("cells") if isinstance(nb, dict) else None
    if not isinstance(cells, list):
        raise ValueError(f"{path}: not a notebook (no cells; nbformat 3 notebooks are not read)")
    found = []
    for index, cell in enumerate(cells):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        if source.strip():
            found.append((index, source))
    return found


async def _run_all(
    notebooks: list[Path], args: argparse.Namespace, env: dict[str, str], out: IO[str] | None
) -> list[dict[str, Any]]:
    slots = asyncio.Semaphore(args.jobs)
    rows: list[dict[str, Any]] = []
    started = time.monotonic()
    done = 0

    def emit(row: dict[str, Any]) -> None:
        rows.append(row)
        if out is not None:  # written as each cell ends, so an interrupted run keeps what it measured
            out.write(json.dumps(row) + "\n")
            out.flush()

    async def one(path: Path) -> None:
        nonlocal done
        async with slots:
            t0 = time.monotonic()
            note = await run_notebook(path, args, env, emit)
        done += 1
        print(
            f"[{done}/{len(notebooks)}] {path} {note} ({time.monotonic() - t0:.0f} s, "
            f"total {time.monotonic() - started:.0f} s)",
            file=sys.stderr,
            flush=True,
        )

    await asyncio.gather(*(one(path) for path in notebooks))
    order = {str(p): n for n, p in enumerate(notebooks)}
    rows.sort(key=lambda r: (order.get(r["notebook"], len(order)), r["index"]))
    return rows


class _OneKernel:
    """The service's view of the kernels it may analyse against: this notebook's only."""

    def __init__(self, manager: Any) -> None:
        self.manager = manager

    def __contains__(self, kernel_id: str) -> bool:
        return kernel_id == KERNEL_ID

    def get_kernel(self, kernel_id: str) -> Any:
        return self.manager


def _service(manager: Any, args: argparse.Namespace) -> Any:
    from ..server.config import ServiceConfig
    from ..server.service import AnalysisService

    config = ServiceConfig(
        model=args.model or "",
        api_base=args.api_base,
        trial=args.trial,
        trial_budget=args.trial_budget,
        fixes=bool(args.fixes),
    )
    return AnalysisService(config, _OneKernel(manager))


async def run_notebook(path: Path, args: argparse.Namespace, env: dict[str, str], emit: Any) -> str:
    """Analyse then run every code cell of one notebook; returns a note for the progress line."""
    try:
        cells = code_cells(path)
    except (OSError, ValueError) as exc:
        return f"skipped: {exc}"
    framework = summary.framework(source for _, source in cells)
    failed_names: set[str] = set()  # names the cells that failed should have bound
    stopped = ""
    analysed = 0
    try:
        async with fresh_kernel(cwd=str(path.parent), env=env) as (manager, kc):
            service = _service(manager, args)
            try:
                for index, source in cells:
                    row = _row(path, index, source, framework)
                    if stopped:
                        row["run"] = {"status": "skipped", "reason": stopped}
                        row["outcome"] = "skipped"
                        emit(row)
                        continue
                    await _analyse(service, source, args, row)
                    analysed += 1
                    run = await execute(kc, manager, source, args.timeout)
                    row["timing"]["run_ms"] = run.pop("ms")
                    row["run"] = run
                    row["outcome"] = summary.classify(run, failed_names)
                    _track_names(source, run["status"] == "ok", failed_names)
                    if row["fix"] is not None and run["status"] == "error":
                        # The user who applied the fix ran this instead: later cells see its state.
                        fixed = row["fix"]["source"]
                        run = row["fix_run"] = await execute(kc, manager, fixed, args.timeout)
                        _track_names(fixed, run["status"] == "ok", failed_names)
                    if why := halted(run):
                        stopped = f"cell {index}: {why}"
                    emit(row)
            finally:
                await service.close()
    except RuntimeError as exc:  # jupyter_client: the kernel did not start or answer
        return f"kernel failed after {analysed} cells: {exc}"
    return f"{analysed}/{len(cells)} code cells" + (f", stopped at {stopped}" if stopped else "")


def _row(path: Path, index: int, source: str, framework: str) -> dict[str, Any]:
    return {
        "notebook": str(path),
        "index": index,
        "source": source,
        "framework": framework,
        "analysis": None,
        "verdict": None,
        "warning": None,
        "trial": None,
        "fix": None,
        "timing": {},
        "run": None,
        "outcome": None,
        "fix_run": None,
    }


async def _analyse(service: Any, source: str, args: argparse.Namespace, row: dict[str, Any]) -> None:
    from ..api import MAX_SOURCE_CHARS, AnalyzeRequest, AnalyzeSettings

    if len(source) > MAX_SOURCE_CHARS:
        row["analysis"] = "error: the cell is larger than the server accepts"
        return
    # on-demand: the request of the "Trial-Run Cell" command; otherwise the server's mode decides.
    settings = AnalyzeSettings(trial=True if args.trial == "on-demand" else None)
    request = AnalyzeRequest(kernel_id=KERNEL_ID, source=source, settings=settings)
    t0 = time.perf_counter()
    try:
        result = await service.analyze(request)
    except Exception as exc:  # the service's typed errors: the cell is still run and recorded
        row["analysis"] = f"error: {type(exc).__name__}: {exc}"
        row["timing"]["analyze_ms"] = _ms(time.perf_counter() - t0)
        return
    row["timing"].update(
        analyze_ms=_ms(time.perf_counter() - t0),
        extraction_ms=round(result.timing.extraction_ms, 2),
        trial_ms=round(result.timing.trial_ms, 2),
        llm_ms=round(result.timing.llm_ms, 2),
        fix_ms=round(result.timing.fix_ms, 2),
    )
    row["analysis"] = result.status
    verdict = result.verdict
    if verdict is not None:
        row["verdict"] = {
            "detection": verdict.detection,
            "source": verdict.source,
            "reasoning": verdict.reasoning,
            "rules": [f.rule for f in verdict.findings],
        }
        if verdict.detection:
            # "may": a quick trial's crash that may depend on its cut (policy.maybe_quick), shown as "may
            # crash", beside the model's prediction: neither is counted as a certain warning.
            row["warning"] = {"llm": "predicted", "quick_may": "may"}.get(verdict.source, "certain")
    if result.trial is not None:
        row["trial"] = result.trial.model_dump(exclude_none=True, exclude={"frames"})
    if result.fixes:  # at most one
        row["fix"] = result.fixes[0].model_dump(exclude_none=True)


def _track_names(source: str, ran: bool, failed_names: set[str]) -> None:
    """A cell that ran binds its names; a cell that failed leaves unbound the names it should have
    bound, so a later NameError of one of them is a cascade, not a crash of its own."""
    bound = bound_names(source)
    if ran:
        failed_names.difference_update(bound)
    else:
        failed_names.update(bound)


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 2)
