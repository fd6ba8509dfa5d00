"""`crane-check NOTEBOOK...`: will these notebooks run from the top in a fresh kernel? For CI and pre-commit.

Each notebook's code cells run in order in a fresh interpreter of the given Python (default: this one),
started in the notebook's folder with that Python's own import path (the folder first, as a kernel has
it), inside the trial's OS sandbox (no network; shell commands run inside it; `pip install` is answered
from that Python's packages; writes land in a private copy that is thrown away): the same run as "Check
the Notebook from the Top" in JupyterLab (`kernel/trial/top.py`). Quick mode cuts long loops and library
calls to a few seconds each; `--full` runs everything whole (nbmake's job, done in our sandbox). A cell
that could not run (blocked by the sandbox, unavailable) does not stop the notebook: the cells after it
that read nothing it makes still run, and the notebook counts as not fully checked. A crash after a cut
loop, or one that may need what a cell that could not run makes, is not claimed.

One line per cell, then a summary; exit status 0 when every notebook ran (possibly shortened), 1 when one
fails from the top, 2 when one could not be checked (not a notebook, no OS sandbox, the worker did not
start, the run ran out of time).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from .kernel.trial.chain import hedged

EXIT_OK, EXIT_FAILS, EXIT_UNCHECKED = 0, 1, 2


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="crane-check",
        description="Check that notebooks run from the top in a fresh kernel: each code cell in order, in a "
        "sandboxed fresh interpreter, long loops cut (quick mode) unless --full.",
        epilog="Exit status: 0 every notebook ran, 1 one fails from the top, 2 one could not be checked.",
    )
    p.add_argument("notebooks", nargs="+", type=Path, help=".ipynb files, or folders searched for them")
    p.add_argument(
        "--python", default=sys.executable, help="the interpreter to run them with (default: %(default)s)"
    )
    p.add_argument("--full", action="store_true", help="run every loop and library call whole (no cuts)")
    p.add_argument("--budget", type=float, default=300.0, help="seconds for one notebook, all cells (300)")
    p.add_argument(
        "--cell-budget",
        type=float,
        default=5.0,
        help="quick mode: seconds a cell's long loops may take before they are cut (5)",
    )
    p.add_argument("--memory-mb", type=int, default=4096, help="memory the run may use (4096)")
    p.add_argument("--json", action="store_true", help="one JSON object per notebook instead of text")
    return p


def notebooks(paths: list[Path]) -> list[Path]:
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found += sorted(p for p in path.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
        else:
            found.append(path)
    return found


def code_cells(path: Path) -> list[dict[str, Any]]:
    """The notebook's code cells as `{cell_id, source}`; ValueError for a file that is not a notebook."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        cells = doc["cells"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"not a readable notebook ({exc})") from exc
    out = []
    for index, cell in enumerate(cells):
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            source = cell.get("source", "")
            text = "".join(source) if isinstance(source, list) else str(source)
            out.append({"cell_id": cell.get("id") or str(index), "source": text, "index": index})
    return out


def import_path(python: str, folder: Path) -> list[str]:
    """`python`'s own sys.path, with the notebook's folder first as a kernel started there has it."""
    done = subprocess.run(
        [python, "-c", "import json, sys; print(json.dumps(sys.path[1:]))"],
        capture_output=True, text=True, cwd=folder, timeout=60, check=True,
    )  # fmt: skip
    return [str(folder), *json.loads(done.stdout)]


def check(path: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Run one notebook from the top; its report (`status`: ran, fails, unchecked)."""
    from .kernel.trial import control, top

    t0 = time.monotonic()
    try:
        cells = code_cells(path)
        folder = path.resolve().parent
        path_list = import_path(args.python, folder)
    except (ValueError, OSError, subprocess.SubprocessError) as exc:
        return {"notebook": str(path), "status": "unchecked", "reason": str(exc)}
    if not cells:
        return {"notebook": str(path), "status": "ran", "cells": [], "seconds": 0.0}
    opts = control._options({
        "budget_s": args.cell_budget, "chain_s": args.budget, "chain_quick": not args.full,
        "memory_mb": args.memory_mb, "private_writes": True, "quick": True,
    })  # fmt: skip
    sent = [{"cell_id": c["cell_id"], "source": c["source"]} for c in cells]
    run = top.TopRun(sent, opts, control._scratch, python=args.python)
    run.start(modules=[], cwd=str(folder), sys_path=path_list)
    while run.outcome is None:
        time.sleep(0.1)
    outcome = run.outcome
    seconds = round(time.monotonic() - t0, 2)
    if outcome.get("status") != "finished":
        why = outcome.get("reason") or outcome.get("status")
        return {"notebook": str(path), "status": "unchecked", "reason": str(why), "seconds": seconds}
    steps = outcome.get("below") or []
    results = []
    for number, (cell, step) in enumerate(zip(cells, steps, strict=False), 1):  # an early end reports fewer
        status = step.get("status")
        if status == "finished":
            status = "shortened" if (step.get("quick") or {}).get("cut") else "ran"
        elif status == "skipped":  # an empty cell: nothing else is skipped in a fresh interpreter
            status = "ran"
        results.append({**step, "status": status, "index": cell["index"], "code_cell": number})
    fails = next((r for r in results if r["status"] == "crashed" and not hedged(r)), None)
    timed = next((r for r in results if r["status"] in ("timed_out", "out_of_memory")), None)
    # a crash a cut loop may have caused, even in the last cell, leaves the notebook unchecked, not run
    doubt = any(hedged(r) for r in results)
    unreached = any(r["status"] == "not_reached" for r in results)
    unrun = any(r["status"] in ("blocked", "unavailable") for r in results)  # the run went on past them
    status = "fails" if fails else ("unchecked" if timed or doubt or unreached or unrun else "ran")
    return {"notebook": str(path), "status": status, "cells": results, "first_crash": fails,
            "seconds": seconds, "sandbox": outcome.get("sandbox"), "full": bool(args.full),
            "rerun": outcome.get("rerun"), "forecast": outcome.get("forecast")}  # fmt: skip


def duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s" if seconds >= 10 else f"{seconds:.1f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def _takes(ahead: Any, shortened: bool) -> str:
    """A shortened cell's time whole, projected from what its loops measured (` (whole: ~45 s)`)."""
    if not shortened or not isinstance(ahead, dict) or not isinstance(ahead.get("seconds"), (int, float)):
        return ""
    bound = "at least " if ahead.get("at_least") else "~"
    return f"; whole, it takes {bound}{duration(float(ahead['seconds']))}"


def _whole_line(report: dict[str, Any]) -> str:
    """The notebook's forecast: how long a full run takes to where this one ended, and its memory."""
    ahead = report.get("forecast")
    if not isinstance(ahead, dict) or not isinstance(ahead.get("seconds"), (int, float)):
        return ""
    bound = "at least " if ahead.get("at_least") else ("~" if ahead.get("basis") == "projected" else "")
    words = f"  a full run takes {bound}{duration(float(ahead['seconds']))}"
    if report.get("status") == "fails":
        words += " to its first crash"
    peak, room = ahead.get("peak_memory_mb"), ahead.get("memory_available_mb")
    if isinstance(peak, (int, float)) and isinstance(room, (int, float)):
        words += f", peaking at ~{size(peak)} of {size(room)}"
    return words


def size(mb: float) -> str:
    return f"{mb / 1024:.1f} GB" if mb >= 1024 else f"{mb:.0f} MB"


def _rerun_line(report: dict[str, Any]) -> str:
    """What became of a crash the quick run could not claim (a loop was cut above it)."""
    rerun = report.get("rerun")
    if not isinstance(rerun, dict):
        return ""
    need = rerun.get("need_s")
    where = f"code cell {int(rerun.get('cell') or 0) + 1}"  # the steps are the code cells, from 0
    if rerun.get("answered"):
        return f"  a crash at {where} that a cut loop may have caused was checked by a full run from the top"
    took = (
        f"about {need:.0f} s"
        if isinstance(need, (int, float))
        else "an unknown time (a loop of unknown length)"
    )
    if rerun.get("ran"):
        return f"  a full run to {where} did not end within the budget; run with --full and a larger --budget"
    return f"  a full run to {where} takes {took}, more than the budget leaves: run with --full to claim it"


def _line(step: dict[str, Any]) -> str:
    # numbered among the code cells, as Run All meets them (`index` in --json counts every cell)
    where = f"code cell {step['code_cell']}"
    ms = step.get("elapsed_ms")
    took = f" ({ms / 1000:.1f} s)" if isinstance(ms, (int, float)) else ""
    status = step["status"]
    if status == "crashed":
        tail = " (may come from a cut loop above: not claimed)" if hedged(step) else ""
        return (
            f"  {where} crashed at line {step.get('line')}: {step.get('exception')}: "
            f"{str(step.get('message') or '').splitlines()[0] if step.get('message') else ''}{took}{tail}"
        )
    if status in ("ran", "shortened"):
        return f"  {where} {status}{took}{_takes(step.get('forecast'), status == 'shortened')}"
    return f"  {where} {status.replace('_', ' ')}: {step.get('reason') or ''}".rstrip(": ")


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    os.environ.setdefault("MPLBACKEND", "agg")
    reports = [check(path, args) for path in notebooks(args.notebooks)]
    for report in reports:
        if args.json:
            print(json.dumps(report, default=str))
            continue
        print(
            f"{report['notebook']}: {report['status']}"
            + (f" ({report['seconds']} s)" if "seconds" in report else "")
        )
        if report.get("reason"):
            print(f"  {report['reason']}")
        for step in report.get("cells") or []:
            print(_line(step))
        for extra in (_rerun_line(report), _whole_line(report)):
            if extra:
                print(extra)
    counts = {s: sum(r["status"] == s for r in reports) for s in ("ran", "fails", "unchecked")}
    if not args.json:
        print(f"{len(reports)} notebooks: {counts['ran']} ran from the top, {counts['fails']} fail, "
              f"{counts['unchecked']} could not be checked")  # fmt: skip
    if counts["unchecked"]:
        return EXIT_UNCHECKED if not counts["fails"] else EXIT_FAILS
    return EXIT_FAILS if counts["fails"] else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
