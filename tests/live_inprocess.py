#!/usr/bin/env python3
"""Measure the probe + renderer on the live crash suite without a kernel.

Each case runs in a fresh Python process: its executed cells are exec'd in one namespace the way a
kernel runs them (trailing expression repr'd, figures drawn and closed, `In` holding the history), then
``probe.run(target_cell, {}, ns)`` and ``runtime_text.render`` produce the runtime block. The results are
written in score.py's format and scored:

    python tests/live_inprocess.py [--suite ../shared/live] [--ids 'torch_*'] [--out results.jsonl]
                                   [--jobs 2] [--show]

Needs the live suite (read-only, never copied into the repo); exits 2 with a message when it is absent.
"""

from __future__ import annotations

import argparse
import ast
import fnmatch
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DEFAULT_SUITE = Path(os.environ.get("CRANE_LIVE_SUITE", "/work/shared/live"))


def _load(name: str, path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _run_cell(src: str, ns: dict[str, Any], name: str) -> None:
    tree = ast.parse(src, filename=name)
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    exec(compile(tree, name, "exec"), ns)
    if last is not None:
        value = eval(compile(last, name, "eval"), ns)
        if value is not None:
            repr(value)
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is not None:
        try:
            for num in plt.get_fignums():
                plt.figure(num).canvas.draw()
        finally:
            plt.close("all")


def child(case_path: str) -> None:
    """Child process: run one case's cells, probe the target, print one JSON result line."""
    case = json.loads(Path(case_path).read_text())
    probe = _load("crane_probe_live", REPO / "crane_jupyterlab" / "kernel" / "probe.py")
    runtime_text = _load("crane_runtime_text_live", REPO / "crane_jupyterlab" / "runtime_text.py")
    ns: dict[str, Any] = {"__name__": "__main__"}
    ns["In"] = [""]
    out: dict[str, Any] = {"id": case["id"], "version": case["version"], "runtime_text": "",
                           "extraction_ms": None, "prediction": None, "error": None}  # fmt: skip
    for i, cell in enumerate(case["executed_cells"]):
        ns["In"].append(cell)
        try:
            _run_cell(cell, ns, f"<cell {i}>")
        except BaseException as exc:
            out["error"] = f"setup cell {i}: {type(exc).__name__}: {exc}"
            break
    if out["error"] is None:
        t0 = time.perf_counter()
        result = probe.run(case["target_cell"], {}, ns)
        out["extraction_ms"] = round((time.perf_counter() - t0) * 1000.0, 2)
        json.dumps(result, allow_nan=False)  # the contract: plain JSON
        out["runtime_text"] = runtime_text.render(result)
        if result.get("error"):
            out["error"] = f"probe: {result['error']}"
    print("@@RESULT@@" + json.dumps(out))


def _env(tmp: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update({"MPLBACKEND": "Agg", "CUDA_VISIBLE_DEVICES": "", "TF_CPP_MIN_LOG_LEVEL": "3",
                "TF_ENABLE_ONEDNN_OPTS": "0", "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1",
                "TMPDIR": tmp, "MPLCONFIGDIR": os.path.join(tmp, "mpl")})  # fmt: skip
    return env


def run_case(case: dict[str, Any]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="crane_live_") as tmp:
        path = os.path.join(tmp, "case.json")
        Path(path).write_text(json.dumps(case))
        proc = subprocess.run([sys.executable, __file__, "--child", path], env=_env(tmp), capture_output=True,
                              text=True, timeout=180)  # fmt: skip
    for line in proc.stdout.splitlines():
        if line.startswith("@@RESULT@@"):
            return dict(json.loads(line[len("@@RESULT@@") :]))
    error = f"child failed rc={proc.returncode}: {proc.stderr[-400:]}"
    return {"id": case["id"], "version": case["version"], "runtime_text": "", "extraction_ms": None,
            "prediction": None, "error": error}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suite", type=Path, default=DEFAULT_SUITE)
    ap.add_argument("--ids", default="*")
    ap.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "crane_live_inprocess.jsonl")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--show", action="store_true", help="print every runtime text")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args.child)
        return 0
    cases_path = args.suite / "cases.jsonl"
    if not cases_path.exists():
        print(f"live suite not found at {cases_path} (set --suite or CRANE_LIVE_SUITE)", file=sys.stderr)
        return 2
    cases = [json.loads(line) for line in cases_path.read_text().splitlines() if line.strip()]
    pats = args.ids.split(",")
    cases = [c for c in cases if any(fnmatch.fnmatch(c["id"], p) for p in pats)]
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = list(pool.map(run_case, cases))
    with args.out.open("w") as fh:
        for r in results:
            fh.write(json.dumps(r) + "\n")
    if args.show:
        for r in results:
            print(f"===== {r['id']}/{r['version']} ({r['extraction_ms']} ms) {r['error'] or ''}")
            print(r["runtime_text"])
    sub_cases = args.out.with_suffix(".cases.jsonl")
    sub_cases.write_text("".join(json.dumps(c) + "\n" for c in cases))
    return subprocess.call([sys.executable, str(args.suite / "score.py"), str(sub_cases), str(args.out)])


if __name__ == "__main__":
    sys.exit(main())
