"""`crane-bench forecast`: the trial's forecast (a cell's time whole and the kernel's memory peak) against
real runs of the same cells.

For each case of the suite (JSONL: `id`, `split`, `setup`, `cell`, `note`, optionally `expect_oom` and
`real: false`) a fresh ipykernel runs `setup`, then a quick trial of `cell` is asked for as the server
asks for it (`server.trial.run`: `trial.start`, then `trial.result` polled; the server's options but
`--budget`), and its `forecast` is read. Then the cell runs for real in that kernel: its wall time from
the request to the reply, and the kernel's peak resident memory (its peak mark reset before the cell by
writing 5 to /proc/PID/clear_refs; VmHWM read after). A case with `real: false` (an out-of-memory case,
whose truth is arithmetic) is never run for real: only the forecast's `out_of_memory` is checked.

Per case: forecast seconds (low-high, basis), real seconds, time error |f - r| / r and whether the real
time lies in the range; forecast peak MB vs VmHWM, and the memory-growth error |fg - rg| / rg with
fg = forecast peak - RSS before and rg = VmHWM - RSS before, where rg >= 50 MB. Summary: time error
p50/p90, memory-growth error p50, out of memory said where expected, and never where not.

    crane-bench forecast --split dev --out forecast-dev.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from ..server import trial as trials
from ..server.payload import extract
from .kernels import execute, fresh_kernel, run_cell

DEFAULT_SUITE = Path(__file__).resolve().parents[2] / "suites" / "forecast" / "cases.jsonl"
# Where the real growth is at least this (MB), its forecast's error is scored.
GROWTH_MIN_MB = 50.0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "forecast",
        help="the trial's forecast (time whole, memory peak) against real runs",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--suite", type=Path, default=DEFAULT_SUITE, help="the cases (JSONL)")
    p.add_argument(
        "--split",
        choices=("dev", "blind", *(f"blind{n}" for n in range(2, 10)), "all"),
        default="dev",
        help="default: dev",
    )
    p.add_argument("--out", type=Path, help="write one JSON row per case here (JSONL)")
    p.add_argument("--only", action="append", default=[], metavar="ID", help="only this case (repeatable)")
    p.add_argument(
        "--budget", type=float, default=5.0, help="the trial's budget, s (default 5, the server's)"
    )
    p.add_argument("--timeout", type=float, default=300.0, help="a real run's limit, s (default 300)")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON line")
    p.set_defaults(func=main)


def load(path: Path, split: str, only: list[str]) -> list[dict[str, Any]]:
    cases = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if only:
        return [c for c in cases if c["id"] in only]
    return [c for c in cases if split == "all" or c.get("split", "dev") == split]


def main(args: argparse.Namespace) -> int:
    cases = load(args.suite, args.split, args.only)
    if not cases:
        print(f"crane-bench forecast: no cases in {args.suite} ({args.split}, {args.only})", file=sys.stderr)
        return 2
    rows = asyncio.run(run_all(cases, args.budget, args.timeout, args.out))
    summary = summarize(rows)
    if args.json:
        print(json.dumps(summary))
    else:
        print(table(rows))
        print(summary_text(summary))
    return 0


async def run_all(
    cases: list[dict[str, Any]], budget: float, timeout: float, out: Path | None
) -> list[dict[str, Any]]:
    rows = []
    sink = out.open("w", encoding="utf-8") if out else None
    try:
        for case in cases:  # one at a time: a measurement alone on the machine
            try:
                row = await measure(case, budget, timeout)
            except Exception as exc:  # a case that could not be measured is a row too
                row = {"id": case["id"], "split": case.get("split"), "error": f"{type(exc).__name__}: {exc}"}
            rows.append(row)
            print(line(row), file=sys.stderr, flush=True)
            if sink:
                sink.write(json.dumps(row) + "\n")
                sink.flush()
    finally:
        if sink:
            sink.close()
    return rows


async def measure(case: dict[str, Any], budget: float, timeout: float) -> dict[str, Any]:
    row: dict[str, Any] = {"id": case["id"], "split": case.get("split", "dev"), "note": case.get("note")}
    if "expect_oom" in case:
        row["expect_oom"] = bool(case["expect_oom"])
    async with fresh_kernel() as (km, kc):
        pid = await _pid(kc)
        if case.get("setup"):
            await run_cell(kc, case["setup"], timeout=600)
        await extract(kc, "", timeout=60)  # installs the payload, as the server's first analysis does
        t0 = time.perf_counter()
        outcome = await trials.run(
            trials.on_client(kc, timeout=120), case["cell"], trials.TrialOptions(budget_s=budget)
        )
        row["trial"] = {
            "status": outcome.status,
            "seconds": round(time.perf_counter() - t0, 2),
            "elapsed_s": None if outcome.elapsed_ms is None else round(outcome.elapsed_ms / 1000, 2),
            "cut": outcome.shortened,
            "worker": outcome.worker is not None,
            "reason": outcome.reason,
        }
        ahead = outcome.forecast.model_dump() if outcome.forecast is not None else None
        row["forecast"] = ahead
        if case.get("real", True) is False:
            row["real"] = None
            return score(row)
        before_kb = _status_kb(pid, "VmRSS")
        _reset_peak(pid)
        before_kb = min(before_kb, _status_kb(pid, "VmRSS"))
        load, cpu0, t0 = _load(), _cpu_s(pid), time.perf_counter()
        run = await execute(kc, km, case["cell"], timeout)
        seconds = time.perf_counter() - t0
        cpu = _cpu_s(pid) - cpu0
        row["real"] = {
            "status": run["status"],
            "message": run.get("message"),
            "seconds": round(seconds, 2),
            "rss_before_mb": round(before_kb / 1024, 1),
            "peak_mb": round(_status_kb(pid, "VmHWM") / 1024, 1),
            "cpu_s": round(cpu, 2),  # the kernel's CPU time (all its threads): cpu/seconds ~ cores it used
            "load_before": load,  # the machine's 1-minute load average: other jobs on the cores
            "load_after": _load(),
        }
    return score(row)


def score(row: dict[str, Any]) -> dict[str, Any]:
    """The row's errors: time, memory growth, out of memory."""
    ahead, real = row.get("forecast"), row.get("real")
    row["said_oom"] = bool(ahead and ahead.get("out_of_memory"))
    if "expect_oom" in row:
        row["oom_ok"] = row["said_oom"] == row["expect_oom"]
    if not ahead or not real or real.get("status") != "ok":
        return row
    r = float(real["seconds"])
    f = ahead.get("seconds")
    if isinstance(f, (int, float)) and r > 0:
        row["time_error"] = round(abs(f - r) / r, 3)
        low, high = ahead.get("seconds_low"), ahead.get("seconds_high")
        row["in_range"] = (low is None or low <= r) and (high is None or r <= high)
    peak = ahead.get("peak_memory_mb")
    if isinstance(peak, (int, float)):
        grown = real["peak_mb"] - real["rss_before_mb"]
        row["forecast_growth_mb"] = round(peak - real["rss_before_mb"], 1)
        row["real_growth_mb"] = round(grown, 1)
        if grown >= GROWTH_MIN_MB:
            row["memory_error"] = round(abs(row["forecast_growth_mb"] - grown) / grown, 3)
    return row


def _pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(int(q * len(ordered)), len(ordered) - 1)] if q < 1 else ordered[-1], 3)


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    times = [r["time_error"] for r in rows if "time_error" in r]
    mems = [r["memory_error"] for r in rows if "memory_error" in r]
    expected = [r for r in rows if r.get("expect_oom")]
    not_expected = [r for r in rows if not r.get("expect_oom")]
    return {
        "cases": len(rows),
        "errors": [r["id"] for r in rows if "error" in r],
        "timed": len(times),
        "time_error_p50": round(statistics.median(times), 3) if times else None,
        "time_error_p90": _pct(times, 0.9),
        "in_range": sum(1 for r in rows if r.get("in_range")),
        "memory_scored": len(mems),
        "memory_error_p50": round(statistics.median(mems), 3) if mems else None,
        "oom_said_where_expected": f"{sum(1 for r in expected if r['said_oom'])}/{len(expected)}",
        "oom_said_where_not": [r["id"] for r in not_expected if r.get("said_oom")],
    }


def line(row: dict[str, Any]) -> str:
    """One case, for the progress log."""
    if "error" in row:
        return f"{row['id']}: error {row['error']}"
    return f"{row['id']}: {json.dumps({k: v for k, v in row.items() if k not in ('note', 'id')})}"


def _num(value: Any, digits: int = 1) -> str:
    return "-" if not isinstance(value, (int, float)) else f"{value:.{digits}f}"


def table(rows: list[dict[str, Any]]) -> str:
    head = (
        f"{'case':<22} {'trial':<10} {'forecast s (low-high, basis)':<34} {'real s':>7} {'t err':>6}"
        f" {'in':>3} {'f peak':>7} {'real pk':>7} {'f grow':>7} {'r grow':>7} {'m err':>6} oom"
    )
    out = [head, "-" * len(head)]
    for r in rows:
        if "error" in r:
            out.append(f"{r['id']:<22} error: {r['error']}")
            continue
        f, real = r.get("forecast") or {}, r.get("real") or {}
        trial = f"{r['trial']['status'][:8]}{'*' if r['trial']['cut'] else ''}"
        if f:
            high = "?" if f.get("seconds_high") is None else _num(f["seconds_high"])
            plus = "+" if f.get("at_least") else ""
            said = f"{_num(f.get('seconds'))}{plus} ({_num(f.get('seconds_low'))}-{high}, {f.get('basis')})"
        else:
            said = "none"
        oom = ""
        if "expect_oom" in r:
            oom = f"said {r['said_oom']} / expected {r['expect_oom']}"
        elif r.get("said_oom"):
            oom = "said True (not expected)"
        inside = "" if "in_range" not in r else ("y" if r["in_range"] else "n")
        real_s = _num(real.get("seconds")) if real.get("status") in (None, "ok") else real.get("status", "-")
        out.append(
            f"{r['id']:<22} {trial:<10} {said:<34} {real_s:>7} {_num(r.get('time_error'), 2):>6} {inside:>3}"
            f" {_num(f.get('peak_memory_mb'), 0):>7} {_num(real.get('peak_mb'), 0):>7}"
            f" {_num(r.get('forecast_growth_mb'), 0):>7} {_num(r.get('real_growth_mb'), 0):>7}"
            f" {_num(r.get('memory_error'), 2):>6} {oom}"
        )
    out.append("(trial: * = a loop was cut; forecast +: at least; in: the real time within low-high)")
    return "\n".join(out)


def summary_text(s: dict[str, Any]) -> str:
    return (
        f"{s['cases']} cases ({len(s['errors'])} not measured);"
        f" time error p50 {_num(s['time_error_p50'], 2)},"
        f" p90 {_num(s['time_error_p90'], 2)} over {s['timed']} (real time within the range in"
        f" {s['in_range']}); memory-growth error p50 {_num(s['memory_error_p50'], 2)} over"
        f" {s['memory_scored']} (growth >= {GROWTH_MIN_MB:g} MB); out of memory said where expected"
        f" {s['oom_said_where_expected']}, where not: {s['oom_said_where_not'] or 'never'}"
    )


# -- the kernel's process ------------------------------------------------------------------------------


async def _pid(kc: Any) -> int:
    outputs: list[dict[str, Any]] = []
    await run_cell(kc, "import os as __crane_os\nprint(__crane_os.getpid())\ndel __crane_os", outputs=outputs)
    text = "".join(m["content"].get("text", "") for m in outputs if m["msg_type"] == "stream")
    return int(text.strip())


def _status_kb(pid: int, key: str) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as fh:
        for entry in fh:
            if entry.startswith(key + ":"):
                return int(entry.split()[1])
    raise RuntimeError(f"/proc/{pid}/status has no {key}")


def _cpu_s(pid: int) -> float:
    """The process's user + system CPU seconds so far."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _load() -> float:
    with open("/proc/loadavg", encoding="ascii") as fh:
        return float(fh.read().split()[0])


def _reset_peak(pid: int) -> None:
    """VmHWM back to the current RSS (Linux: 5 into clear_refs)."""
    with open(f"/proc/{pid}/clear_refs", "w", encoding="ascii") as fh:
        fh.write("5")
