#!/usr/bin/env python3
"""The run from the top measured: crane-check (quick mode) against real runs of the notebooks and nbmake.

    python3 scripts/notebook_corpus.py DEST --manifest suites/notebooks/from-top-dev.json
    python3 suites/notebooks/hidden_state_dev.py DEST
    python3 suites/notebooks/score_from_top.py run DEST --out RESULTS [--only truth,check,nbmake]
        [--match TEXT]
    python3 suites/notebooks/score_from_top.py score DEST --out RESULTS [--json]
    python3 suites/notebooks/score_from_top.py nompl DEST
        # then run/score with --diag (a diagnostic, not the score)

Every subcommand takes `--manifest M --variants MODULE` (default suites/notebooks/from-top-dev.json and
hidden_state_dev); the blind corpus is `--manifest suites/notebooks/from-top-blind.json --variants
hidden_state_blind` (materialised by notebook_corpus.py DEST --manifest suites/notebooks/from-top-blind.json,
then hidden_state_blind.py DEST).

`run` measures every notebook of the manifest and every variant of the variants module, one measurement at a
time, and keeps one JSON file per notebook and method under RESULTS (an existing file is kept: delete it to
measure again):

- truth: a real run from the top in a fresh kernel of this interpreter (nbclient, the notebook's folder as
  working directory, every cell run even after an error, 900 s a cell, interrupted past it). Per cell: the
  error (ename, evalue) and its wall time from the kernel's own timestamps. `runall_s` is the time from the
  kernel's start to the end of the first cell that raised (what Run All, nbmake and crane-check stop at),
  `total_s` the whole run.
- check: `python -m crane_jupyterlab.notebook_check NB --json` (the `crane-check` console script), its wall
  time and report.
- nbmake: `pytest --nbmake --nbmake-kernel=python3 --nbmake-timeout=900 NB` run from DEST, its wall time and
  exit status (nbmake stops at the first error, as Run All does).

`score` compares them per notebook. Cells are numbered among the notebook's code cells, from 1.

- found: the check claims its first crash at the real run's first crashing cell with the same exception class;
- seen, not claimed: the check observed the real first crash (same cell and exception) but did not claim it,
  as one that may come from a loop it cut above (crane-check prints it with "not claimed");
- false crash: the check claims a crash at a cell the real run ran without an error before its first crash (or
  in a notebook whose real run never fails);
- wrong exception: same cell, another class; ran past: the check claims a crash only after the real first
  crash (that cell did not fail in the check); missed: no claim at all (the check's status at the real crash
  cell and why it stopped are shown);
- time: the check's wall time against the real Run All time (goal <= 1/5 where that is >= 60 s) and nbmake's;
- hidden (variants): the real first crash is a NameError for a name some code cell of the original binds at
  top level, i.e. the live kernel ("the original run top to bottom, then the change") still holds it.

Diagnostic (`nompl`, then `run --diag --only check` and `score --diag`): the same notebooks with each
`%matplotlib` line blanked (the line kept, so line numbers hold), checked again and scored against the
originals' real runs. In a kernel `%matplotlib inline` only selects the backend ipykernel already uses, so the
real outcomes are the originals'; the check's worker (a plain IPython shell) raises NotImplementedError on it.
This shows what the check does past that line; it is not the measurement of the check as it is.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import json
import os
import re
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))

CELL_TIMEOUT = 900
MANIFEST = HERE / "from-top-dev.json"
VARIANTS = "hidden_state_dev"


MPL_LINE = re.compile(r"^\s*%matplotlib\b.*$", re.MULTILINE)


def nompl_path(path: Path) -> Path:
    return path.with_name(f"{path.stem}__no-mpl-magic.ipynb")


def notebooks(
    dest: Path, diag: bool = False, manifest_path: Path = MANIFEST, variants: str = VARIANTS
) -> list[dict]:
    """The manifest's notebooks, then the variants of a module of this folder (VARIANTS, variant_path)."""
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    hidden = importlib.import_module(variants)
    out = [
        {
            "name": e["dest"],
            "path": dest / e["dest"],
            "repo": e["repo"],
            "commit": e["commit"],
            "source_path": e["path"],
            "variant": None,
        }
        for e in manifest["notebooks"]
    ]
    for spec in hidden.VARIANTS:
        path = hidden.variant_path(dest, spec)
        out.append({"name": str(path.relative_to(dest)), "path": path, "variant": spec})
    if not diag:
        return out
    copies = []
    for nb in out:
        path = nompl_path(nb["path"])
        if path.exists():
            copies.append({**nb, "name": str(path.relative_to(dest)), "path": path, "truth_of": nb["name"]})
    return copies


def cmd_nompl(args: argparse.Namespace) -> int:
    """Write STEM__no-mpl-magic.ipynb beside each notebook that has a %matplotlib line (blanked there)."""
    for nb in notebooks(args.dest, False, args.manifest, args.variants):
        doc = json.loads(nb["path"].read_text(encoding="utf-8"))
        changed = 0
        for cell in doc["cells"]:
            if cell.get("cell_type") != "code":
                continue
            src = cell.get("source", "")
            text = "".join(src) if isinstance(src, list) else src
            new = MPL_LINE.sub("", text)
            if new != text:
                cell["source"] = new.splitlines(keepends=True)
                changed += 1
        if changed:
            out = nompl_path(nb["path"])
            out.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
            print(f"{changed} cell(s) {out.relative_to(args.dest)}")
    return 0


def result_file(out: Path, name: str, method: str) -> Path:
    return out / f"{re.sub(r'[^A-Za-z0-9_.-]+', '_', name)}.{method}.json"


def code_numbers(path: Path) -> dict[int, int]:
    """Index among all cells -> number among code cells (from 1)."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    numbers, n = {}, 0
    for i, cell in enumerate(doc["cells"]):
        if cell.get("cell_type") == "code":
            n += 1
            numbers[i] = n
    return numbers


def _ts(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value.replace("Z", "+00:00")) if value else None


def run_truth(path: Path) -> dict:
    import nbclient
    import nbformat

    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb,
        timeout=CELL_TIMEOUT,
        kernel_name="python3",
        allow_errors=True,
        interrupt_on_timeout=True,
        record_timing=True,
        resources={"metadata": {"path": str(path.parent)}},
    )
    load = os.getloadavg()[0]
    start = datetime.now(timezone.utc)
    t0 = time.monotonic()
    error = None
    try:
        client.execute()
    except Exception as exc:  # a dead kernel, a timeout it could not interrupt
        error = f"{type(exc).__name__}: {exc}"[:500]
    total = time.monotonic() - t0
    numbers = code_numbers(path)
    cells = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        timing = cell.metadata.get("execution", {})
        began, ended = _ts(timing.get("iopub.status.busy")), _ts(timing.get("shell.execute_reply"))
        err = next((o for o in cell.get("outputs", []) if o.get("output_type") == "error"), None)
        cells.append(
            {
                "index": i,
                "number": numbers[i],
                "ran": ended is not None,
                "seconds": round((ended - began).total_seconds(), 3) if began and ended else None,
                "end_s": round((ended - start).total_seconds(), 3) if ended else None,
                "ename": err.get("ename") if err else None,
                "evalue": (err.get("evalue") or "")[:300] if err else None,
            }
        )
    first = next((c for c in cells if c["ename"]), None)
    return {
        "total_s": round(total, 2),
        "runall_s": first["end_s"] if first else round(total, 2),
        "first_crash": first,
        "cells": cells,
        "error": error,
        "load": round(load, 2),
    }


def run_check(path: Path) -> dict:
    load = os.getloadavg()[0]
    t0 = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "crane_jupyterlab.notebook_check", str(path), "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    seconds = time.monotonic() - t0
    report = None
    for line in done.stdout.splitlines():
        if line.startswith("{"):
            report = json.loads(line)
    return {
        "seconds": round(seconds, 2),
        "rc": done.returncode,
        "report": report,
        "stderr": done.stderr[-2000:],
        "load": round(load, 2),
    }


def run_nbmake(path: Path, dest: Path) -> dict:
    load = os.getloadavg()[0]
    t0 = time.monotonic()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--nbmake",
            "--nbmake-kernel=python3",
            f"--nbmake-timeout={CELL_TIMEOUT}",
            "-p",
            "no:cacheprovider",
            "-q",
            str(path.relative_to(dest)),
        ],
        capture_output=True,
        text=True,
        cwd=dest,
        check=False,
    )
    seconds = time.monotonic() - t0
    return {
        "seconds": round(seconds, 2),
        "rc": done.returncode,
        "tail": done.stdout[-3000:],
        "load": round(load, 2),
    }


def cmd_run(args: argparse.Namespace) -> int:
    args.out.mkdir(parents=True, exist_ok=True)
    methods = args.only.split(",")
    for nb in notebooks(args.dest, args.diag, args.manifest, args.variants):
        if args.match and args.match not in nb["name"]:
            continue
        for method in methods:
            target = result_file(args.out, nb["name"], method)
            if target.exists():
                continue
            print(f"{datetime.now():%H:%M:%S} {method:6s} {nb['name']}", flush=True)
            if method == "truth":
                result = run_truth(nb["path"])
            elif method == "check":
                result = run_check(nb["path"])
            elif method == "nbmake":
                result = run_nbmake(nb["path"], args.dest)
            else:
                raise SystemExit(f"unknown method {method}")
            result["notebook"] = nb["name"]
            target.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
            print(f"    {result.get('seconds', result.get('total_s'))} s", flush=True)
    return 0


def top_level_names(path: Path) -> set[str]:
    """Names the notebook's code cells bind at top level (magics and shell lines dropped)."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for cell in doc["cells"]:
        if cell.get("cell_type") != "code":
            continue
        src = cell.get("source", "")
        text = "".join(src) if isinstance(src, list) else src
        text = "\n".join(
            "" if line.lstrip().startswith(("%", "!")) or line.rstrip().endswith("?") else line
            for line in text.splitlines()
        )
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        names.update(_bound(tree.body))
    return names


def _bound(body: list[ast.stmt]) -> set[str]:
    """Names a block binds in its own scope: not inside functions, classes, lambdas or comprehensions."""
    names: set[str] = set()
    scopes = (
        ast.FunctionDef,
        ast.AsyncFunctionDef,
        ast.ClassDef,
        ast.Lambda,
        ast.ListComp,
        ast.SetComp,
        ast.DictComp,
        ast.GeneratorExp,
    )

    def visit(node: ast.AST) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            return
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
            return
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        if isinstance(node, scopes):
            return
        for child in ast.iter_child_nodes(node):
            visit(child)

    for stmt in body:
        visit(stmt)
    return names


def _missing_name(message: str | None) -> str | None:
    m = re.search(r"name '([^']+)' is not defined", message or "")
    return m.group(1) if m else None


def _depends(step: dict) -> bool:
    quick = step.get("quick") or {}
    return bool(step.get("after_cut")) or (bool(quick.get("cut")) and quick.get("crash") != "certain")


def score_one(nb: dict, out: Path, dest: Path) -> dict:
    def load(method: str) -> dict | None:
        f = result_file(out, nb["name"] if method == "check" else nb.get("truth_of", nb["name"]), method)
        return json.loads(f.read_text(encoding="utf-8")) if f.exists() else None

    truth, check, nbmake = load("truth"), load("check"), load("nbmake")
    row: dict = {"notebook": nb["name"], "variant": (nb["variant"] or {}).get("kind")}
    if not truth:
        return {**row, "missing": "truth"}
    numbers = code_numbers(nb["path"])
    real = truth["first_crash"]
    row["real"] = (
        {"cell": real["number"], "exception": real["ename"], "message": real["evalue"]} if real else None
    )
    row["real_runall_s"], row["real_total_s"] = truth["runall_s"], truth["total_s"]
    row["nbmake_s"] = nbmake["seconds"] if nbmake else None
    row["nbmake_failed"] = (nbmake["rc"] != 0) if nbmake else None
    if not check or not check.get("report"):
        return {**row, "missing": "check", "check_stderr": (check or {}).get("stderr")}
    report = check["report"]
    row["check_s"], row["check_status"] = check["seconds"], report.get("status")
    steps = report.get("cells") or []
    counts: dict[str, int] = {}
    for s in steps:
        counts[s["status"]] = counts.get(s["status"], 0) + 1
    row["check_counts"] = counts
    claim = report.get("first_crash")
    row["check"] = (
        {
            "cell": numbers[claim["index"]],
            "exception": claim.get("exception"),
            "message": str(claim.get("message") or "")[:300],
            "line": claim.get("line"),
        }
        if claim
        else None
    )
    unclaimed = [s for s in steps if s["status"] == "crashed" and _depends(s)]
    row["check_unclaimed"] = [
        {"cell": numbers[s["index"]], "exception": s.get("exception")} for s in unclaimed
    ]
    last = steps[-1] if steps else None
    stopped = next((s for s in steps if s["status"] not in ("ran", "shortened", "skipped")), None)
    row["check_stopped"] = (
        {
            "cell": numbers[stopped["index"]],
            "status": stopped["status"],
            "reason": str(stopped.get("reason") or stopped.get("exception") or "")[:200],
        }
        if stopped
        else None
    )
    row["check_last_cell"] = numbers[last["index"]] if last else None
    if report.get("reason"):
        row["check_reason"] = report["reason"]
    real_cell = real["number"] if real else None
    verdict = "ok"
    if claim:
        c = row["check"]["cell"]
        if real_cell is None or c < real_cell:
            verdict = "false crash"
        elif c == real_cell:
            verdict = "found" if row["check"]["exception"] == real["ename"] else "wrong exception"
        else:
            verdict = "ran past"
    elif real_cell is not None:
        seen = any(u["cell"] == real_cell and u["exception"] == real["ename"] for u in row["check_unclaimed"])
        verdict = "seen, not claimed" if seen else "missed"
    row["verdict"] = verdict
    if real_cell is not None:
        at = next((s for s in steps if numbers[s["index"]] == real_cell), None)
        row["check_at_real_cell"] = at["status"] if at else "not in report"
    if nb["variant"]:
        spec = nb["variant"]
        original = dest / spec["original"]
        name = _missing_name(real["evalue"]) if real and real["ename"] == "NameError" else None
        row["hidden"] = {
            "name": name,
            "original_defines": bool(name and name in top_level_names(original)),
            "check_names_it": bool(name and claim and name == _missing_name(str(claim.get("message")))),
            "expected": spec["expect"],
            "as_expected": bool(
                real
                and real["number"] == spec["expect"]["cell"]
                and real["ename"] == spec["expect"]["exception"]
                and name == spec["expect"]["name"]
            ),
        }
    # Did the check get as far as the real run (to its first crash, or through a notebook that runs)?
    executed = {
        numbers[s["index"]] for s in steps if s["status"] in ("ran", "shortened", "crashed", "skipped")
    }
    row["check_reached"] = real_cell in executed if real_cell is not None else row["check_status"] == "ran"
    ref = row["real_runall_s"]
    row["check_over_real"] = round(row["check_s"] / ref, 3) if ref else None
    row["check_over_nbmake"] = round(row["check_s"] / row["nbmake_s"], 3) if row["nbmake_s"] else None
    return row


def cmd_score(args: argparse.Namespace) -> int:
    rows = [
        score_one(nb, args.out, args.dest)
        for nb in notebooks(args.dest, args.diag, args.manifest, args.variants)
    ]
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0

    def crash(c: dict | None) -> str:
        return f"[{c['cell']}] {c['exception']}" if c else "-"

    def num(x: float | None) -> str:
        return f"{x:.1f}" if isinstance(x, (int, float)) else "-"

    print(
        f"{'notebook':62s} {'real RA':>8s} {'real all':>8s} {'check':>6s} {'nbmake':>7s}  "
        f"{'real first crash':24s} {'check first crash':24s} {'check says':10s} verdict"
    )
    for r in rows:
        if r.get("missing") == "truth":
            print(f"{r['notebook'][-62:]:62s} (no truth yet)")
            continue
        print(
            f"{r['notebook'][-62:]:62s} {num(r['real_runall_s']):>8s} {num(r['real_total_s']):>8s} "
            f"{num(r.get('check_s')):>6s} {num(r.get('nbmake_s')):>7s}  {crash(r.get('real')):24s} "
            f"{crash(r.get('check')):24s} {r.get('check_status')!s:10s} "
            f"{r.get('verdict', r.get('missing'))}"
        )
        extra = []
        if r.get("check_stopped") and r.get("verdict") != "found":
            s = r["check_stopped"]
            extra.append(f"check stopped at [{s['cell']}] {s['status']}: {s['reason']}")
        if r.get("check_unclaimed"):
            extra.append("unclaimed: " + ", ".join(crash(u) for u in r["check_unclaimed"]))
        if r.get("hidden"):
            h = r["hidden"]
            extra.append(
                f"hidden name {h['name']!r}: original defines it {h['original_defines']}, check names it "
                f"{h['check_names_it']}, as predicted {h['as_expected']}"
            )
        for e in extra:
            print(f"{'':64s}{e}")
    scored = [r for r in rows if "verdict" in r]
    real_crashes = [r for r in scored if r.get("real")]
    found = [r for r in real_crashes if r["verdict"] == "found"]
    false = [r for r in scored if r["verdict"] == "false crash"]
    long_ = [r for r in scored if (r["real_runall_s"] or 0) >= 60]
    print()
    print(f"notebooks scored: {len(scored)} ({sum(1 for r in scored if r['variant'])} variants)")
    print(f"real first crashes found (same cell and exception): {len(found)}/{len(real_crashes)}")
    for v in ("seen, not claimed", "wrong exception", "ran past", "missed"):
        hit = [r["notebook"] for r in scored if r["verdict"] == v]
        if hit:
            print(f"  {v}: {len(hit)}: {', '.join(hit)}")
    print(f"false crashes: {len(false)}" + (f" ({', '.join(r['notebook'] for r in false)})" if false else ""))
    tot = {
        k: sum(r.get(k) or 0 for r in scored)
        for k in ("real_runall_s", "real_total_s", "check_s", "nbmake_s")
    }
    print(
        f"time, all scored: real Run All {tot['real_runall_s']:.0f} s, "
        f"real all cells {tot['real_total_s']:.0f} s, "
        f"check {tot['check_s']:.0f} s, nbmake {tot['nbmake_s']:.0f} s"
    )
    if long_:
        ok = [
            r
            for r in long_
            if r["check_reached"] and r["check_over_real"] is not None and r["check_over_real"] <= 0.2
        ]
        print(
            f"real Run All >= 60 s: {len(long_)} notebooks; "
            f"check got as far and took <= 1/5 of it on {len(ok)}; ratios "
            + ", ".join(
                f"{r['notebook'].split('/')[-1]} {r['check_over_real']}"
                + (
                    ""
                    if r["check_reached"]
                    else f" (stopped early at [{(r['check_stopped'] or {}).get('cell')}])"
                )
                for r in long_
            )
        )
    hidden = [r for r in scored if r.get("hidden")]
    if hidden:
        print(
            f"hidden-state variants: {len(hidden)}; "
            "real first crash a NameError for a name the original defines: "
            f"{sum(r['hidden']['original_defines'] for r in hidden)}; the check names it: "
            f"{sum(r['hidden']['check_names_it'] for r in hidden)}; as predicted blind: "
            f"{sum(r['hidden']['as_expected'] for r in hidden)}"
        )
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("dest", type=Path)
    r.add_argument("--out", type=Path, required=True)
    r.add_argument("--only", default="truth,check,nbmake")
    r.add_argument("--match", default="")
    r.add_argument("--diag", action="store_true", help="the __no-mpl-magic copies of `nompl`")
    s = sub.add_parser("score")
    s.add_argument("dest", type=Path)
    s.add_argument("--out", type=Path, required=True)
    s.add_argument("--json", action="store_true")
    s.add_argument("--diag", action="store_true", help="the __no-mpl-magic copies of `nompl`")
    n = sub.add_parser("nompl")
    n.add_argument("dest", type=Path)
    for q in (r, s, n):
        q.add_argument("--manifest", type=Path, default=MANIFEST, help="default: from-top-dev.json")
        q.add_argument(
            "--variants", default=VARIANTS, help="a module of this folder (default: hidden_state_dev)"
        )
    args = p.parse_args()
    args.dest = args.dest.resolve()
    return {"run": cmd_run, "score": cmd_score, "nompl": cmd_nompl}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
