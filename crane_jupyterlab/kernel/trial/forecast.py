"""Before a long run: how long the cell takes whole and how much memory the kernel peaks at, from what its
trial measured (the kernel's side, after the trial; nothing runs again).

A trial that ran the cell to its end (or to its crash) with nothing cut has *observed* its time. A quick
trial cut its long loops after their first iterations; each loop reports its length, the iterations that
ran, their seconds and the first one's (a warm-up), and how much the process's resident memory grew
(`loops.Loop`). The full time is *projected*: the measured time, plus each cut loop's iterations left at
its steady rate (the warm-up iteration left out; the range runs from the faster to the slower of the
two rates). Loops cut in one top-level statement are nested: the statement's measured time scales by
each one's length over the iterations that ran; an inner loop whose length changes from run to run
(`range(i)`, `range(i, n)`) scales its outer loop by the inner iterations all of its iterations hold
against those that ran (about the square of its length for `range(i)`, half the linear for
`range(i, n)`). A library call run on a sample (libcalls) is projected from its timed sizes; a cut loop
of unknown length (a `while`, a generator) makes the time a lower bound (`at_least`).

Threads: the fork runs torch on one thread; the kernel on its own count, n. The share of the trial's time
torch's compute took (threads.py) is assumed n ** SCALING times faster in the kernel, at best n times
(the range's low end), at worst no faster (its high end); the time is then *projected*, not observed.

Memory: the kernel's resident memory now, plus what the trial added at its peak (`extra_kb`, the trial
process's own pages), plus what each cut loop's iterations added after their first one, times the
iterations left. Against what the kernel can have: its resident memory plus the machine's available
memory, or less where the kernel's cgroup (v2 or v1) leaves less. Out of memory only where the projected
peak exceeds that.

GPU memory, for a kernel using CUDA (whose trial runs in a worker with a CUDA context of its own): the
kernel's allocation now, plus the trial's peak above what the worker held before the cell (its copies of
the inputs: `gpu_extra_kb`), plus what each cut loop's iterations kept on the GPU after their first one,
times the iterations left (torch's own counters, cudamemory.py). Against what the kernel may hold: its
allocation plus the device's free memory plus what torch's cache holds unused. A peak the trial observed
whole fitted already (the worker ran it beside the kernel's allocation, with less room): only a
projected growth can run the GPU out of memory. Stdlib only; the payload's kernel side (`watch.py`)
calls `build`.
"""

from __future__ import annotations

import os
from typing import Any

from . import cudamemory

# A trial's measured rate may be off by this much either way on a loaded machine: the range's margin.
MARGIN = 1.25
# torch's compute on n threads is assumed n ** SCALING times as fast as on one: the middle, on a log
# scale, of no faster and n times. On 2 cores the forecast suite's torch loops ran 0.8 to 1.8 times as
# fast in a kernel as on a trial's one thread, about 1.3 at the median (docs/measurements.md).
SCALING = 0.5
# A library call stopped after its first iterations, whose length is unknown (scipy's minimize).
_SAMPLED = ("minimize",)


def build(
    outcome: dict[str, Any],
    extra_kb: int,
    kernel_kb: int | None = None,
    available_kb: int | None = None,
    gpu: tuple[int, int] | None = None,
) -> dict[str, Any] | None:
    """The forecast of the cell whose trial ended with `outcome` (None where the trial decided nothing:
    blocked, unavailable, out of the trial's memory). `extra_kb`: the trial's own peak memory;
    `kernel_kb`: the kernel's resident memory now; `available_kb`: what more the kernel may take; `gpu`:
    the kernel's CUDA allocation now and what more it may take, kB (`gpu_kb`; None: no CUDA)."""
    status = outcome.get("status")
    elapsed = float(outcome.get("elapsed_ms") or 0.0) / 1000
    gpu_extra = outcome.get("gpu_extra_kb")
    gpu_extra_kb = int(gpu_extra) if isinstance(gpu_extra, (int, float)) else None
    if status == "timed_out":  # the cell ran past the budget: it takes at least that long
        progress = outcome.get("progress") or {}
        elapsed = float(progress.get("elapsed_ms") or outcome.get("elapsed_ms") or 0.0) / 1000
        return memory({"seconds": round(elapsed, 2), "seconds_low": round(elapsed, 2), "seconds_high": None,
                        "at_least": True, "basis": "observed", "projected_from": []},
                       extra_kb, 0, kernel_kb, available_kb, None)  # fmt: skip
    if status not in ("finished", "crashed"):
        return None
    quick = outcome.get("quick") or {}
    loops, counting = _own_time([loop for loop in quick.get("loops") or [] if isinstance(loop, dict)], quick)
    elapsed = max(elapsed - counting, 0.5 * elapsed)  # the cell's own time: the trial counted its loops
    cut = [loop for loop in loops if loop.get("cut")]
    if not cut:
        whole = _threaded({"seconds": round(elapsed, 2), "seconds_low": round(elapsed, 2),
                           "seconds_high": round(elapsed, 2), "at_least": False, "basis": "observed",
                           "projected_from": []}, outcome.get("threads"))  # fmt: skip
        ahead = memory(whole, extra_kb, 0, kernel_kb, available_kb, None)
        return gpu_memory(ahead, gpu, gpu_extra_kb, 0.0, None)
    mid = low = high = 0.0
    at_least = False
    grows_kb = gpu_grows_kb = 0.0
    worst: tuple[float, dict[str, Any]] | None = None  # the loop whose iterations add the most memory
    gpu_worst: tuple[float, dict[str, Any]] | None = None  # ... the most GPU memory
    groups: dict[Any, list[dict[str, Any]]] = {}
    for n, loop in enumerate(cut):
        key = loop.get("stmt") if loop.get("stmt") is not None and not loop.get("earlier") else ("own", n)
        groups.setdefault(key, []).append(loop)
    growing = {
        loop.get("stmt"): _progression(loop) for loop in loops if _grows(loop) and not loop.get("earlier")
    }
    for key, group in groups.items():
        extra = _group(group, growing.get(key))
        if extra is None:
            at_least = True
            continue
        mid, low, high = mid + extra[0], low + extra[1], high + extra[2]
        for loop in group:
            per = _growth_per_iteration(loop)
            left = _left(loop)
            if per and left:
                grows_kb += per * left
                if worst is None or per > worst[0]:
                    worst = (per, loop)
            per = _growth_per_iteration(loop, "gpu_steady_kb")
            if per and left:
                gpu_grows_kb += per * left
                if gpu_worst is None or per > gpu_worst[0]:
                    gpu_worst = (per, loop)
    forecast = {"seconds": round(elapsed + mid, 2), "seconds_low": round(elapsed + low, 2),
                "seconds_high": None if at_least else round(elapsed + high, 2), "at_least": at_least,
                "basis": "projected", "projected_from": [_basis(loop) for loop in cut][:6]}  # fmt: skip
    forecast = _threaded(forecast, outcome.get("threads"))
    ahead = memory(forecast, extra_kb, grows_kb, kernel_kb, available_kb, worst)
    return gpu_memory(ahead, gpu, gpu_extra_kb, gpu_grows_kb, gpu_worst)


def _threaded(forecast: dict[str, Any], sampled: Any) -> dict[str, Any]:
    """`forecast`'s times on the kernel's threads, where its trial ran torch's compute on fewer
    (`sampled`: threads.Sampler's report); as it is otherwise."""
    if not isinstance(sampled, dict):
        return forecast
    n, share = sampled.get("kernel"), sampled.get("share")
    if not isinstance(n, int) or n <= 1 or not isinstance(share, (int, float)) or not 0.05 <= share <= 1:
        return forecast
    assumed = 1 - share + share / n**SCALING
    best = 1 - share + share / n
    seconds = float(forecast["seconds"])
    # a lower bound stays one: at best the kernel's threads speed it up n times
    forecast["seconds"] = round(seconds * (best if forecast.get("at_least") else assumed), 2)
    forecast["seconds_low"] = round(float(forecast["seconds_low"]) * best, 2)
    forecast["basis"] = "projected"
    forecast["threads"] = {"trial": 1, "kernel": n, "share": round(float(share), 3)}
    return forecast


def _own_time(loops: list[dict[str, Any]], quick: dict[str, Any]) -> tuple[list[dict[str, Any]], float]:
    """The loops with what counting their iterations cost taken off their seconds (the trial's, not the
    real run's): a loop's own iterations', and an outer loop's also those of the inner loops of its
    statement; a row-wise library call's projection whole also less what counting all its rows would
    cost. And the seconds counting cost the trial in all, which the real run does not spend."""
    found = quick.get("overhead")
    found = found if isinstance(found, dict) else {}
    cost: dict[str, list[float]] = {}
    for kind in ("for", "while", "rows", "handed"):
        rates = found.get(kind)
        if isinstance(rates, list) and len(rates) == 3 and all(isinstance(r, (int, float)) for r in rates):
            cost[kind] = rates
    if "for" not in cost:
        return loops, 0.0
    handed = cost.pop("handed", cost["for"])[2]
    cost["for"] = [*cost["for"], handed]
    cost["comprehension"] = cost["for"]
    cost.setdefault("while", cost["for"])
    inner: dict[Any, float] = {}  # seconds the inner loops' counting cost, by statement
    spent_all = 0.0
    for loop in loops:
        if loop.get("kind") in cost:
            spent = _counting_s(loop, cost[loop["kind"]])
            spent_all += spent
            if int(loop.get("runs") or 1) > 1:
                inner[loop.get("stmt")] = inner.get(loop.get("stmt"), 0.0) + spent
    out = []
    for loop in loops:
        if loop.get("kind") not in cost or not loop.get("seconds"):
            out.append(loop)
            continue
        spent = _counting_s(loop, cost[loop["kind"]])
        spent += inner.get(loop.get("stmt"), 0.0) if int(loop.get("runs") or 1) == 1 else 0.0
        seconds = float(loop["seconds"])
        own = {**loop, "seconds": max(seconds - spent, 0.1 * seconds)}  # the calibration is a guess too
        if loop["kind"] == "rows" and isinstance(loop.get("total"), int):
            every = _counting_s({"runs": 1, "iterations": loop["total"]}, cost["rows"])
            for key in ("whole_s", "whole_high_s"):
                if isinstance(loop.get(key), (int, float)):
                    own[key] = max(float(loop[key]) - every, 0.1 * float(loop[key]))
        out.append(own)
    return out, spent_all


def _counting_s(loop: dict[str, Any], cost: list[float]) -> float:
    """Seconds counting the loop cost: each run's start and end, its first 64 iterations at the first
    rate, the rest at the second (`cost`, from `loops.Runtime.overhead`), those of runs handed to C
    iterators at the fourth where there is one: an inner loop of 8 iterations run 600,000 times is
    mostly starts."""
    runs = max(int(loop.get("runs") or 1), 1)
    n = int(loop.get("iterations") or 0)
    handed = min(int(loop.get("handed") or 0), n) if len(cost) > 3 else 0
    first = min(n - handed, runs * 64)
    rest = n - handed - first
    return runs * float(cost[0]) + first * float(cost[1]) + rest * float(cost[2]) + handed * float(cost[-1])


def _left(loop: dict[str, Any]) -> int:
    total, runs = loop.get("total"), max(int(loop.get("runs") or 1), 1)
    if not isinstance(total, int):
        return 0
    return max(total * runs - int(loop.get("iterations") or 0), 0)


def _rates(loop: dict[str, Any]) -> tuple[float, float] | None:
    """(steady, with warm-up) seconds per iteration; None where the loop was not timed."""
    seconds, n = float(loop.get("seconds") or 0.0), int(loop.get("iterations") or 0)
    if not seconds or not n or loop.get("kind") in _SAMPLED:
        return None
    every = seconds / n
    first = loop.get("first_s")
    steady = (seconds - float(first)) / (n - 1) if isinstance(first, (int, float)) and n > 1 else every
    return max(steady, 0.0), every


def _grows(loop: dict[str, Any]) -> bool:
    """A loop whose runs had different lengths: an inner loop over `range(i)` or `range(i, n)`."""
    return int(loop.get("runs") or 1) > 1 and loop.get("shortest") is not None


def _progression(loop: dict[str, Any]) -> tuple[float, float] | None:
    """An inner loop's length at its outer loop's first iteration and its change per outer iteration,
    from its first and last runs' lengths (None where they were not told)."""
    first, last, runs = loop.get("first_len"), loop.get("last_len"), int(loop.get("runs") or 1)
    if not isinstance(first, int) or not isinstance(last, int) or runs < 2:
        return None
    return float(first), (last - first) / (runs - 1)


def _work(m: int, start: float, step: float) -> float:
    """The inner iterations of an outer loop's first `m` iterations, its inner length `start + step * i`
    (never below 0)."""
    if step < 0:
        m = min(m, int(start / -step) + 1)
    return max(m * start + step * m * (m - 1) / 2, 0.0)


def _group(
    group: list[dict[str, Any]], growing: tuple[float, float] | None
) -> tuple[float, float, float] | None:
    """Seconds a statement's cut loops add when run whole: (projection, low, high); None when one of them
    has no length or no time. `growing`: an inner loop of the statement whose length changes each time its
    outer loop comes round (its first length and the change): the outer loop's later iterations cost
    more (or less) than its first, in proportion to the inner iterations they hold."""
    sampled = [loop for loop in group if loop.get("whole_s") is not None]
    if sampled and len(sampled) < len(group):
        return _with_sampled_calls(group, sampled, growing)
    scale_steady = scale_every = 1.0
    measured = 0.0
    if all(loop.get("whole_s") is not None for loop in group):  # sampled library calls, timed at two sizes
        added = _sampled_extra(group)
        mid, high = sum(a for a, _ in added), sum(h for _, h in added)
        return max(mid, 0.0), max(mid, 0.0) / MARGIN, max(high, 0.0) * MARGIN
    for loop in group:
        total, rates = loop.get("total"), _rates(loop)
        if not isinstance(total, int) or rates is None:
            return None
        # the time of the loop's runs whole, against the measured: per iteration, steady and with warm-up
        factor = _factor(loop, growing)
        steady, every = rates
        measured = max(measured, float(loop.get("seconds") or 0.0))
        scale_steady *= factor * (steady / every if every else 1.0)
        scale_every *= factor
    nested = len(group) > 1 and any(int(loop.get("runs") or 1) > 1 for loop in group)
    if nested:  # the outer loop's measured time holds the inner ones': scale it by every factor
        fast, slow = sorted((measured * scale_steady, measured * scale_every))
        return (
            max(measured * scale_steady - measured, 0.0),
            max(fast - measured, 0.0) / MARGIN,
            (max(slow - measured, 0.0) * MARGIN),
        )
    mid = low = high = 0.0
    for loop in group:
        seconds, (steady, every) = float(loop.get("seconds") or 0.0), _rates(loop) or (0.0, 0.0)
        if growing and int(loop.get("runs") or 1) == 1:  # its later iterations cost more, or less
            extra = seconds * (_factor(loop, growing) - 1)
            mid, low, high = mid + extra, low + extra / MARGIN, high + extra * MARGIN
            continue
        left = _left(loop)  # the iterations left, at the steady rate (the warm-up is behind it)
        mid += steady * left
        low += min(steady, every) * left / MARGIN
        high += max(steady, every) * left * MARGIN
    return mid, low, high


def _sampled_extra(calls: list[dict[str, Any]]) -> list[tuple[float, float]]:
    """Each library call run on a sample: the seconds its runs whole add to what its samples ran, and its
    range's high end's. Each run that ran on a sample (a loop over C that ran whole: the others ran whole
    in the trial) is taken as the last one, whose sizes were timed."""
    added = []
    for call in calls:
        runs = max(int(call.get("sampled") or call.get("runs") or 1), 1)
        seconds = float(call.get("seconds") or 0.0)
        whole = float(call["whole_s"])
        added.append((runs * (whole - seconds), runs * (float(call.get("whole_high_s") or whole) - seconds)))
    return added


def _with_sampled_calls(
    group: list[dict[str, Any]], sampled: list[dict[str, Any]], growing: tuple[float, float] | None
) -> tuple[float, float, float] | None:
    """A statement whose cut loops hold library calls run on a sample (a KMeans fit in a loop over k):
    each call's time whole replaces its sample's in what the loops measured (`runs` calls of `whole_s`
    where `seconds` ran), then the loops are projected as loops. Not the calls' rows as iterations of a
    nested loop: a fit is not linear in its rows."""
    added = _sampled_extra(sampled)
    extra, extra_high = sum(max(a, 0.0) for a, _ in added), sum(max(h, 0.0) for _, h in added)
    loops = []
    for loop in group:
        if loop.get("whole_s") is not None:
            continue
        if int(loop.get("runs") or 1) == 1:  # the outermost: its iterations each held calls
            n = max(int(loop.get("iterations") or 1), 1)
            first = loop.get("first_s")
            loop = {**loop, "seconds": float(loop.get("seconds") or 0.0) + extra}
            if isinstance(first, (int, float)):
                loop["first_s"] = float(first) + extra / n
        loops.append(loop)
    projected = _group(loops, growing)
    if projected is None:
        return None
    mid, low, high = projected
    return mid + extra, low + extra / MARGIN, high + extra_high * MARGIN


def _factor(loop: dict[str, Any], growing: tuple[float, float] | None) -> float:
    """How many times the loop's measured iterations its runs whole are: for an outer loop whose inner
    loop's length changes, the inner iterations of all its iterations over those of the ones that ran."""
    runs, n = max(int(loop.get("runs") or 1), 1), max(int(loop.get("iterations") or 1), 1)
    total = int(loop["total"])
    if growing is not None and runs == 1:
        ran = _work(n, *growing)
        if ran > 0:
            return _work(total, *growing) / ran
    return total * runs / n


def _growth_per_iteration(loop: dict[str, Any], key: str = "steady_kb") -> float:
    """kB the process's resident memory (`gpu_steady_kb`: its CUDA allocation) grew per iteration after
    the first (what each one keeps)."""
    steady, n, runs = (
        loop.get(key),
        int(loop.get("iterations") or 0),
        max(int(loop.get("runs") or 1), 1),
    )
    if not isinstance(steady, (int, float)) or n <= runs:
        return 0.0
    return float(steady) / (n - runs)


def _basis(loop: dict[str, Any]) -> dict[str, Any]:
    """What a projection read from one cut loop, for the panel."""
    rates = _rates(loop)
    return {"line": loop.get("line"), "kind": loop.get("kind"), "iterations": loop.get("iterations"),
            "total": loop.get("total"), "runs": loop.get("runs"),
            "seconds_per_iteration": None if rates is None else round(rates[0], 4),
            "memory_kb_per_iteration": round(_growth_per_iteration(loop), 1)}  # fmt: skip


def memory(
    forecast: dict[str, Any],
    extra_kb: int,
    grows_kb: float,
    kernel_kb: int | None,
    available_kb: int | None,
    worst: tuple[float, dict[str, Any]] | None,
) -> dict[str, Any]:
    """`forecast` with its memory fields: the kernel's `kernel_kb` plus the trial's peak `extra_kb` plus
    `grows_kb` the cut loops would add, against `available_kb` more; out of memory only where that peak
    exceeds it, at the iteration of `worst` (the loop whose iterations keep the most) it runs out."""
    forecast.update(peak_memory_mb=None, memory_available_mb=None, gpu_peak_mb=None, gpu_available_mb=None,
                    out_of_memory=False, runs_out_at=None)  # fmt: skip
    if kernel_kb is None:
        return forecast
    peak = kernel_kb + max(extra_kb, 0) + grows_kb
    forecast["peak_memory_mb"] = round(peak / 1024, 1)
    if available_kb is None:
        return forecast
    can = kernel_kb + available_kb
    forecast["memory_available_mb"] = round(can / 1024, 1)
    if peak > can:
        forecast["out_of_memory"] = True
        forecast["runs_out_at"] = _runs_out(worst, can - kernel_kb - max(extra_kb, 0))
    return forecast


def gpu_memory(
    forecast: dict[str, Any] | None,
    gpu: tuple[int, int] | None,
    extra_kb: int | None,
    grows_kb: float,
    worst: tuple[float, dict[str, Any]] | None,
) -> dict[str, Any] | None:
    """`forecast` with its GPU fields: the kernel's CUDA allocation (`gpu`: it and what more the kernel may
    take) plus the trial's peak above its inputs `extra_kb` plus `grows_kb` the cut loops would keep; out
    of memory only where a projected growth takes that past what the kernel may hold, at the iteration of
    `worst` it runs out (the earlier, where its RAM runs out too). Unchanged where the kernel has no CUDA
    or the trial counted none (a fork, which never runs on the kernel's GPU)."""
    if forecast is None or gpu is None or extra_kb is None:
        return forecast
    kernel_kb, more_kb = gpu
    peak = kernel_kb + max(extra_kb, 0) + grows_kb
    can = kernel_kb + max(more_kb, 0)
    forecast["gpu_peak_mb"] = round(peak / 1024, 1)
    forecast["gpu_available_mb"] = round(can / 1024, 1)
    if peak > can and grows_kb > 0:  # what the trial saw whole fitted beside the kernel's, with less room
        forecast["out_of_memory"] = True
        at = _runs_out(worst, can - kernel_kb - max(extra_kb, 0))
        ram = forecast.get("runs_out_at")
        if at is not None and (ram is None or at["iteration"] < ram["iteration"]):
            forecast["runs_out_at"] = at
    return forecast


def _runs_out(worst: tuple[float, dict[str, Any]] | None, room: float) -> dict[str, Any] | None:
    """Where the loop `worst` (kB its iterations keep, the loop) fills `room` kB: its line and iteration."""
    if worst is None:
        return None
    per, loop = worst
    at = int(loop.get("iterations") or 0) + max(int(room / per), 0)
    total = int(loop.get("total") or 0) * max(int(loop.get("runs") or 1), 1)
    return {"line": loop.get("line"), "iteration": at, "of": total}


# -- what the kernel has and may have (read in the kernel, never in the sandboxed trial) ----------------


def gpu_kb() -> tuple[int, int] | None:
    """The kernel's CUDA allocation and what more it may take (the device's free memory plus what torch's
    cache holds unused), kB; None where torch has not initialised CUDA here (never asked: it would)."""
    held = cudamemory.COUNTERS.device()
    if held is None:
        return None
    allocated, reserved, free = held
    return allocated // 1024, (max(free, 0) + max(reserved - allocated, 0)) // 1024


def resident_kb(pid: int | str = "self") -> int | None:
    """A process's resident memory (VmRSS), kB."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def available_kb() -> int | None:
    """What more this process may take: the machine's available memory, or less where its cgroup's limit
    (v2 `memory.max`, v1 `memory.limit_in_bytes`) leaves less. None where /proc says nothing (not Linux)."""
    machine = _meminfo("MemAvailable")
    if machine is None:
        return None
    room = _cgroup_room()
    return machine if room is None else min(machine, room)


def _meminfo(key: str) -> int | None:
    try:
        with open("/proc/meminfo", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def _cgroup_room(root: str = "/sys/fs/cgroup", membership: str = "/proc/self/cgroup") -> int | None:
    """kB left under this process's cgroup memory limit; None without a limit."""
    try:
        with open(membership, encoding="ascii", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        controllers, path = parts[1], parts[2].lstrip("/")
        if controllers == "":  # v2: one unified hierarchy
            return _room(os.path.join(root, path, "memory.max"), os.path.join(root, path, "memory.current"))
        if "memory" in controllers.split(","):  # v1: the memory controller's own hierarchy
            base = os.path.join(root, "memory", path)
            return _room(
                os.path.join(base, "memory.limit_in_bytes"), os.path.join(base, "memory.usage_in_bytes")
            )
    return None


def _room(limit_file: str, usage_file: str) -> int | None:
    try:
        with open(limit_file, encoding="ascii") as fh:
            limit = fh.read().strip()
        with open(usage_file, encoding="ascii") as fh:
            usage = int(fh.read().strip())
    except (OSError, ValueError):
        return None
    if limit == "max" or not limit.isdigit() or int(limit) >= 1 << 60:  # v1 says "no limit" with a huge one
        return None
    return max(int(limit) - usage, 0) // 1024
