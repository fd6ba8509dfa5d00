"""`crane-bench live`: run the live crash suite through real kernels and write a results file.

Each case gets a fresh kernel of this interpreter, its `executed_cells` run in order as a notebook would
run them, and then runtime information is extracted for the `target_cell`, which is never executed in
the kernel. With `--backend trial` or `hybrid` the target cell also runs as a trial (in a sandboxed fork
of the kernel, as the server runs it), after the extraction.
One JSON line per case goes to `--out` (the format `score.py` reads):
`{"id", "version", "runtime_text", "extraction_ms", "prediction", "error", "trial"}`. `extraction_ms` is
the wall time of the extract round trip with the probe already installed, as in a notebook after its
first prediction; `trial` is the trial's outcome (or null). At the end, the trial outcomes are counted
per kind and every case whose trial neither crashed nor finished is listed with the reason.
"""

from __future__ import annotations

import argparse
import asyncio
import fnmatch
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from ..models import RESPONSE_FORMATS, TrialOutcome
from ..server import trial as trials
from ..server.payload import ExtractError, extract
from .kernels import CellFailed, fresh_kernel, run_cell

_CASE_KEYS = ("id", "version", "executed_cells", "target_cell")
_SETTINGS = ("+RT", "-RT")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "live",
        help="run the live crash suite in real kernels",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--cases", required=True, type=Path, help="cases.jsonl of the live suite")
    p.add_argument("--out", required=True, type=Path, help="results file to write (JSON lines)")
    p.add_argument("--categories", default="SRV", help="runtime fact categories to render (subset of SRV)")
    p.add_argument("--ids", default="*", help="glob on the case id, or on id/version (default: all)")
    p.add_argument("--max-columns", type=int, help="probe option max_columns")
    p.add_argument(
        "--docs", action="store_true", help="+D: collect API docs in the kernel and send them to the backend"
    )
    p.add_argument("--jobs", type=int, default=2, help="kernels run at the same time (default 2)")
    p.add_argument("--cell-timeout", type=float, default=300.0, help="seconds per executed cell")
    p.add_argument("--extract-timeout", type=float, default=30.0, help="seconds for the extraction")
    backend = p.add_argument_group("prediction backend")
    backend.add_argument(
        "--backend", default="none", help="none (default), checks, trial, litellm, replay, hybrid"
    )
    backend.add_argument("--model", help="model name (litellm)")
    backend.add_argument("--votes", type=int, help="majority vote over this many samples")
    backend.add_argument("--api-base", help="OpenAI-compatible endpoint")
    backend.add_argument("--timeout", type=float, help="seconds per model request")
    backend.add_argument(
        "--response-format",
        choices=RESPONSE_FORMATS,
        default="auto",
        help="structured output request (json_object_schema for llama.cpp servers)",
    )
    backend.add_argument("--replay", help="paper_outputs.jsonl for the replay backend")
    backend.add_argument(
        "--setting",
        nargs="?",
        choices=_SETTINGS,
        help="+RT (default) sends the runtime text to the backend, -RT withholds it",
    )
    trial = p.add_argument_group("trial run (with --backend trial or hybrid)")
    trial.add_argument("--trial-budget", type=float, default=5.0, help="seconds per trial (default 5)")
    trial.add_argument("--trial-memory", type=int, default=2048, help="MB of extra memory per trial")
    trial.add_argument(
        "--trial-quick",
        type=int,
        default=2,
        help="quick trials: loops that would outlast the budget are cut after this many iterations "
        "(default 2; 0: never cut)",
    )
    trial.add_argument("--no-trial", action="store_true", help="hybrid without the trial run")
    # argparse reads a bare "-RT" as an option, so it is one: `--setting -RT` lands here.
    backend.add_argument("-RT", dest="minus_rt", action="store_true", help=argparse.SUPPRESS)
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    args.setting = "-RT" if args.minus_rt else (args.setting or "+RT")
    try:
        cases = select(load_cases(args.cases), args.ids)
        _check_args(args)
        render = _renderer()
        backend = make_backend(args)
    except (OSError, ValueError) as exc:
        print(f"crane-bench live: {exc}", file=sys.stderr)
        return 2
    if not cases:
        print(f"crane-bench live: no case matches --ids {args.ids!r}", file=sys.stderr)
        return 2
    with args.out.open("w", encoding="utf-8") as out:
        rows = asyncio.run(_run_all(cases, args, render, backend, out))
    # Rows were streamed in finishing order; the finished file lists them in the cases' order.
    order = {(c["id"], c["version"]): n for n, c in enumerate(cases)}
    rows.sort(key=lambda row: order[row["id"], row["version"]])
    partial = args.out.with_name(args.out.name + ".partial")
    partial.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    partial.replace(args.out)
    errors = sum(1 for row in rows if row["error"])
    print(f"{len(rows)} cases written to {args.out}, {errors} with errors", file=sys.stderr)
    if runs_trial(args):
        print(trial_summary(rows, cases), file=sys.stderr)
    return 1 if errors else 0


def runs_trial(args: argparse.Namespace) -> bool:
    return args.backend == "trial" or (args.backend == "hybrid" and not args.no_trial)


def trial_summary(rows: list[dict[str, Any]], cases: list[dict[str, Any]]) -> str:
    """The trial outcomes counted per kind, then every case whose trial neither crashed nor finished,
    with the reason (and whether the case really crashes)."""
    truth = {(c["id"], c["version"]): c.get("crash") for c in cases}
    counts: dict[str, int] = {}
    others = []
    for row in rows:
        outcome = row.get("trial") or {}
        status = outcome.get("status", "none")
        counts[status] = counts.get(status, 0) + 1
        if status not in ("crashed", "finished"):
            crash = truth.get((row["id"], row["version"]))
            others.append(
                f"  {row['id']}/{row['version']} (crash: {crash}): {status}: "
                f"{outcome.get('reason') or row.get('error') or ''}"
            )
    order = ["crashed", "finished", "blocked", "timed_out", "out_of_memory", "unavailable", "none"]
    line = ", ".join(f"{k} {counts[k]}" for k in order if k in counts)
    return "\n".join([f"trial outcomes: {line}", *others, *quick_summary(rows, truth)])


def quick_summary(rows: list[dict[str, Any]], truth: dict[tuple[str, str], Any]) -> list[str]:
    """Trials that cut a loop short (quick trials), apart: per kind of outcome, how many of the cases
    really crash and how many do not, and the seconds from the trial's start to its outcome."""
    kinds: dict[str, list[int]] = {}
    seconds: list[float] = []
    for row in rows:
        outcome = row.get("trial") or {}
        quick = outcome.get("quick") or {}
        if not quick.get("cut"):
            continue
        status = outcome.get("status")
        kind = f"crashed ({quick.get('crash')})" if status == "crashed" else str(status)
        crashes = bool(truth.get((row["id"], row["version"])))
        kinds.setdefault(kind, [0, 0])[0 if crashes else 1] += 1
        if row.get("trial_ms") is not None:
            seconds.append(row["trial_ms"] / 1000)
    if not kinds:
        return []
    seconds.sort()
    slowest = f", outcome {seconds[-1]:.1f} s after the trial started at most" if seconds else ""
    lines = [f"quick trials (a loop cut short): {sum(sum(v) for v in kinds.values())}{slowest}"]
    for kind in sorted(kinds):
        on_crash, on_fixed = kinds[kind]
        lines.append(f"  {kind}: {on_crash} on crashing cases, {on_fixed} on fixed cases")
    return lines


def load_cases(path: Path) -> list[dict[str, Any]]:
    """The suite's cases; a malformed line is an error naming the line, before any kernel starts."""
    cases = []
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                case = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{number}: not JSON: {exc}") from None
            missing = [k for k in _CASE_KEYS if not isinstance(case, dict) or k not in case]
            if missing:
                raise ValueError(f"{path}:{number}: missing {', '.join(missing)}")
            if not isinstance(case["executed_cells"], list) or not all(
                isinstance(c, str) for c in case["executed_cells"]
            ):
                raise ValueError(f"{path}:{number}: executed_cells must be a list of strings")
            for key in ("id", "version", "target_cell"):
                if not isinstance(case[key], str):
                    raise ValueError(f"{path}:{number}: {key} must be a string")
            cases.append(case)
    return cases


def select(cases: list[dict[str, Any]], pattern: str) -> list[dict[str, Any]]:
    return [
        c
        for c in cases
        if fnmatch.fnmatch(c["id"], pattern) or fnmatch.fnmatch(f"{c['id']}/{c['version']}", pattern)
    ]


def _check_args(args: argparse.Namespace) -> None:
    if not set(args.categories) <= set("SRV"):
        raise ValueError(f"--categories must be a subset of SRV, got {args.categories!r}")
    if args.jobs < 1:
        raise ValueError("--jobs must be at least 1")
    if args.max_columns is not None and args.max_columns < 1:
        raise ValueError("--max-columns must be at least 1")
    if args.votes is not None and args.votes < 1:
        raise ValueError("--votes must be at least 1")
    if not args.out.parent.is_dir():
        raise ValueError(f"--out: directory {args.out.parent} does not exist")
    if args.out.exists() and args.out.resolve() == args.cases.resolve():
        raise ValueError("--out names the cases file; it would be overwritten")


def _renderer() -> Callable[[dict[str, Any], str], str]:
    try:
        from ..runtime_text import render
    except ImportError as exc:
        raise ValueError(f"the runtime-text renderer is unavailable: {exc}") from None
    renderer: Callable[[dict[str, Any], str], str] = render
    return renderer


def make_backend(args: argparse.Namespace) -> Any:
    """The prediction backend named by --backend, or None for `none` (predictions stay null)."""
    if args.backend == "none":
        return None
    try:
        from .backends import make_backend as factory
    except ImportError as exc:
        raise ValueError(f"--backend {args.backend}: backends are unavailable ({exc})") from None
    if args.backend in ("checks", "trial"):
        return factory(args.backend)
    if args.backend == "replay":
        return factory("replay", path=args.replay, setting=args.setting)
    return factory(
        args.backend,
        model=args.model,
        votes=args.votes,
        api_base=args.api_base,
        timeout=args.timeout,
        response_format=args.response_format,
        runtime=args.setting == "+RT",
        categories=args.categories,
    )


async def _run_all(
    cases: list[dict[str, Any]],
    args: argparse.Namespace,
    render: Callable[[dict[str, Any], str], str],
    backend: Any,
    out: IO[str],
) -> list[dict[str, Any]]:
    slots = asyncio.Semaphore(args.jobs)
    rows: list[dict[str, Any]] = []
    started = time.monotonic()

    async def one(case: dict[str, Any]) -> None:
        async with slots:
            t0 = time.monotonic()
            row = await run_case(case, args, render, backend)
        rows.append(row)
        # Written as each case finishes, so an interrupted run keeps what it measured.
        out.write(json.dumps(row) + "\n")
        out.flush()
        status = f"error: {row['error']}" if row["error"] else f"{row['extraction_ms']} ms"
        print(
            f"[{len(rows)}/{len(cases)}] {case['id']}/{case['version']} {status} "
            f"({time.monotonic() - t0:.1f} s, total {time.monotonic() - started:.0f} s)",
            file=sys.stderr,
            flush=True,
        )

    await asyncio.gather(*(one(case) for case in cases))
    return rows


async def run_case(
    case: dict[str, Any],
    args: argparse.Namespace,
    render: Callable[[dict[str, Any], str], str],
    backend: Any,
) -> dict[str, Any]:
    """One results line: run the executed cells in a fresh kernel, extract for the target, predict."""
    row: dict[str, Any] = {
        "id": case["id"],
        "version": case["version"],
        "runtime_text": "",
        "extraction_ms": None,
        "prediction": None,
        "error": None,
        "trial": None,
    }
    options: dict[str, Any] = {}
    trial: TrialOutcome | None = None
    if args.max_columns is not None:
        options["max_columns"] = args.max_columns
    if args.docs:
        options["docs"] = True
    try:
        with tempfile.TemporaryDirectory(prefix="crane-live-", ignore_cleanup_errors=True) as cwd:
            async with fresh_kernel(cwd=cwd) as (_, kc):
                # Install the probe first: a notebook pays that once per kernel, not per extraction.
                await extract(kc, "", timeout=args.extract_timeout)
                for number, cell in enumerate(case["executed_cells"]):
                    try:
                        await run_cell(kc, cell, timeout=args.cell_timeout)
                    except (CellFailed, TimeoutError) as exc:
                        row["error"] = f"executed cell {number}: {exc}"
                        return row
                t0 = time.perf_counter()
                result = await extract(kc, case["target_cell"], options, timeout=args.extract_timeout)
                row["extraction_ms"] = round((time.perf_counter() - t0) * 1000, 2)
                if runs_trial(args) and trials.parses(case["target_cell"]):
                    # After the extraction, so the trial's CPU does not slow the probe being measured.
                    budget = trials.TrialOptions(
                        budget_s=args.trial_budget, memory_mb=args.trial_memory, quick_k=args.trial_quick
                    )
                    t1 = time.perf_counter()
                    trial = await trials.run(trials.on_client(kc), case["target_cell"], budget)
                    row["trial"] = trial.model_dump(exclude_none=True)
                    row["trial_ms"] = round((time.perf_counter() - t1) * 1000, 2)
    except ExtractError as exc:
        row["error"] = f"extract: {type(exc).__name__}: {exc}"
        return row
    except RuntimeError as exc:  # jupyter_client: the kernel did not start or answer
        row["error"] = f"kernel: {exc}"
        return row
    try:
        row["runtime_text"] = render(result, args.categories)
    except Exception as exc:  # a renderer bug on one case must not end the run
        row["error"] = f"render: {type(exc).__name__}: {exc}"
        return row
    if backend is not None:
        try:
            row["prediction"] = await _predict(backend, case, row["runtime_text"], result, args, trial)
        except Exception as exc:  # one failing request must not end the other cases' run
            row["error"] = f"predict: {type(exc).__name__}: {exc}"
    return row


async def _predict(
    backend: Any,
    case: dict[str, Any],
    runtime_text: str,
    result: dict[str, Any],
    args: argparse.Namespace,
    trial: TrialOutcome | None = None,
) -> dict[str, Any]:
    from ..models import PredictionRequest
    from ..prompt import render_docs

    with_runtime = args.setting == "+RT"
    request = PredictionRequest(
        case_id=f"{case['id']}/{case['version']}",
        executed_cells=case["executed_cells"],
        target_cell=case["target_cell"],
        runtime_text=runtime_text if with_runtime else None,
        runtime=result if with_runtime else None,
        docs_text=render_docs(result["docs"]) if args.docs and result.get("docs") else None,
        trial=trial,
    )
    verdict = await backend.predict(request)
    return {"detection": verdict.detection, "reasoning": verdict.reasoning, "source": verdict.source}
