"""`crane-bench chain CASES --corpus DIR`: the chain against what an edit really breaks below.

A case (suites/chain/cases.jsonl; suites/chain/README.md) names a notebook of the corpus, an early code
cell by its position (markdown cells count) and an edit of it (`{"old", "new"}`: the old text occurs once
in the cell). For each case, in a fresh kernel of this interpreter whose working directory is the
notebook's folder:

1. the code cells above the edited one run for real, in order (a cell that raises is recorded, and the
   next one runs, as a user would go on);
2. the service analyses the edited cell as the server does (`AnalysisService`, trials on as `crane-bench
   notebooks --trial auto` sets them up, replicas and fixes off) with `below` = the code cells after it;
   the chain's outcome per cell is recorded, with `timing.below_ms` and the analysis' wall time;
3. the truth: in the same kernel the edited cell, then the cells below, run for real, in order, until the
   first that does not run to its end (an error; one that runs past `--timeout` is interrupted and
   ends the run too).

A baseline also runs each notebook once as it is (every code cell in order, going on after errors), so a
real crash below an edit can be told apart from one the notebook has anyway (`pre_existing`: the same cell
raised the same exception in the unedited run). `--no-baseline` skips it.

One JSON line per case goes to `--out`: `id`, `split`, `library`, `kind`, `guess`, `notebook`, `cell`,
`edit`, `above` (`cells`, `errors`: [{index, exception}], `ms`), `analysis` (`status`, `trial`: the edited
cell's trial status, exception and reason, `verdict`, `analyze_ms`, `below_ms`, `trial_ms`), `chain`: one
entry per cell below (`index`, `status`, `exception`, `message`, `line`, `reads`, `elapsed_ms`, `reason`,
`after_cut`, `without_edit`, `cut`: the step's own loops were cut), `truth` (`edited`: the edited cell's
real run; `below`: [{index, status, exception, message, line, ms}] for the cells that ran), `baseline`
(index -> {status, exception} of the unedited run, or null), `score` (chain_score.py), `wall_s`.

At the end a summary (chain_score.py): the real crashes below the edits and how many the chain found
(same cell, same exception), the chain's claims of a crash that depends on no cut loop against the real
runs (contradicted: goal 0), its statuses (skipped, not reached, ...), chain time p50/p95 (`below_ms`)
and the analysis wall time p50/p95. `--summarize FILE` prints the summary of an earlier --out file.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import IO, Any

from . import chain_score
from .kernels import execute, fresh_kernel, halted, run_cells
from .notebook_summary import load
from .notebooks import KERNEL_ID, _env, _OneKernel, add_shared_options, check_outputs, code_cells, report

SPLITS = ("dev", "unseen", "all")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "chain",
        help="edits of early notebook cells: what the chain says of the cells below against a real run",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("cases", nargs="?", type=Path, help="cases file (JSON lines, suites/chain/cases.jsonl)")
    p.add_argument("--corpus", type=Path, help="folder the cases' notebooks were materialised in")
    p.add_argument("--split", choices=SPLITS, default="dev", help="which cases to run (default dev)")
    p.add_argument("--ids", default="", help="only these case ids (comma-separated)")
    p.add_argument("--out", type=Path, help="results file to write (JSON lines, one per case)")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per real cell (default 60)")
    p.add_argument("--trial-budget", type=float, default=5.0, help="seconds per trial (default 5)")
    p.add_argument(
        "--chain-budget", type=float, default=10.0, help="seconds for the chain (the server's default, 10)"
    )
    p.add_argument("--no-baseline", action="store_true", help="do not run each notebook once unedited")
    add_shared_options(p)
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    try:
        if args.summarize is not None:
            rows = load(args.summarize)
        else:
            cases = select(read_cases(args.cases), args.split, args.ids)
            env = _env(args.env)
            _check_args(args)
    except (OSError, ValueError) as exc:
        print(f"crane-bench chain: {exc}", file=sys.stderr)
        return 2
    if args.summarize is None:
        out = args.out.open("w", encoding="utf-8") if args.out else None
        try:
            rows = asyncio.run(_run_all(cases, args, env, out))
        finally:
            if out is not None:
                out.close()
    figures = chain_score.summarize(rows)
    return report(figures, chain_score.render(figures), args)


def _check_args(args: argparse.Namespace) -> None:
    if args.corpus is None or not args.corpus.is_dir():
        raise ValueError("--corpus must name the folder the cases' notebooks were materialised in")
    if min(args.timeout, args.trial_budget, args.chain_budget) <= 0:
        raise ValueError("--timeout, --trial-budget and --chain-budget must be positive")
    check_outputs(args)


def read_cases(path: Path | None) -> list[dict[str, Any]]:
    """The cases of a JSON-lines file; ValueError names a line that is not a case."""
    if path is None:
        raise ValueError("name the cases file (suites/chain/cases.jsonl)")
    cases = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            case = json.loads(line)
            edit = case["edit"]
            ok = isinstance(case["id"], str) and isinstance(case["notebook"], str)
            ok = ok and isinstance(case["cell"], int) and isinstance(edit["old"], str)
            ok = ok and isinstance(edit["new"], str) and bool(edit["old"])
        except (json.JSONDecodeError, KeyError, TypeError):
            ok = False
        if not ok:
            raise ValueError(f"{path}:{number}: not a case (id, notebook, cell, edit: {{old, new}})")
        cases.append(case)
    return cases


def select(cases: list[dict[str, Any]], split: str, ids: str) -> list[dict[str, Any]]:
    wanted = {i for i in ids.split(",") if i}
    chosen = [
        c for c in cases if (split == "all" or c.get("split") == split) and (not wanted or c["id"] in wanted)
    ]
    if not chosen:
        raise ValueError(f"no case in split {split!r}" + (f" with ids {sorted(wanted)}" if wanted else ""))
    return chosen


def edited_cells(
    path: Path, case: dict[str, Any]
) -> tuple[list[tuple[int, str]], str, list[tuple[int, str]]]:
    """(code cells above, the edited cell's new source, code cells below); ValueError when the case does
    not fit the notebook."""
    cells = code_cells(path)
    target = dict(cells).get(case["cell"])
    if target is None:
        raise ValueError(f"{case['id']}: cell {case['cell']} is not a non-empty code cell of {path}")
    old, new = case["edit"]["old"], case["edit"]["new"]
    if target.count(old) != 1:
        raise ValueError(f"{case['id']}: the edit's old text occurs {target.count(old)} times in the cell")
    above = [(i, s) for i, s in cells if i < case["cell"]]
    below = [(i, s) for i, s in cells if i > case["cell"]]
    return above, target.replace(old, new, 1), below


async def _run_all(
    cases: list[dict[str, Any]], args: argparse.Namespace, env: dict[str, str], out: IO[str] | None
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    baselines: dict[str, dict[str, Any] | None] = {}
    started = time.monotonic()
    for n, case in enumerate(cases, 1):
        path = (args.corpus / case["notebook"]).resolve()
        t0 = time.monotonic()
        if not args.no_baseline and case["notebook"] not in baselines:
            baselines[case["notebook"]] = await baseline(path, args, env)
        row = await run_case(case, path, args, env)
        row["baseline"] = baselines.get(case["notebook"])
        row["score"] = chain_score.score(row)
        row["wall_s"] = round(time.monotonic() - t0, 1)
        rows.append(row)
        if out is not None:  # written as each case ends, so an interrupted run keeps what it measured
            out.write(json.dumps(row) + "\n")
            out.flush()
        print(
            f"[{n}/{len(cases)}] {case['id']}: {chain_score.one_line(row)} ({row['wall_s']:.0f} s, "
            f"total {time.monotonic() - started:.0f} s)",
            file=sys.stderr,
            flush=True,
        )
    return rows


def _service(manager: Any, args: argparse.Namespace) -> Any:
    from ..server.config import ServiceConfig
    from ..server.service import AnalysisService

    config = ServiceConfig(
        trial="auto",
        trial_budget=args.trial_budget,
        chain_budget=args.chain_budget,
        replicas=False,
        fixes=False,
    )
    return AnalysisService(config, _OneKernel(manager))


def _case_row(case: dict[str, Any]) -> dict[str, Any]:
    keys = ("id", "split", "library", "kind", "guess", "notebook", "cell", "edit")
    return {k: case.get(k) for k in keys} | {"above": None, "analysis": None, "chain": None, "truth": None}


async def run_case(
    case: dict[str, Any], path: Path, args: argparse.Namespace, env: dict[str, str]
) -> dict[str, Any]:
    """The cells above for real, the analysis with the chain, then the truth; one result row."""
    row = _case_row(case)
    try:
        above, edited, below = edited_cells(path, case)
    except (OSError, ValueError) as exc:
        row["error"] = str(exc)
        return row
    try:
        async with fresh_kernel(cwd=str(path.parent), env=env) as (manager, kc):
            t0 = time.perf_counter()
            ran = await run_cells(kc, manager, above, args.timeout)
            errors = [
                {"index": index, "status": run["status"], "exception": run.get("exception")}
                for index, run in ran
                if run["status"] != "ok"
            ]
            row["above"] = {"cells": len(above), "errors": errors, "ms": _ms(time.perf_counter() - t0)}
            if ran and (why := halted(ran[-1][1])):
                row["error"] = f"cell {ran[-1][0]} above: {why}"
                return row
            service = _service(manager, args)
            try:
                row["analysis"], row["chain"] = await analyse(service, edited, below)
            finally:
                await service.close()
            row["truth"] = await truth(kc, manager, edited, below, args.timeout)
    except RuntimeError as exc:  # jupyter_client: the kernel did not start or answer
        row["error"] = f"kernel failed: {exc}"
    return row


async def analyse(
    service: Any, edited: str, below: list[tuple[int, str]]
) -> tuple[dict[str, Any], list[dict[str, Any]] | None]:
    """(the analysis' record, the chain's entry per cell below, in order)."""
    from ..api import AnalyzeRequest, BelowCell

    request = AnalyzeRequest(
        kernel_id=KERNEL_ID,
        source=edited,
        cell_id="edited",
        below=[BelowCell(cell_id=str(index), source=source) for index, source in below],
    )
    t0 = time.perf_counter()
    try:
        result = await service.analyze(request)
    except Exception as exc:  # the service's typed errors: recorded, the truth still runs
        return {
            "status": f"error: {type(exc).__name__}: {exc}",
            "analyze_ms": _ms(time.perf_counter() - t0),
        }, None
    analyze_ms = _ms(time.perf_counter() - t0)
    trial = result.trial
    verdict = result.verdict
    record = {
        "status": result.status,
        "analyze_ms": analyze_ms,
        "below_ms": round(result.timing.below_ms, 2),
        "trial_ms": round(result.timing.trial_ms, 2),
        "trial": None if trial is None else {
            "status": trial.status, "exception": trial.exception, "reason": trial.reason,
            "cut": trial.shortened, "worker": trial.worker is not None,
        },
        "verdict": None if verdict is None else {"detection": verdict.detection, "source": verdict.source},
    }  # fmt: skip
    entries = None
    if result.below is not None:
        entries = []
        for (index, _), entry in zip(below, result.below, strict=True):
            entries.append({
                "index": index, "status": entry.status, "exception": entry.exception,
                "message": entry.message, "line": entry.line, "reads": entry.reads,
                "elapsed_ms": entry.elapsed_ms, "reason": entry.reason, "after_cut": entry.after_cut,
                "without_edit": entry.without_edit, "cut": bool(entry.quick and entry.quick.cut),
                "observed": entry.observed,
            })  # fmt: skip
    return record, entries


def _real(run: dict[str, Any], index: int | None = None) -> dict[str, Any]:
    keys = ("status", "exception", "message", "line", "ms")
    return ({"index": index} if index is not None else {}) | {k: run.get(k) for k in keys if k in run}


async def truth(
    kc: Any, manager: Any, edited: str, below: list[tuple[int, str]], timeout: float
) -> dict[str, Any]:
    """The edited cell, then the cells below, for real, until the first that does not run to its end."""
    edited_run = await execute(kc, manager, edited, timeout)
    found: dict[str, Any] = {"edited": _real(edited_run), "below": []}
    if edited_run["status"] != "ok":
        return found
    ran = await run_cells(kc, manager, below, timeout, stop_on_error=True)
    found["below"] = [_real(run, index) for index, run in ran]
    return found


async def baseline(path: Path, args: argparse.Namespace, env: dict[str, str]) -> dict[str, Any] | None:
    """The unedited notebook, every code cell in order (going on after errors): index -> {status,
    exception}; None when the notebook or its kernel failed."""
    try:
        cells = code_cells(path)
        async with fresh_kernel(cwd=str(path.parent), env=env) as (manager, kc):
            ran = await run_cells(kc, manager, cells, args.timeout)
        return {str(i): {"status": run["status"], "exception": run.get("exception")} for i, run in ran}
    except (OSError, ValueError, RuntimeError) as exc:
        print(f"crane-bench chain: no baseline for {path}: {exc}", file=sys.stderr)
        return None


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 2)
