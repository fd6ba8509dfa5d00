"""The GPU crash suite, the probe on CUDA objects, and whether a probe call leaves CUDA as it found it.

    python -m crane_jupyterlab.bench.gpu --cases suites/gpu/cases.jsonl --out DIR [--ids 'gpu_0*']
    python -m crane_jupyterlab.bench.gpu --cases suites/gpu/cases.jsonl --out DIR --device cpu

Every case runs in a fresh interpreter (the CUDA state of one must not leak into the next): its executed
cells in order, as a notebook runs them; then the probe on the target cell with that namespace (the first
call timed, then `--warm` more); the runtime text and the deterministic checks on its result; the probe
again with its time budget spent from the start (shape, dtype and device must still be there); the
case's decisive facts, which must hold then; and last the target cell itself, whose outcome must be the
case's (`crash`, `exception`). Nothing is installed and
nothing is fetched: it needs torch (with CUDA, unless `--device cpu`), numpy, pydantic and this package.

`--device cpu` runs the cases marked `cpu_check` with "cuda" read as "cpu" (the dtype and requires-grad
pairs crash alike on a CPU), so they can be verified without a GPU.

It writes DIR/results.jsonl (one line per case, the format of the live suite's score.py: runtime_text,
extraction_ms, prediction) and DIR/summary.json, and prints a table and a summary: pairs verified, checks
precision/recall, decisive facts carried, probe first-call and warm p95 times, facts surviving a spent
budget, and (with CUDA) the fork check: torch.cuda.is_initialized() and a forked child's use of CUDA
after a probe call, beside a control that calls torch.cuda.is_available() and must poison the fork.
"""

from __future__ import annotations

import argparse
import ast
import builtins
import fnmatch
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .facts import check_fact, first_line

ROOT = Path(__file__).resolve().parents[2]
CHILD_TIMEOUT = 300.0


# ----- child side ------------------------------------------------------------------------------------


def _run_cell(source: str, ns: dict[str, Any], name: str) -> None:
    """As a kernel runs a cell: the last expression is displayed (repr), figures are drawn and closed."""
    tree = ast.parse(source, filename=name)
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body[-1].value)
        tree.body.pop()
    exec(compile(tree, name, "exec"), ns)
    if last is not None:
        value = eval(compile(last, name, "eval"), ns)
        if value is not None:
            repr(value)
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is not None:
        for num in plt.get_fignums():
            plt.figure(num).canvas.draw()
        plt.close("all")


def _on_cpu(source: str) -> str:
    return source.replace('torch.device("cuda")', 'torch.device("cpu")').replace(
        'autocast("cuda"', 'autocast("cpu"'
    )


def _structure_kept(result: dict[str, Any]) -> tuple[int, int]:
    """(tensors and parameterized torch modules described, those that kept shape, dtype and device)."""
    need = kept = 0
    stack = list(result.get("objects") or [])
    while stack:
        e = stack.pop()
        stack.extend(e.get("children") or [])
        facts = {f["key"]: f["value"] for f in e.get("facts") or []}
        if e.get("type") == "torch.Tensor":
            need += 1
            kept += {"shape", "dtype", "device"} <= facts.keys()
        elif isinstance(facts.get("n_params"), int) and facts["n_params"] > 0:
            need += 1
            kept += {"param_device", "param_dtype"} <= facts.keys()
    return need, kept


def child_main(case_path: str, out_path: str, warm: int, device: str) -> None:
    from crane_jupyterlab import runtime_text
    from crane_jupyterlab.checks import check
    from crane_jupyterlab.kernel import probe
    from crane_jupyterlab.kernel.probe import facts

    with open(case_path) as fh:
        case = json.load(fh)
    cells, target = case["executed_cells"], case["target_cell"]
    if device == "cpu":
        cells, target = [_on_cpu(c) for c in cells], _on_cpu(target)
    res: dict[str, Any] = {"setup_error": None}
    ns: dict[str, Any] = {"__name__": "__main__"}
    for i, cell in enumerate(cells):
        try:
            _run_cell(cell, ns, f"<cell {i}>")
        except BaseException as exc:
            res["setup_error"] = f"cell {i}: {type(exc).__name__}: {first_line(str(exc))}"
            break
    if res["setup_error"] is None:
        torch = sys.modules.get("torch")
        cuda = getattr(torch, "cuda", None)
        res["cuda_initialized_before"] = bool(cuda.is_initialized()) if cuda is not None else None
        t0 = time.perf_counter()
        result = probe.run(target, {}, ns)
        res["probe_first_ms"] = round((time.perf_counter() - t0) * 1000, 3)
        times = []
        for _ in range(warm):
            t0 = time.perf_counter()
            result = probe.run(target, {}, ns)
            times.append((time.perf_counter() - t0) * 1000)
        res["probe_warm_ms"] = [round(t, 3) for t in times]
        res["cuda_initialized_after"] = bool(cuda.is_initialized()) if cuda is not None else None
        res["probe_error"] = result.get("error")
        res["budget_exhausted"] = result.get("budget_exhausted")
        res["runtime_text"] = runtime_text.render(result)
        findings = check(target, result)
        res["findings"] = [f.model_dump() for f in findings]
        over = facts._Ctx.over
        facts._Ctx.over = lambda self: True  # type: ignore[method-assign]
        try:
            spent = probe.run(target, {}, ns)
        finally:
            facts._Ctx.over = over  # type: ignore[method-assign]
        res["spent_budget_entries"], res["spent_budget_kept"] = _structure_kept(spent)
        res["facts_hold"] = [[fact, *check_fact(fact, ns)] for fact in case.get("decisive_facts", [])]
        try:
            _run_cell(target, ns, "<target>")
            res["raised"], res["exception"], res["message"] = False, None, None
        except BaseException as exc:
            res["raised"], res["exception"], res["message"] = True, type(exc).__name__, first_line(str(exc))
    with open(out_path, "w") as fh:
        json.dump(res, fh)


FORK_CHILD = """
import json, os, sys, time
sys.path.insert(0, {root!r})
import torch
from crane_jupyterlab.kernel import probe
control = {control!r}
init_first = {init_first!r}
ns = {{"torch": torch, "x": torch.zeros(3)}}
if init_first:
    ns["g"] = torch.ones(4, device="cuda")
out = {{"initialized_before": torch.cuda.is_initialized()}}
mem = torch.cuda.memory_allocated() if init_first else None
if control:
    torch.cuda.is_available()
else:
    r = probe.run("y = x.cuda()\\nz = g * 2" if init_first else "y = x.cuda()", {{}}, ns)
    facts = {{f["key"]: f["value"] for m in r["modules"] if m["module"] == "torch" for f in m["facts"]}}
    out["cuda_available_fact"] = facts.get("cuda_available")
out["initialized_after"] = torch.cuda.is_initialized()
if init_first:
    out["memory_unchanged"] = torch.cuda.memory_allocated() == mem
if not init_first:
    pid = os.fork()
    if pid == 0:
        try:
            torch.zeros(1, device="cuda").add_(1).item()
            os._exit(0)
        except BaseException:
            os._exit(3)
    _, status = os.waitpid(pid, 0)
    out["forked_child_uses_cuda"] = os.waitstatus_to_exitcode(status) == 0
print(json.dumps(out))
"""


COLD_CHILD = """
import json, sys, time
sys.path.insert(0, {root!r})
import numpy as np, torch
from crane_jupyterlab.kernel import probe
rng = np.random.default_rng(0)
# CUDA tensors made by host-to-device copies only: no CUDA kernel of any kind has been loaded yet
ns = {{"x": torch.from_numpy(rng.random((512, 256), dtype=np.float32)).to("cuda"),
       "labels": torch.from_numpy(rng.integers(0, 10, 4096)).to("cuda"),
       "big": torch.empty(256, 1024, 1024, device="cuda"),
       "half": torch.from_numpy(rng.random((64, 64)).astype(np.float16)).to("cuda")}}
cell = "loss = model(x, labels)\\nbig.sum()\\nhalf.mean()"
t0 = time.perf_counter(); r = probe.run(cell, {{}}, ns); first = (time.perf_counter() - t0) * 1000
warm = []
for _ in range({warm}):
    t0 = time.perf_counter(); r = probe.run(cell, {{}}, ns); warm.append((time.perf_counter() - t0) * 1000)
before = torch.cuda.memory_allocated()
probe.run(cell, {{}}, ns)
facts = {{e["expr"]: {{f["key"]: f["value"] for f in e["facts"]}} for e in r["objects"]}}
print(json.dumps({{"first_ms": first, "warm_ms": warm, "memory_left": torch.cuda.memory_allocated() - before,
                  "facts": facts}}))
"""


def _python_child(code: str) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=CHILD_TIMEOUT, check=False
    )
    if proc.returncode != 0:
        return {
            "error": proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"rc {proc.returncode}"
        }
    return json.loads(proc.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


# ----- scoring (the live suite's definition of a carried fact, see its score.py) ----------------------

_MODULE_NAMES = {"np": "numpy", "pd": "pandas", "torch": "torch", "F": "torch", "nn": "torch"}
_WORD = r"[A-Za-z_][A-Za-z0-9_.]*|\d+(?:\.\d+)*"


def _names(expr: str) -> list[str]:
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError:
        return re.findall(r"[A-Za-z_]\w*", expr)[:1]
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not hasattr(builtins, node.id) and node.id not in out:
            out.append(node.id)
    return out


def _has(text: str, token: str) -> bool:
    return re.search(r"(?<![A-Za-z0-9_])" + re.escape(token) + r"(?![A-Za-z0-9_])", text) is not None


def carried(text: str, fact: str) -> bool:
    """A decisive fact `expr = value` is carried when the text names the expression's variables and shows
    every value token (numbers, identifiers, quoted strings; not True/False/None)."""
    expr, _, value = fact.partition(" = ")
    names = [n for n in _names(expr) if n not in _MODULE_NAMES]
    if not all(_has(text, n) for n in names):
        return False
    tokens = [a or b for a, b in re.findall(r"'([^']*)'|\"([^\"]*)\"", value)]
    rest = re.sub(r"'[^']*'|\"[^\"]*\"", " ", value)
    for tok in re.findall(_WORD, rest):
        tokens.append(tok if re.fullmatch(r"\d+(?:\.\d+)*", tok) else tok.split(".")[-1])
    return all(_has(text, t) for t in tokens if t.strip() and t not in ("True", "False", "None"))


def _p95(values: list[float]) -> float | None:
    return round(sorted(values)[max(0, math.ceil(0.95 * len(values)) - 1)], 2) if values else None


# ----- parent side -----------------------------------------------------------------------------------


def run_case(case: dict[str, Any], warm: int, device: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="crane-gpu-") as tmp:
        case_path, out_path = os.path.join(tmp, "case.json"), os.path.join(tmp, "out.json")
        with open(case_path, "w") as fh:
            json.dump(case, fh)
        env = {
            **os.environ,
            "MPLBACKEND": "Agg",
            "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
        }
        cmd = [
            sys.executable,
            "-m",
            "crane_jupyterlab.bench.gpu",
            "--child",
            case_path,
            out_path,
            str(warm),
            device,
        ]
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(
                cmd, env=env, capture_output=True, text=True, timeout=CHILD_TIMEOUT, check=False
            )
            if os.path.exists(out_path):
                with open(out_path) as fh:
                    res: dict[str, Any] = json.load(fh)
            else:
                res = {"setup_error": f"child died rc={proc.returncode}: {proc.stderr[-400:]}"}
        except subprocess.TimeoutExpired:
            res = {"setup_error": f"timeout after {CHILD_TIMEOUT:.0f}s"}
        res["wall_s"] = round(time.perf_counter() - t0, 2)
    expected = case["exception"] if case["crash"] else None
    res["verified"] = (
        res.get("setup_error") is None
        and res.get("raised") == case["crash"]
        and res.get("exception") == expected
        and all(ok for _, ok, _ in res.get("facts_hold", []))  # the decisive facts hold before the cell
    )
    res["detected"] = bool(res.get("findings"))
    res["facts"] = [[f, carried(res.get("runtime_text") or "", f)] for f in case.get("decisive_facts", [])]
    return res


def summarize(cases: list[dict[str, Any]], results: list[dict[str, Any]]) -> dict[str, Any]:
    tp = fp = fn = tn = 0
    for case, res in zip(cases, results, strict=True):
        if case["crash"]:
            tp, fn = tp + res["detected"], fn + (not res["detected"])
        else:
            fp, tn = fp + res["detected"], tn + (not res["detected"])
    facts = [ok for res in results for _, ok in res["facts"]]
    first = [r["probe_first_ms"] for r in results if "probe_first_ms" in r]
    warm = [t for r in results for t in r.get("probe_warm_ms", [])]
    need = sum(r.get("spent_budget_entries", 0) for r in results)
    kept = sum(r.get("spent_budget_kept", 0) for r in results)
    init_changed = sum(
        1 for r in results if r.get("cuda_initialized_before") is not None
        and r["cuda_initialized_before"] != r["cuda_initialized_after"]
    )  # fmt: skip
    return {
        "cases": len(cases),
        "verified": sum(r["verified"] for r in results),
        "TP": tp, "FP": fp, "FN": fn, "TN": tn,
        "precision": round(100 * tp / (tp + fp), 1) if tp + fp else None,
        "recall": round(100 * tp / (tp + fn), 1) if tp + fn else None,
        "facts": len(facts), "facts_carried": sum(facts),
        "probe_first_ms_median": round(statistics.median(first), 2) if first else None,
        "probe_first_ms_p95": _p95(first), "probe_first_ms_max": round(max(first), 2) if first else None,
        "probe_warm_ms_p95": _p95(warm),
        "spent_budget_structure": f"{kept}/{need}",
        "cuda_initialized_changed_by_probe": init_changed,
    }  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m crane_jupyterlab.bench.gpu",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--cases", type=Path, default=ROOT / "suites" / "gpu" / "cases.jsonl")
    ap.add_argument("--out", type=Path, required=False, help="folder for results.jsonl and summary.json")
    ap.add_argument("--ids", default="*", help="glob on the case id (comma-separated)")
    ap.add_argument("--warm", type=int, default=20, help="warm probe calls per case (default 20)")
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda", help="cpu: the cpu_check cases only")
    ap.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        case_path, out_path, warm, device = args.child
        child_main(case_path, out_path, int(warm), device)
        return 0
    if args.out is None:
        ap.error("--out is required")
    with args.cases.open() as fh:
        cases = [json.loads(line) for line in fh if line.strip()]
    pats = args.ids.split(",")
    cases = [c for c in cases if any(fnmatch.fnmatch(c["id"], p) for p in pats)]
    if args.device == "cpu":
        cases = [c for c in cases if c.get("cpu_check")]
    args.out.mkdir(parents=True, exist_ok=True)
    results = []
    header = ("case", "expected", "observed", "ok", "checks", "facts", "first ms", "warm p95")
    print("{:<14} {:<18} {:<18} {:<3} {:<7} {:<6} {:>9} {:>9}".format(*header))
    for case in cases:
        res = run_case(case, args.warm, args.device)
        results.append(res)
        observed = res.get("setup_error") or (res["exception"] if res.get("raised") else "no crash")
        warm_p95 = _p95(res.get("probe_warm_ms", [])) or math.nan
        expected = case["exception"] if case["crash"] else "no crash"
        facts = f"{sum(ok for _, ok in res['facts'])}/{len(res['facts'])}"
        print(
            f"{case['id'] + '/' + case['version'][0]:<14} {expected:<18} {str(observed)[:60]:<18} "
            f"{'ok' if res['verified'] else 'NO':<3} {'crash' if res['detected'] else '-':<7} {facts:<6} "
            f"{res.get('probe_first_ms', math.nan):>9.2f} {warm_p95:>9.2f}"
        )
        if res.get("raised") and case["crash"] and res.get("message") != case.get("message"):
            print(f"    message observed: {res.get('message')!r}")
        for f in res.get("findings") or []:
            print(f"    finding: {f['message'][:150]}")
        for fact, ok in res["facts"]:
            if not ok:
                print(f"    fact not carried: {fact}")
        for fact, ok, observed in res.get("facts_hold", []):
            if not ok:
                print(f"    fact does not hold: {fact} (observed {observed})")
    summary = summarize(cases, results)
    if args.device == "cuda":
        summary["fork"] = {
            "probe_cold": _python_child(FORK_CHILD.format(root=str(ROOT), control=False, init_first=False)),
            "control_is_available": _python_child(
                FORK_CHILD.format(root=str(ROOT), control=True, init_first=False)
            ),
            "probe_after_user_init": _python_child(
                FORK_CHILD.format(root=str(ROOT), control=False, init_first=True)
            ),
        }
        cold = _python_child(COLD_CHILD.format(root=str(ROOT), warm=args.warm))
        if "warm_ms" in cold:
            cold["warm_p95_ms"] = _p95(cold["warm_ms"])
            cold["first_ms"] = round(cold["first_ms"], 2)
            del cold["warm_ms"]
        summary["cold_probe"] = cold
    with (args.out / "results.jsonl").open("w") as fh:
        for case, res in zip(cases, results, strict=True):
            reasoning = "; ".join(f["message"] for f in res.get("findings") or [])
            line = {
                "id": case["id"],
                "version": case["version"],
                "runtime_text": res.get("runtime_text"),
                "extraction_ms": res.get("probe_first_ms"),
                "error": res.get("setup_error") or res.get("probe_error"),
                "prediction": {"detection": res["detected"], "reasoning": reasoning, "source": "checks"},
                "gpu": res,
            }
            fh.write(json.dumps(line) + "\n")
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1))
    print(json.dumps(summary, indent=1))
    return 0 if summary["verified"] == len(cases) else 1


if __name__ == "__main__":
    sys.exit(main())
