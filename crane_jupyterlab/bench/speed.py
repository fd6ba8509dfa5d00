"""`crane-bench speed`: extraction time against a bare silent round trip in the same kernel, and with
`--trial` what a trial run costs the kernel.

For each scenario a fresh kernel builds realistic state, the probe is installed once, and then each
repetition times a bare silent request (`pass`) and an extraction for the scenario's target cell back to
back. Reported: p50/p95 of both and of their ratio. Goals: `typical` p95 ratio <= 5x, `big` p95 <= 250 ms.

`--trial` (in the same kernel, after the extraction): each repetition starts a trial of the target cell
and waits for its outcome. Reported: the time the kernel was blocked by `trial.start` (measured in the
kernel: the fork and its preparation; goal p95 <= 50 ms with the `big` state), the fork alone (wall and
the kernel thread's CPU time), the child's own memory at its end, the outcomes; then a `1 + 1` cell's
round trip alone and while a trial of `time.sleep(60)` runs (goal: p95 no more than 100 ms longer).

`--quick`: a cell that trains a torch model for about 30 s (100 epochs) and then evaluates it on a test
set with a column too few. Each repetition times a trial request with the server's defaults (5 s budget,
loops cut after 2 iterations) from its start to the verdict (`policy`): the quick trial sees the crash
after 2 epochs. Reported: p50/p95 seconds, the verdicts; goal p95 <= 10 s.

`--worker`: a kernel that trained a Keras model (TensorFlow's runtime lives in it, so its Keras cells run
in a spawned worker, kernel/trial/worker.py). Reported: the warm spare's start (an interpreter importing
the kernel's libraries) and resident memory; per repetition, with a warm spare waiting, the time from a
trial request (the server's defaults) to the verdict on a cell that fits the model for 50 epochs and then
evaluates it on a column too many (the quick trial cuts the fit after 2); the kernel's blocked time in
`trial.start` for that cell (the packing fork) beside a fork trial's in the same kernel, as a ratio; and a
small TensorFlow cell (`model.predict` on 64 rows: the worker's) from request to verdict and its inputs'
rebuild time (goal: p50 <= 0.5 s).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from dataclasses import dataclass
from typing import Any

from jupyter_client.asynchronous.client import AsyncKernelClient

from .. import policy
from ..server import trial as trials
from ..server.payload import extract
from .kernels import fresh_kernel, run_cell, wait_reply


@dataclass(frozen=True)
class Scenario:
    setup: str  # notebook cells that build the kernel state
    target: str  # the cell whose runtime information is extracted
    goal_ratio: float | None = None  # p95 extraction / bare round trip
    goal_ms: float | None = None  # p95 extraction, absolute


SCENARIOS = {
    "typical": Scenario(
        setup="""
import numpy as np
import pandas as pd
import torch
from sklearn.ensemble import RandomForestClassifier

rng = np.random.default_rng(0)
X = rng.normal(size=(3000, 8))
y = (X[:, 0] + rng.normal(size=3000) > 0).astype(int)
images = rng.random((64, 28, 28), dtype=np.float32)
customers = pd.DataFrame(X, columns=[f"f{i}" for i in range(8)])
customers["segment"] = rng.choice(["consumer", "corporate", "home_office"], 3000)
customers["label"] = y
orders = pd.DataFrame({
    "date": pd.date_range("2024-01-01", periods=4000, freq="h"),
    "customer": rng.integers(0, 3000, 4000),
    "amount": rng.gamma(2.0, 30.0, 4000).round(2),
})
clf = RandomForestClassifier(n_estimators=20, random_state=0).fit(X, y)
net = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.ReLU(), torch.nn.Linear(32, 2))
""",
        target="""
merged = orders.merge(customers, left_on="customer", right_index=True)
features = merged.drop(columns=["date", "segment", "label"])
pred = clf.predict(features.values)
logits = net(torch.tensor(X, dtype=torch.float32))
flat = images.reshape(64, -1).mean(axis=1)
summary = merged.groupby("segment")["amount"].sum()
""",
        goal_ratio=5.0,
    ),
    "big": Scenario(
        setup="""
import numpy as np
import pandas as pd
import torch

rng = np.random.default_rng(0)
wide = pd.DataFrame(rng.random((5_000_000, 40)), columns=[f"c{i}" for i in range(40)])
wide["c0"] = rng.integers(0, 100, 5_000_000)
big_tensor = torch.rand(268_435_456, dtype=torch.float32)  # 1 GiB
""",
        target="""
means = wide.groupby("c0")[["c1", "c2"]].mean()
scaled = (wide["c3"] - wide["c3"].mean()) / wide["c3"].std()
half = big_tensor.view(2, -1)[0].sum()
""",
        goal_ms=250.0,
    ),
}


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "speed",
        help="extraction time against a bare silent round trip",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--scenarios",
        default="typical,big",
        help=f"comma-separated, of {', '.join(SCENARIOS)} (default: all)",
    )
    p.add_argument("--reps", type=int, default=30, help="repetitions per scenario (default 30)")
    p.add_argument("--json", action="store_true", help="print one JSON line instead of the table")
    p.add_argument("--trial", action="store_true", help="also measure the trial run's cost to the kernel")
    p.add_argument("--trial-only", action="store_true", help="only the trial run's cost (implies --trial)")
    p.add_argument(
        "--quick", action="store_true", help="only the time to a quick trial's verdict on a long cell"
    )
    p.add_argument(
        "--worker", action="store_true", help="only the trial worker: spare start and memory, Keras verdicts"
    )
    p.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="environment of the measured kernels (repeatable), e.g. THP_MEM_ALLOC_ENABLE=1: torch then "
        "allocates big tensors in huge pages, which a fork copies 512x faster",
    )
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    names = [n.strip() for n in args.scenarios.split(",") if n.strip()]
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown or not names:
        print(
            f"crane-bench speed: unknown scenario(s) {unknown}; choose from {list(SCENARIOS)}",
            file=sys.stderr,
        )
        return 2
    if args.reps < 1:
        print("crane-bench speed: --reps must be at least 1", file=sys.stderr)
        return 2
    if any("=" not in item for item in args.env):
        print("crane-bench speed: --env takes NAME=VALUE", file=sys.stderr)
        return 2
    env = dict(item.split("=", 1) for item in args.env)
    if args.quick:
        row = asyncio.run(measure_quick(args.reps, env))
        print(json.dumps(row) if args.json else quick_table(row))
        return 0
    if args.worker:
        row = asyncio.run(measure_worker(args.reps, env))
        print(json.dumps(row) if args.json else worker_table(row))
        return 0
    report: dict[str, Any] = {}
    trial_report: dict[str, Any] = {}
    for name in names:
        print(f"scenario {name}: building kernel state ...", file=sys.stderr, flush=True)
        if not args.trial_only:
            report[name] = asyncio.run(measure(SCENARIOS[name], args.reps, env))
        if args.trial or args.trial_only:
            trial_report[name] = asyncio.run(measure_trial(SCENARIOS[name], args.reps, env))
    if args.json:
        print(json.dumps({**report, **({"trial": trial_report} if trial_report else {})}))
    else:
        if report:
            print(table(report))
        if trial_report:
            print(trial_table(trial_report))
    return 0


async def measure(scenario: Scenario, reps: int, env: dict[str, str] | None = None) -> dict[str, Any]:
    async with fresh_kernel(env=env) as (_, kc):
        await run_cell(kc, scenario.setup, timeout=600)
        await extract(kc, scenario.target, timeout=60)  # installs the probe; warms its imports
        bare, extraction, inside = [], [], []
        for _ in range(reps):
            bare.append(await _bare_round_trip(kc))
            t0 = time.perf_counter()
            result = await extract(kc, scenario.target, timeout=60)
            extraction.append((time.perf_counter() - t0) * 1000)
            inside.append(float(result.get("elapsed_ms") or 0.0))
    ratios = [e / b for e, b in zip(extraction, bare, strict=True)]
    row: dict[str, Any] = {
        "reps": reps,
        "bare_ms": _percentiles(bare),
        "extract_ms": _percentiles(extraction),
        "ratio": _percentiles(ratios),
        # The probe's own time, as it measures it in the kernel; the rest is transport and formatting.
        "probe_ms": _percentiles(inside),
        "budget_exhausted": result.get("budget_exhausted"),
        "entries": len(result.get("objects", [])),
    }
    if scenario.goal_ratio is not None:
        row["goal"] = f"p95 ratio <= {scenario.goal_ratio:g}x"
        row["met"] = row["ratio"]["p95"] <= scenario.goal_ratio
    if scenario.goal_ms is not None:
        row["goal"] = f"p95 <= {scenario.goal_ms:g} ms"
        row["met"] = row["extract_ms"]["p95"] <= scenario.goal_ms
    return row


TRIAL_BLOCKED_GOAL_MS = 50.0
TRIAL_DELAY_GOAL_MS = 100.0


async def measure_trial(scenario: Scenario, reps: int, env: dict[str, str] | None = None) -> dict[str, Any]:
    """What trials of the scenario's target cost the kernel, and how much slower a cell runs while one
    runs (see the module docstring)."""
    async with fresh_kernel(env=env) as (_, kc):
        await run_cell(kc, scenario.setup, timeout=600)
        await extract(kc, "", timeout=60)  # installs the payload
        invoke = trials.on_client(kc, timeout=120)
        blocked, fork, fork_cpu, start_rt, memory = [], [], [], [], []
        statuses: dict[str, int] = {}
        for _ in range(reps):
            t0 = time.perf_counter()
            started = await invoke("trial.start", f"{scenario.target!r}, {{'budget_s': 60.0}}")
            start_rt.append((time.perf_counter() - t0) * 1000)
            if started.get("state") != "running":
                raise RuntimeError(f"the trial did not start: {started}")
            blocked.append(float(started["blocked_ms"]))
            fork.append(float(started["fork_ms"]))
            fork_cpu.append(float(started.get("fork_cpu_ms", 0.0)))
            while (state := await invoke("trial.result", repr(started["token"])))["state"] == "running":
                await asyncio.sleep(0.05)
            outcome = state.get("outcome") or {}
            statuses[outcome.get("status", "none")] = statuses.get(outcome.get("status", "none"), 0) + 1
            if outcome.get("extra_memory_mb") is not None:
                memory.append(float(outcome["extra_memory_mb"]))
        alone = [await _cell_round_trip(kc) for _ in range(reps)]
        sleeping = await invoke("trial.start", "'import time\\ntime.sleep(60)', {'budget_s': 120.0}")
        during = [await _cell_round_trip(kc) for _ in range(reps)]
        still = await invoke("trial.result", repr(sleeping.get("token")))
        await invoke("trial.cancel", repr(sleeping.get("token")))
    delay_p95 = _percentiles(during)["p95"] - _percentiles(alone)["p95"]
    return {
        "reps": reps,
        "blocked_ms": _percentiles(blocked),
        "fork_ms": _percentiles(fork),
        "fork_cpu_ms": _percentiles(fork_cpu),
        "start_round_trip_ms": _percentiles(start_rt),
        "extra_memory_mb": _percentiles(memory) if memory else None,
        "outcomes": statuses,
        "cell_alone_ms": _percentiles(alone),
        "cell_during_trial_ms": _percentiles(during),
        "trial_still_running": still.get("state") == "running",
        "cell_delay_p95_ms": round(delay_p95, 2),
        "goals": {
            f"blocked p95 <= {TRIAL_BLOCKED_GOAL_MS:g} ms": _percentiles(blocked)["p95"]
            <= TRIAL_BLOCKED_GOAL_MS,
            f"1 + 1 delay p95 <= {TRIAL_DELAY_GOAL_MS:g} ms": delay_p95 <= TRIAL_DELAY_GOAL_MS,
        },
    }


LONG_SETUP = """
import numpy as np
import torch
from torch import nn

torch.manual_seed(0)
torch.set_num_threads(1)
rng = np.random.default_rng(1)
features = rng.normal(size=(12000, 20)).astype("float32")
labels = (features[:, :3].sum(1) > 0).astype("int64")
X_train, y_train = torch.tensor(features[:9600]), torch.tensor(labels[:9600])
X_test = torch.tensor(features[9600:, 1:])  # the id column dropped: 19 features
model = nn.Sequential(nn.Linear(20, 128), nn.ReLU(), nn.Linear(128, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
loss_fn = nn.CrossEntropyLoss()
"""
LONG_TARGET = """
losses = []
for epoch in range(100):
    for i in range(0, len(X_train), 32):
        opt.zero_grad()
        loss = loss_fn(model(X_train[i:i + 32]), y_train[i:i + 32])
        loss.backward()
        opt.step()
    losses.append(loss.item())
with torch.no_grad():
    predicted = model(X_test).argmax(1)
"""
QUICK_GOAL_S = 10.0


async def measure_quick(reps: int, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Seconds from a trial request to the verdict on a cell that trains ~30 s and then crashes."""
    async with fresh_kernel(env=env) as (_, kc):
        await run_cell(kc, LONG_SETUP, timeout=600)
        await extract(kc, "", timeout=60)  # installs the payload
        seconds: list[float] = []
        verdicts: dict[str, int] = {}
        for _ in range(reps):
            t0 = time.perf_counter()
            outcome = await trials.run(trials.on_client(kc), LONG_TARGET, trials.TrialOptions())
            verdict = policy.from_trial_alone(outcome)
            seconds.append(time.perf_counter() - t0)
            key = f"{verdict.source}: {outcome.exception or outcome.status}"
            verdicts[key] = verdicts.get(key, 0) + 1
    p95 = _percentiles(seconds)["p95"]
    return {"reps": reps, "seconds": _percentiles(seconds), "verdicts": verdicts,
            "goal": f"p95 <= {QUICK_GOAL_S:g} s", "met": p95 <= QUICK_GOAL_S}  # fmt: skip


KERAS_SETUP = """
import numpy as np
import keras

rng = np.random.default_rng(2)
x = rng.normal(size=(2000, 16)).astype("float32")
y = (x[:, :4].sum(1) > 0).astype("float32")
x_test = rng.normal(size=(500, 17)).astype("float32")  # a column too many
model = keras.Sequential([keras.Input((16,)), keras.layers.Dense(64, activation="relu"),
                          keras.layers.Dense(1, activation="sigmoid")])
model.compile("adam", "binary_crossentropy", metrics=["accuracy"])
model.fit(x, y, epochs=1, verbose=0)
"""
KERAS_TARGET = """
history = model.fit(x, y, epochs=50, batch_size=32, verbose=0)
loss, accuracy = model.evaluate(x_test, y, verbose=0)
"""
WORKER_GOAL_S = 10.0
# A small TensorFlow cell (a graph function: the worker's) whose inputs are well under 10 MB. The goal: its
# verdict under 0.5 s (p50) with a warm spare.
KERAS_SMALL = "p = model.predict(x[:64], verbose=0)\nassert p.shape == (64, 1)"
SMALL_GOAL_S = 0.5


async def measure_worker(reps: int, env: dict[str, str] | None = None) -> dict[str, Any]:
    """The trial worker's costs, in a kernel whose Keras cells need it (see the module docstring)."""
    async with fresh_kernel(env=env) as (_, kc):
        await run_cell(kc, KERAS_SETUP, timeout=600)
        await extract(kc, "", timeout=60)  # installs the payload
        invoke = trials.on_client(kc, timeout=120)
        seconds: list[float] = []
        blocked: list[float] = []
        fork_blocked: list[float] = []
        verdicts: dict[str, int] = {}
        spares: list[dict[str, Any]] = []
        small_s: list[float] = []
        rebuild: list[float] = []
        small_status: dict[str, int] = {}
        for _ in range(reps):
            spare = await _warm_spare(invoke)
            if spare:
                spares.append(spare)
            t0 = time.perf_counter()
            started = await invoke("trial.start", f"{KERAS_TARGET!r}, {trials.TrialOptions().literal()}")
            blocked.append(float(started.get("blocked_ms") or 0.0))
            outcome = await _collect(invoke, started)
            verdict = policy.from_trial_alone(outcome)
            seconds.append(time.perf_counter() - t0)
            key = f"{verdict.source}: {outcome.exception or outcome.status}"
            verdicts[key] = verdicts.get(key, 0) + 1
            forked = await invoke("trial.start", f"{'z = x.sum()'!r}, {trials.TrialOptions().literal()}")
            fork_blocked.append(float(forked.get("blocked_ms") or 0.0))
            await _collect(invoke, forked)
            await _warm_spare(invoke)
            t0 = time.perf_counter()
            started = await invoke("trial.start", f"{KERAS_SMALL!r}, {trials.TrialOptions().literal()}")
            small = await _collect(invoke, started)
            small_s.append(time.perf_counter() - t0)
            if small.worker is not None and small.worker.rebuild_ms is not None:
                rebuild.append(small.worker.rebuild_ms)
            small_status[small.status] = small_status.get(small.status, 0) + 1
    p95 = _percentiles(seconds)["p95"]
    return {
        "reps": reps,
        "spare_start_ms": _percentiles([float(s["warm_ms"]) for s in spares]) if spares else None,
        "spare_rss_mb": _percentiles([float(s["rss_mb"]) for s in spares]) if spares else None,
        "verdict_s": _percentiles(seconds),
        "verdicts": verdicts,
        "blocked_ms": _percentiles(blocked),
        "fork_blocked_ms": _percentiles(fork_blocked),
        "blocked_ratio_p50": round(
            _percentiles(blocked)["p50"] / max(_percentiles(fork_blocked)["p50"], 0.01), 2
        ),
        "goal": f"verdict p95 <= {WORKER_GOAL_S:g} s",
        "met": p95 <= WORKER_GOAL_S,
        "small_verdict_s": _percentiles(small_s),
        "small_outcomes": small_status,
        "small_rebuild_ms": _percentiles(rebuild) if rebuild else None,
        "small_goal": f"a small TensorFlow cell's verdict p50 <= {SMALL_GOAL_S:g} s",
        "small_met": _percentiles(small_s)["p50"] <= SMALL_GOAL_S,
    }


async def _warm_spare(invoke: Any, timeout: float = 120.0) -> dict[str, Any] | None:
    """Wait until the kernel's spare worker is warm; what it reports (start time, resident memory)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        spare: dict[str, Any] = await invoke("trial.spare", "True")
        if spare.get("warm"):
            return spare
        await asyncio.sleep(0.2)
    return None


async def _collect(invoke: Any, started: dict[str, Any]) -> Any:
    from ..models import TrialOutcome

    if started.get("state") == "done":
        return TrialOutcome.model_validate(started.get("outcome"))
    while (state := await invoke("trial.result", repr(started["token"])))["state"] == "running":
        await asyncio.sleep(0.05)
    return TrialOutcome.model_validate(state.get("outcome") or {"status": "unavailable"})


def worker_table(row: dict[str, Any]) -> str:
    def p(values: dict[str, float] | None, unit: str = "ms") -> str:
        return "n/a" if not values else f"p50 {values['p50']:g} {unit}, p95 {values['p95']:g} {unit}"

    return "\n".join(
        [
            f"trial worker ({row['reps']} reps, a Keras kernel):",
            f"  warm spare: start {p(row['spare_start_ms'])}; resident memory {p(row['spare_rss_mb'], 'MB')}",
            f"  request to verdict, fit 50 epochs then a crash: {p(row['verdict_s'], 's')};"
            f" {row['verdicts']}",
            f"  kernel blocked by trial.start: worker {p(row['blocked_ms'])};"
            f" fork {p(row['fork_blocked_ms'])}; ratio p50 {row['blocked_ratio_p50']}",
            f"  {row['goal']}: {'met' if row['met'] else 'NOT met'}",
            f"  a small TensorFlow cell ({KERAS_SMALL.splitlines()[0]}):"
            f" verdict {p(row['small_verdict_s'], 's')};"
            f" rebuild {p(row['small_rebuild_ms'])}; {row['small_outcomes']}",
            f"  {row['small_goal']}: {'met' if row['small_met'] else 'NOT met'}",
        ]
    )


def quick_table(row: dict[str, Any]) -> str:
    s = row["seconds"]
    return (
        f"quick trial on a long cell ({row['reps']} reps): request to verdict p50 {s['p50']:.2f} s, "
        f"p95 {s['p95']:.2f} s; verdicts {row['verdicts']}; "
        f"{row['goal']} {'met' if row['met'] else 'NOT met'}"
    )


async def _cell_round_trip(kc: AsyncKernelClient) -> float:
    t0 = time.perf_counter()
    await run_cell(kc, "1 + 1", timeout=60)
    return (time.perf_counter() - t0) * 1000


def trial_table(report: dict[str, dict[str, Any]]) -> str:
    def pair(label: str, values: dict[str, float] | None, unit: str = "ms") -> str:
        if values is None:
            return f"  {label:<33} (none)"
        return f"  {label:<33} p50 {values['p50']:8.2f}  p95 {values['p95']:8.2f} {unit}"

    lines = []
    for name, row in report.items():
        still = " (the trial was still running)" if row["trial_still_running"] else ""
        lines += [
            f"trial run, scenario {name} ({row['reps']} reps; outcomes {row['outcomes']}):",
            pair("kernel blocked by trial.start", row["blocked_ms"]),
            pair("  of which os.fork (wall)", row["fork_ms"]),
            pair("  os.fork (kernel thread CPU)", row["fork_cpu_ms"]),
            pair("trial.start round trip", row["start_round_trip_ms"]),
            pair("the trial's own memory", row["extra_memory_mb"], "MB"),
            pair("1 + 1 cell alone", row["cell_alone_ms"]),
            pair("1 + 1 cell during a trial", row["cell_during_trial_ms"]) + still,
            "  goals: "
            + ", ".join(f"{goal} {'met' if met else 'NOT met'}" for goal, met in row["goals"].items()),
        ]
    return "\n".join(lines)


async def _bare_round_trip(kc: AsyncKernelClient) -> float:
    t0 = time.perf_counter()
    msg_id = kc.execute("pass", silent=True, store_history=False, allow_stdin=False, stop_on_error=False)
    await wait_reply(kc, msg_id, timeout=60)
    return (time.perf_counter() - t0) * 1000


def _percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"p50": round(statistics.median(ordered), 2), "p95": round(p95, 2)}


def table(report: dict[str, dict[str, Any]]) -> str:
    lines = [
        f"{'scenario':<9} {'reps':>4} {'bare p50':>9} {'bare p95':>9} {'extract p50':>12} "
        f"{'extract p95':>12} {'probe p50':>10} {'probe p95':>10} {'ratio p50':>10} {'ratio p95':>10}  goal",
    ]
    for name, row in report.items():
        lines.append(
            f"{name:<9} {row['reps']:>4} {row['bare_ms']['p50']:>9.2f} {row['bare_ms']['p95']:>9.2f} "
            f"{row['extract_ms']['p50']:>12.2f} {row['extract_ms']['p95']:>12.2f} "
            f"{row['probe_ms']['p50']:>10.2f} {row['probe_ms']['p95']:>10.2f} "
            f"{row['ratio']['p50']:>10.2f} {row['ratio']['p95']:>10.2f}  "
            f"{row['goal']} {'met' if row['met'] else 'NOT met'}"
        )
    lines.append(
        "times in ms; probe = the probe's own time in the kernel; "
        "ratio = extraction / bare silent round trip (`pass`) in the same kernel"
    )
    return "\n".join(lines)
