"""Quick scorer of the deterministic checks (the rules, then the replica judge where they find nothing)
on JunoBench and on a live suite (developer tool).

    python -m crane_jupyterlab.bench.checkeval junobench [--dir ../shared/junobench] [-v]
    python -m crane_jupyterlab.bench.checkeval live [--dir ../shared/live] [--ids 'torch_*'] [-v]
    python -m crane_jupyterlab.bench.checkeval live --cases suites/crane/dev.jsonl [-v]

`live` runs each case's executed cells in a fresh process (as the suite's verify.py does), calls the real
probe on the target cell with that namespace, and caches the probe result under
$TMPDIR/crane-checks-probe/<probe hash>/ so the checks can be re-scored in seconds. crash = positive.
"""

from __future__ import annotations

import argparse
import ast
import fnmatch
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from ..checks import check_view, replica
from ..checks.view import from_probe
from .junobench_adapter import from_junobench

# The shared suites: where CRANE_SHARED says, else ../shared beside the working directory.
SHARED = Path(os.environ.get("CRANE_SHARED") or Path.cwd().parent / "shared")


def _cases(path: Path, ids: str) -> list[dict[str, Any]]:
    if not path.exists():
        raise SystemExit(f"{path} not found: the shared benchmark data is not available here")
    with path.open() as fh:
        cases = [json.loads(line) for line in fh if line.strip()]
    pats = ids.split(",")
    return [c for c in cases if any(fnmatch.fnmatch(c["id"], p) for p in pats)]


def _score(rows: list[tuple[dict[str, Any], list[Any]]], verbose: bool) -> dict[str, Any]:
    tp = fp = fn = tn = 0
    for case, findings in rows:
        predicted, actual = bool(findings), bool(case["crash"])
        tp += predicted and actual
        fp += predicted and not actual
        fn += actual and not predicted
        tn += not predicted and not actual
        if verbose and (predicted or actual):
            mark = {(True, True): "TP", (True, False): "FP", (False, True): "FN"}[(predicted, actual)]
            print(f"{mark} {case['id']}/{case['version']}: " + (findings[0].message if findings else ""))
    precision = 100.0 * tp / (tp + fp) if tp + fp else float("nan")
    recall = 100.0 * tp / (tp + fn) if tp + fn else float("nan")
    summary = {
        "TP": tp,
        "FP": fp,
        "FN": fn,
        "TN": tn,
        "precision": round(precision, 1),
        "recall": round(recall, 1),
    }
    print(json.dumps(summary))
    return summary


def junobench(args: argparse.Namespace) -> None:
    replica.warm_up(120)  # the judge abstains while its process warms up
    rows = []
    for case in _cases(Path(args.dir) / "cases.jsonl", args.ids):
        view = from_junobench(case.get("runtime_info_obj"), case["target_cell"], case["executed_cells"])
        findings = check_view(case["target_cell"], view) or replica.judge(
            case["target_cell"], view, case["executed_cells"]
        )
        rows.append((case, findings))
    _score(rows, args.verbose)


# ----- live suite ---------------------------------------------------------------------------------------


def _probe_hash() -> str:
    from ..server.payload import payload_key

    return payload_key()


def _child(case_path: str, out_path: str) -> None:
    """Run the executed cells like a kernel, then the probe on the target cell."""
    from ..kernel import probe

    case = json.loads(Path(case_path).read_text())
    ns: dict[str, Any] = {"__name__": "__main__"}
    for i, cell in enumerate(case["executed_cells"]):
        tree = ast.parse(cell)
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        exec(compile(tree, f"<cell {i}>", "exec"), ns)
        if last is not None:
            repr(eval(compile(ast.Expression(last.value), f"<cell {i}>", "eval"), ns))
        plt = sys.modules.get("matplotlib.pyplot")
        if plt is not None:
            plt.close("all")
    result = probe.run(case["target_cell"], {}, namespace=ns)
    Path(out_path).write_text(json.dumps(result))


def _probe_result(case: dict[str, Any], cache: Path) -> dict[str, Any] | None:
    digest = hashlib.sha256(json.dumps([case["executed_cells"], case["target_cell"]]).encode()).hexdigest()[
        :12
    ]
    out = cache / f"{case['id']}_{case['version']}_{digest}.json"  # suites may share ids
    if not out.exists():
        with tempfile.TemporaryDirectory() as tmp:
            case_path = Path(tmp) / "case.json"
            case_path.write_text(json.dumps(case))
            env = dict(os.environ, MPLBACKEND="Agg", CUDA_VISIBLE_DEVICES="", TF_CPP_MIN_LOG_LEVEL="3")
            # The child runs in a scratch folder; it must import this same copy of the package.
            root = str(Path(__file__).resolve().parents[2])
            env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
            proc = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "crane_jupyterlab.bench.checkeval",
                    "--child",
                    str(case_path),
                    str(out),
                ],
                env=env,
                cwd=tmp,  # the case's cells write files: never into the caller's folder
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
            if proc.returncode != 0:
                print(
                    f"  {case['id']}/{case['version']}: setup failed: {proc.stderr[-300:]}", file=sys.stderr
                )
                return None
    result: dict[str, Any] = json.loads(out.read_text())
    return result


def live(args: argparse.Namespace) -> None:
    cache = Path(tempfile.gettempdir()) / "crane-checks-probe" / _probe_hash()
    cache.mkdir(parents=True, exist_ok=True)
    replica.warm_up(120)  # the judge abstains while its process warms up
    rows = []
    for case in _cases(Path(args.cases) if args.cases else Path(args.dir) / "cases.jsonl", args.ids):
        result = _probe_result(case, cache)
        if result is None:
            continue
        view = from_probe(result)
        findings = check_view(case["target_cell"], view) or replica.judge(
            case["target_cell"], view, case.get("executed_cells")
        )
        rows.append((case, findings))
    _score(rows, args.verbose)


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        _child(sys.argv[2], sys.argv[3])
        return
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("suite", choices=["junobench", "live"])
    parser.add_argument("--dir", default=None, help="suite folder (default: ../shared/<suite>)")
    parser.add_argument("--cases", help="a cases file in the live suite's format (instead of --dir)")
    parser.add_argument("--ids", default="*", help="fnmatch patterns on the case id, comma-separated")
    parser.add_argument("-v", "--verbose", action="store_true", help="list every predicted or actual crash")
    args = parser.parse_args()
    args.dir = args.dir or str(SHARED / args.suite)
    (junobench if args.suite == "junobench" else live)(args)


if __name__ == "__main__":
    main()
