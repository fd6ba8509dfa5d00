"""The quick trial's runtime: each loop of the cell counted, and cut after its first k iterations when
what is left of it would outlast the budget (`Runtime`, installed in the child's namespace as
`__crane_quick__`; `quick.rewrite` wraps the cell's loops in its calls). A loop records how many
iterations ran, whether it was cut and its length when known; the dataflow helpers here tell, after a
crash, which statements of the cell read what the cut loops touched (`quick.judge` decides from that).
Stdlib only.
"""

from __future__ import annotations

import ast
import contextlib
import itertools
import operator
import re
import time
import types
from collections.abc import Iterable, Iterator
from typing import Any

from . import cudamemory, libcalls

NAME = "__crane_quick__"
DEFAULT_K = 2
LONG_S = 0.5  # a loop projected to run longer than this is cut after its first k iterations
# A loop of known length runs at least this long (or a tenth of what is left) before it may be cut: its
# rate is then measured over more than two cold iterations (pandas' first .iloc, a first allocation).
SETTLE_S = 0.25
PROGRESS_S = 0.5  # a full trial tells the kernel how far it got at most this often
# A while loop reads its memory every 16th iteration, no sooner than this many times the last read's
# cost after it: the reads take at most about 3 % of the loop's time however slow malloc's are.
READ_SPACING = 32
NEVER = 1 << 62  # k of a full trial: nothing is cut


class Loop:
    """One loop of the cell (or a library call): its runs, the iterations they made, the seconds they took
    (a `for` loop's and a `while` loop's own, measured; 0.0 where the library call timed itself), the
    first iteration's seconds (a warm-up: a first forward pass, a first batch), how much the process's
    resident memory grew while it ran, and whether it was cut and its length per run when known (the
    shortest and longest when runs differ: an inner loop whose length grows with the outer index). Where
    the process counts CUDA memory (cudamemory.py), the same growths on the GPU and one iteration's peak."""

    __slots__ = ("cut", "first_len", "first_s", "gpu_grew_kb", "gpu_peak_kb", "gpu_steady_kb", "grew_kb",
                 "handed", "iterations", "kind", "last_len", "line", "runs", "sampled", "seconds", "shortest",
                 "steady_kb", "total", "whole_high_s", "whole_s")  # fmt: skip

    def __init__(self, line: int, kind: str) -> None:
        self.line, self.kind = line, kind
        self.runs = self.iterations = 0
        self.handed = 0  # iterations of runs whose rest was handed to C iterators (`Runtime._runs`)
        self.cut = False
        self.total: int | None = None
        self.shortest: int | None = None
        self.first_len: int | None = None  # the first run's length and the last's: which way they go
        self.last_len: int | None = None
        # a sampled library call's time on all its rows, projected from its timed sizes (libcalls)
        self.whole_s: float | None = None
        self.whole_high_s: float | None = None
        self.sampled = 0  # the runs of a library call that ran on a sample (`whole_s` is the last one's)
        self.seconds = 0.0
        self.first_s: float | None = None
        self.grew_kb = 0  # resident memory's growth over its measured runs
        self.steady_kb = 0  # the part after each run's first iteration (what every iteration adds)
        # CUDA memory as the two above, and one iteration's highest transient peak (None: not counted)
        self.gpu_grew_kb: int | None = None
        self.gpu_steady_kb = self.gpu_peak_kb = 0

    def add_gpu(self, grew_kb: int, steady_kb: int, peak_kb: int) -> None:
        """A run's CUDA memory: its growth, the part after its first iteration, one iteration's peak."""
        self.gpu_grew_kb = (self.gpu_grew_kb or 0) + grew_kb
        self.gpu_steady_kb += steady_kb
        self.gpu_peak_kb = max(self.gpu_peak_kb, peak_kb)

    def length(self, n: int) -> None:
        """A run's length (`len` of what it iterates, or Keras' epochs)."""
        self.total = n if self.total is None else max(self.total, n)
        self.shortest = n if self.shortest is None else min(self.shortest, n)
        self.first_len = n if self.first_len is None else self.first_len
        self.last_len = n

    def full_s(self) -> float | None:
        """The seconds the loop's runs would take whole, projected from the iterations that ran (its
        measured seconds when it was not cut); None when that cannot be told (no length, nothing timed)."""
        if not self.cut:
            return self.seconds
        if self.whole_s is not None:
            return self.whole_s
        if self.total is None or not self.iterations or not self.seconds:
            return None
        return self.seconds / self.iterations * self.total * max(self.runs, 1)

    def report(self) -> dict[str, Any]:
        full = self.full_s()
        out = {"line": self.line, "kind": self.kind, "iterations": self.iterations, "runs": self.runs,
               "cut": self.cut, "total": self.total, "seconds": round(self.seconds, 4),
               "full_s": None if full is None else round(full, 3)}  # fmt: skip
        if self.first_s is not None:
            out["first_s"] = round(self.first_s, 4)
        if self.handed:
            out["handed"] = self.handed
        if self.grew_kb:
            out["grew_kb"], out["steady_kb"] = self.grew_kb, self.steady_kb
        if self.gpu_grew_kb is not None:
            out["gpu_grew_kb"], out["gpu_steady_kb"] = self.gpu_grew_kb, self.gpu_steady_kb
            out["gpu_peak_kb"] = self.gpu_peak_kb
        if self.shortest is not None and self.shortest != self.total:
            out["shortest"], out["first_len"], out["last_len"] = self.shortest, self.first_len, self.last_len
        if self.whole_s is not None:
            out["sampled"] = self.sampled
            out["whole_s"] = round(self.whole_s, 3)
            out["whole_high_s"] = round(self.whole_high_s or self.whole_s, 3)
        return out


_OVERHEAD: dict[str, list[float]] = {}  # seconds one counted iteration costs, once measured (`overhead`)
# A run of a for loop is handed to C iterators once what is left of it projects within this share of the
# trial's time left (`Runtime._runs`).
HANDOFF = 0.25


class _Run:
    """One run of a for loop: its start on the loops' clock, its memory at the start and after its first
    iteration, its CUDA counting, and whether its rest was handed to C iterators."""

    __slots__ = ("after_first", "at_start", "gpu", "handed", "started", "starts")

    def __init__(self) -> None:
        self.started = 0.0
        self.starts = 0  # the runtime's count of runs and calls begun, at this run's start
        self.at_start: tuple[int, int] | None = None
        self.after_first: tuple[int, int] | None = None
        self.gpu: cudamemory.Iterations | None = None
        self.handed = False


_FIRST = operator.itemgetter(0)


def resident_kb() -> int:
    """This process's resident memory now (kB): one `pread` of /proc/self/statm on a descriptor kept open
    (opened once per process: a forked child's /proc/self is not its parent's). Where it cannot be read,
    the peak so far (`ru_maxrss`), which shows growth only past the process's earlier peak."""
    import os

    pid = os.getpid()
    if _STATM[0] != pid:
        try:
            _STATM[:] = [pid, os.open("/proc/self/statm", os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))]
        except OSError:
            _STATM[:] = [pid, -1]
    if _STATM[1] >= 0:
        try:
            pages = int(os.pread(_STATM[1], 128, 0).split()[1])
            return pages * (os.sysconf("SC_PAGE_SIZE") // 1024)
        except (OSError, ValueError, IndexError):
            pass
    import resource

    try:
        return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    except (OSError, ValueError):
        return 0


# (pid, descriptor) of /proc/self/statm for `resident_kb`: reopened in a new process
_STATM: list[int] = [-1, -1]


def malloc_kb() -> int:
    """What malloc holds for the process now (kB: its arenas' blocks in use and its own mappings), from
    glibc's `mallinfo2`; 0 where there is none. Unlike the resident memory it grows when new blocks reuse
    pages an earlier free left resident (a kernel that once held more)."""
    if _MALLINFO[0] is None:
        _MALLINFO[0] = _mallinfo()
    call = _MALLINFO[0]
    if not call:
        return 0
    try:
        info = call()
        return int(info.uordblks + info.hblkhd) // 1024
    except Exception:
        return 0


def _mallinfo() -> Any:
    try:
        import ctypes

        class MallInfo2(ctypes.Structure):
            _fields_ = [(name, ctypes.c_size_t) for name in (
                "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
                "fordblks", "keepcost")]  # fmt: skip

        call = ctypes.CDLL(None).mallinfo2
        call.restype = MallInfo2
        call.argtypes = []
        return call
    except (OSError, AttributeError, ImportError):
        return False  # not glibc, or older than 2.33


_MALLINFO: list[Any] = [None]


def footprint() -> tuple[int, int]:
    """(resident kB, malloc's kB) now: what a loop's iterations keep shows in one or the other."""
    return resident_kb(), malloc_kb()


def grew(before: tuple[int, int], after: tuple[int, int]) -> int:
    """kB held more `after` than `before`: the larger of the two measures' growths."""
    return max(0, after[0] - before[0], after[1] - before[1])


class Plan:
    """What the rewrite found: the loops by id (line, kind, the index of their top-level statement) and
    the cell's functions that hold loops."""

    def __init__(self) -> None:
        self.loops: dict[int, tuple[int, str, int]] = {}
        self.functions: dict[str, set[int]] = {}
        self.fitted: dict[
            int, set[str]
        ] = {}  # library calls: the receiver, and the names assigned the result
        self.body: list[ast.stmt] = []


class Runtime:
    """Installed in the child's namespace as `__crane_quick__`; the wrapped loops call it."""

    def __init__(self, plan: Plan, k: int = DEFAULT_K, long_s: float = LONG_S) -> None:
        self.plan, self.k, self.long_s = plan, max(1, int(k)), long_s
        self.loops = {lid: Loop(line, kind) for lid, (line, kind, _) in plan.loops.items()}
        # Loops of functions an earlier cell of the same process defined (a chain's step, a run from the
        # top): cut as the cell's own, but where they stand is another cell's, so a crash after one was
        # cut depends on it.
        self.earlier: dict[int, Loop] = {}
        self.fits: list[Loop] = []  # Keras fit calls
        self.started: dict[int, float] = {}  # while loops: their run's start
        self.count: dict[int, int] = {}  # ... the iterations it began
        self.before: dict[int, float] = {}  # ... the seconds of their earlier runs
        self.done: dict[int, int] = {}  # ... and their iterations
        self.peaks: dict[int, tuple[tuple[int, int], int]] = {}  # while loops: memory at their run's start
        self.firsts: dict[int, tuple[tuple[int, int], int]] = {}  # ... and after its first iteration
        self.read_at: dict[int, tuple[float, float]] = {}  # ... and when the last read ended, its seconds
        self.gpus: dict[int, cudamemory.Iterations] = {}  # while loops: their run's CUDA counting
        self.first_at: dict[int, float] = {}  # while loops: when their run's first iteration ended
        # while loops that count to a bound: the counter's first values, then the run's length (None:
        # not told)
        self.counted: dict[int, list[float] | int | None] = {}
        self.counters: dict[int, tuple[Any, str]] = {}  # ... and the reader of counter and bound, the op
        self.sizes: dict[int, list[int | None]] = {}  # lengths of enumerate/zip arguments (`size`)
        self.framed: dict[int, int | None] = {}  # the length of a frame whose rows a loop iterates (`rows`)
        self.filename = ""
        self.budget_s = 0.0
        self.deadline = 0.0  # when the trial's budget ends (0: no budget known)
        self.writer = -1  # the pipe to the kernel, for progress
        self.ns: dict[str, Any] = {}
        self.skipped: list[int] = []  # lines of the cell's asserts passed over (see `skip`)
        self.globals: set[str] = set()  # names the functions of sampled library calls use (libcalls)
        self.sent = time.monotonic()
        self.reading_s = 0.0  # seconds spent reading memory (`_footprint`), off the loops' clock
        self.handoff = True  # a for loop's run that fits may be handed to C iterators (`_runs`)
        self.starts = 0  # runs of loops and library calls begun: one inside a run keeps it checked

    def clock(self) -> float:
        """The loops' clock: monotonic seconds less those the runtime spent reading memory, so a loop's
        time (and its outer loops') is its own."""
        return time.monotonic() - self.reading_s

    def _footprint(self) -> tuple[tuple[int, int], float]:
        """`footprint()` and the seconds reading it took. Not cheap: glibc's `mallinfo2` walks every free
        chunk of malloc's heap (7 us in a kernel that imported torch, 24 ms in a heap of 100,000 freed
        blocks): the loops' clock leaves the reads out, and a while loop spaces them by their cost."""
        started = time.monotonic()
        held = footprint()
        spent = time.monotonic() - started
        self.reading_s += spent
        return held, spent

    def _cut(self, loop: Loop) -> None:
        loop.cut = True

    def inherit(self, previous: Runtime) -> None:
        """Know the loops of the runtime before this one (and those it knew), counted afresh."""
        for lid, old in {**previous.earlier, **previous.loops}.items():
            if lid not in self.loops:
                self.earlier[lid] = Loop(old.line, old.kind)

    def _loop(self, lid: int) -> Loop:
        loop = self.loops.get(lid) or self.earlier.get(lid)
        if loop is None:  # an earlier runtime this one did not know of: a loop all the same
            loop = self.earlier[lid] = Loop(0, "for")
        return loop

    def long(
        self,
        started: float,
        n: int,
        total: int | None,
        first: float = 0.0,
        mark: tuple[float, int] | None = None,
        now: float | None = None,
    ) -> bool:
        """Whether a loop that ran `n` iterations since `started` (its first one ended at `first`) is
        long enough to cut: what is left of it, projected from its length, would outlast the trial's
        budget (and LONG_S); length unknown, it ran half the budget already. The projection takes the
        faster of the rate with and without the first iteration (warm-up: a first forward pass, a
        first batch), so a loop that fits in the budget runs whole and the trial sees all of it. Where
        the iterations since `mark` (the time and count at about half of them) ran clearly slower than
        those before it (an inner loop that grows with the outer index), the rate is taken to keep
        growing as it did. `now`: the time on the clock `started` was read from (monotonic by default)."""
        now = time.monotonic() if now is None else now
        elapsed = now - started
        left = self.left(time.monotonic())
        if total is not None:
            if elapsed < min(SETTLE_S, 0.1 * left):
                return False  # a fast loop's first iterations (cold caches) say little of its rate
            rate = elapsed / max(n, 1)
            if first and n > 1:
                rate = min(rate, (now - first) / (n - 1))
            rates = _slowing(started, n, mark, now)
            if rates is not None:  # their centres are n/2 apart
                early, late, after = rates
                slope = (late - early) / (n / 2)
                at_n = late + slope * after / 2
                rest = total - n
                return at_n * rest + slope * rest * rest / 2 > left
            return rate * (total - n) > left
        return elapsed > max(self.long_s, 0.5 * self.budget_s)

    def left(self, now: float) -> float:
        """Seconds left of the trial's budget (at least LONG_S; LONG_S when no budget is known)."""
        return max(self.long_s, self.deadline - now) if self.deadline else self.long_s

    def call(self, lid: int, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        """A call of a known long library API (libcalls.py): on a sample of its rows when long."""
        self.starts += 1
        return libcalls.run(self, self._loop(lid), fn, args, kwargs)

    def note_globals(self, loop: Loop, func: Any) -> None:
        """A sampled call ran `func` on its first rows only: whatever global it changes is touched."""
        code = getattr(getattr(func, "func", func), "__code__", None)
        self.globals |= set(getattr(code, "co_names", ()))

    def size(self, lid: int, arg: Any) -> Any:
        """An argument of `enumerate` or `zip` in a loop's iterable, returned as it is: its length
        noted (the shortest of them) for the loop's run that is about to start."""
        if not isinstance(arg, (enumerate, zip)):  # a nested call's result: its own arguments were noted
            self.sizes.setdefault(lid, []).append(_length(arg))
        return arg

    def rows(self, lid: int, frame: Any) -> Any:
        """The receiver of `frame.iterrows()`/`.itertuples()` in a loop's iterable, returned as it is: a
        pandas frame's length noted (another object's method is not pandas', and tells nothing)."""
        if (type(frame).__module__ or "").startswith("pandas"):
            self.framed[lid] = _length(frame)
        return frame

    def each(self, lid: int, iterable: Iterable[Any]) -> Iterator[Any]:
        loop = self._loop(lid)
        loop.runs += 1
        total = _length(iterable)
        sizes = self.sizes.pop(lid, None)
        framed = self.framed.pop(lid, None)
        if total is None and isinstance(iterable, (types.GeneratorType, map)) and framed is not None:
            total = framed  # the generator (iterrows) or map (itertuples) over a frame's rows
        if total is None and sizes and None not in sizes and type(iterable) in (enumerate, zip):
            total = min(n for n in sizes if n is not None)  # the builtin's own (not a notebook's shadow)
        elif total is None and sizes == [None] and framed is not None and type(iterable) is enumerate:
            total = framed  # enumerate(df.iterrows())
        if total is not None:
            loop.length(total)
        return itertools.chain.from_iterable(self._runs(loop, iter(iterable), total))

    def _runs(self, loop: Loop, it: Iterator[Any], total: int | None) -> Iterator[Iterator[Any]]:
        """One run of a for loop, as the iterables `chain.from_iterable` takes in turn: its checked part
        (`_each`); then, where `_each` found that what is left of the run fits well inside the budget,
        the rest through C iterators only, with no frame of ours per item (an inner loop of 0.1 us
        iterations was counted at about its own cost). Its seconds and memory at its end, its cut, a
        `break` or a crash in its body (this generator is then closed)."""
        run = _Run()
        self.starts += 1
        run.starts = self.starts
        # an inner loop's thousands of runs: its outer loop's growth says it. Read before the clock
        # starts: reading memory is the trial's cost, not the loop's.
        run.at_start = self._footprint()[0] if loop.runs <= 3 else None
        run.gpu = cudamemory.Iterations.here() if run.at_start else None
        run.started = self.clock()
        took: Any = None
        try:
            yield self._each(loop, it, total, run)
            if run.handed:
                took = itertools.count()
                yield map(_FIRST, zip(it, took))
        finally:
            if took is not None:
                got = next(took)
                loop.iterations += got
                loop.handed += got
            loop.seconds += self.clock() - run.started
            if run.at_start:
                end = self._footprint()[0]
                loop.grew_kb += grew(run.at_start, end)
                loop.steady_kb += grew(run.after_first, end) if run.after_first else 0
            if run.gpu is not None:
                loop.add_gpu(*run.gpu.end())

    def _fits(self, run: _Run, n: int, total: int, mark: tuple[float, int], now: float) -> bool:
        """Whether what is left of a run, `n` of `total` iterations since it started, can go without its
        checks: it projects within HANDOFF of the trial's time left at its rate so far; no loop (or
        library call) started inside it, whose length may grow with the run; its later iterations ran
        no slower than its earlier ones."""
        if not self.handoff or self.starts != run.starts or _slowing(run.started, n, mark, now):
            return False
        return (now - run.started) / n * (total - n) < HANDOFF * self.left(time.monotonic())

    def _each(self, loop: Loop, it: Iterator[Any], total: int | None, run: _Run) -> Iterator[Any]:
        gpu, started = run.gpu, run.started
        n, first = 0, 0.0
        mark = (started, 0)  # the time at about half the iterations so far, and their count
        while True:
            if gpu is not None:
                gpu.next(n)
            if n == 1:
                first = self.clock()
                if loop.first_s is None:
                    loop.first_s = first - started
                run.after_first = self._footprint()[0] if run.at_start else None
            # Decided before the next item is taken: a cut loop never runs its producer once more.
            # Past 64 iterations, every 16th: a cheap loop's own rate is not the checks' (a clock
            # read per iteration doubled a 0.1 us inner loop's).
            if n >= self.k and (n < 64 or not n & 15):
                now = self.clock()
                if self.long(started, n, total, first, mark, now):
                    self._cut(loop)
                    return
                if n >= 64 and gpu is None and total is not None and self._fits(run, n, total, mark, now):
                    run.handed = True  # what is left of the run cannot need a cut
                    return
                if n >= 2 * mark[1] and n >= 32:
                    mark = (self.clock(), n)
            if n > 64 and n & 15 and gpu is None:
                # up to the next check, the items pass through C iterators (zip, islice, count),
                # not this frame's code; `count` says how many the loop took, also at its `break`
                took, ahead = itertools.count(), 16 - (n & 15)
                try:
                    yield from map(_FIRST, zip(itertools.islice(it, ahead), took))
                finally:
                    got = next(took)
                    n += got
                    loop.iterations += got
                if got < ahead:
                    return
                continue
            try:
                item = next(it)
            except StopIteration:
                return
            n += 1
            loop.iterations += 1
            if self.writer >= 0 and (n < 64 or not n & 15) and time.monotonic() - self.sent > PROGRESS_S:
                self.progress()
            yield item

    def enter(self, lid: int, counted: Any = None, op: str = "") -> None:
        """The while loop `lid` starts a run. `counted`: where its condition counts a name against a
        bound (`while i < n`), a function that reads both, and `op` the comparison: the run's length,
        told from the counter's first steps."""
        loop = self._loop(lid)
        loop.runs += 1
        self.starts += 1
        if loop.runs <= 3:  # read before its clock starts
            self.peaks[lid] = (self._footprint()[0], loop.grew_kb)
            self.read_at[lid] = (0.0, 0.0)
            gpu = cudamemory.Iterations.here()
            if gpu is not None:
                self.gpus[lid] = gpu
        else:  # as a `for` loop's: an inner loop's many runs, its outer loop's growth says it
            self.peaks.pop(lid, None)
            self.firsts.pop(lid, None)
        self.started[lid], self.count[lid] = self.clock(), 0
        self.before[lid], self.done[lid] = loop.seconds, loop.iterations
        self.counted.pop(lid, None)
        self.counters[lid] = (counted, op)

    def stop(self, lid: int) -> bool:
        """Whether the while loop `lid` stops before its next iteration. Past 64 iterations it is checked
        every 16th: between, one count and no clock (a cheap loop's rate is its own; `leave` reads the
        clock when the run ends)."""
        n = self.count.get(lid, -1)
        if n >= 64 and n & 15 and lid not in self.gpus:  # CUDA's counters: a window each iteration
            self.count[lid] = n + 1
            return False
        if n < 0:  # a run this runtime did not see start (a generator of an earlier chain step resumed)
            self.enter(lid)
            n = 0
        return self._check(lid, n)

    def _check(self, lid: int, n: int) -> bool:
        loop = self._loop(lid)
        gpu = self.gpus.get(lid)
        if gpu is not None:
            gpu.next(n)
        now = self.clock()
        started = self.started[lid]
        loop.seconds = self.before[lid] + now - started  # this run's so far
        loop.iterations = self.done[lid] + n
        if n == 1:
            self.first_at[lid] = now
            if loop.first_s is None:
                loop.first_s = now - started
        counted, op = self.counters.get(lid, (None, ""))
        if counted is not None and n <= max(self.k, 2):
            self._count(lid, loop, n, counted, op)
        if lid in self.peaks and n and (n == 1 or not n & 15):  # every 16th iteration, spaced by cost
            last, cost = self.read_at[lid]
            if n == 1 or now - last >= READ_SPACING * cost:
                self._read(lid, loop, n)
        total = self.counted.get(lid)
        if n >= self.k and self.long(started, n, total if isinstance(total, int) else None,
                                     self.first_at.get(lid, 0.0) if n > 1 else 0.0, None,
                                     self.clock()):  # fmt: skip
            if lid in self.peaks and n > 1:  # its growth up to the cut, whatever the spacing skipped
                self._read(lid, loop, n)
            self._cut(loop)
            return True
        self.count[lid] = n + 1
        if self.writer >= 0 and time.monotonic() - self.sent > PROGRESS_S:
            self.progress()
        return False

    def leave(self, lid: int) -> None:
        """The while loop `lid`'s run ended (its condition, a `break`, a `return`, a crash, a cut): its
        seconds and iterations as they stand."""
        if lid in self.started:
            loop = self._loop(lid)
            loop.seconds = self.before[lid] + self.clock() - self.started[lid]
            loop.iterations = self.done[lid] + self.count[lid]
        gpu = self.gpus.pop(lid, None)
        if gpu is not None:
            self._loop(lid).add_gpu(*gpu.end())

    def _read(self, lid: int, loop: Loop, n: int) -> None:
        """Note the while loop's memory growth since its run began (and since its first iteration) at
        iteration `n`, and when (on the loops' clock) and how long the read took."""
        at, before = self.peaks[lid]
        now_held, spent = self._footprint()
        self.read_at[lid] = (self.clock(), spent)
        loop.grew_kb = before + grew(at, now_held)
        if n == 1:
            self.firsts[lid] = (now_held, loop.steady_kb)
        elif lid in self.firsts:
            at_first, steady = self.firsts[lid]
            loop.steady_kb = steady + grew(at_first, now_held)

    def _count(self, lid: int, loop: Loop, n: int, counted: Any, op: str) -> None:
        """Note the counter at the run's first steps; once `max(k, 2)` iterations ran, the run's length
        where the counter moved by one constant step each (`i += 1`, `t -= dt`) toward its bound. A
        counter that does not (`i *= 2`, a step that varies) or a read that fails leaves it unknown."""
        try:
            value, bound = counted()
            value, bound = _number(value), _number(bound)
        except Exception:
            value = bound = None
        seen = self.counted.get(lid)
        if value is None or bound is None or (n and not isinstance(seen, list)):
            self.counted[lid] = None
            return
        if not n:
            self.counted[lid] = [value]
            return
        assert isinstance(seen, list)
        seen.append(value)
        if n < max(self.k, 2):
            return
        step = seen[1] - seen[0]
        left = _steps_left(value, bound, step, op) if abs(value - seen[0] - step * n) <= 1e-9 * abs(
            step * n) else None  # fmt: skip
        self.counted[lid] = None if left is None else n + left
        if left is not None:
            loop.length(n + left)

    def progress(self) -> None:
        """Tell the kernel how far the cell got (a full trial that runs out of time reports the last)."""
        import json
        import os
        import sys

        self.sent = time.monotonic()
        frame: Any = sys._getframe(1)
        line = None
        while frame is not None:
            if frame.f_code.co_filename == self.filename:
                line = frame.f_lineno  # the outermost frame in the cell wins
            frame = frame.f_back
        outer = [
            v.report()
            for lid, v in sorted(self.loops.items())
            if v.runs and self.plan.loops[lid][1] != "comprehension"
        ]
        message = {"phase": "progress", "line": line, "loops": outer[:3]}
        try:
            os.write(self.writer, (json.dumps(message) + "\n").encode())
        except OSError:
            self.writer = -1

    def report(self) -> dict[str, Any]:
        loops = [{**v.report(), "stmt": self.plan.loops[lid][2]} for lid, v in self.loops.items() if v.runs]
        loops += [{**f.report(), "stmt": _statement(self.plan.body, f.line)} for f in self.fits]
        loops += [{**v.report(), "earlier": True} for v in self.earlier.values() if v.runs]
        out: dict[str, Any] = {"k": self.k, "loops": loops, "cut": any(v["cut"] for v in loops)}
        if out["cut"] or _counting_may_show(loops):
            with contextlib.suppress(Exception):  # never the trial's outcome: the forecast goes without it
                out["overhead"] = self.overhead()
        if self.skipped:
            out["skipped_asserts"] = self.skipped
        return out

    def overhead(self) -> dict[str, list[float]]:
        """Seconds counting costs, less a bare loop's, by kind ("for", "while"): [a run's start and end, an
        iteration among a run's first 64 (each one checked), one after them (every 16th)]; "handed": one
        of a run handed to C iterators; "rows": a row-wise call's function. Measured once
        per process, as a cell's own loops run (the rewritten code at a module's top level, its names
        global): runs of 64 and of 4 iterations tell the first two apart, one long run the third. A
        cheap loop's measured rate holds them and the real run does not: the forecast takes them off."""
        if not _OVERHEAD:
            runtime = Runtime(Plan(), k=self.k, long_s=1e9)  # checks as in the trial, none ends a loop
            # past the runs whose memory is read (an inner loop's many runs): the reads are off the clock
            runtime._loop(0).runs = runtime._loop(1).runs = 3
            runtime.handoff = False  # a run counted to its end; a run handed over is timed below
            short, runs, tiny, many, long = 64, 64, 4, 256, 8192
            for kind, (counted, bare) in _CALIBRATION.items():
                of_short = _extra(counted, bare, runtime, runs, short)
                of_tiny = _extra(counted, bare, runtime, many, tiny)
                first = max((of_short - of_tiny) / (short - tiny), 0.0)
                start = max(of_tiny - tiny * first, 0.0)
                rest = _extra(counted, bare, runtime, 1, long) - of_short
                _OVERHEAD[kind] = [start, first, max(rest / (long - short), 0.0)]
            runtime.handoff = True
            counted, bare = _CALIBRATION["for"]
            handed = _extra(counted, bare, runtime, 1, long) - _extra(counted, bare, runtime, runs, short)
            _OVERHEAD["handed"] = [0.0, 0.0, max(handed / (long - short), 0.0)]
            _OVERHEAD["rows"] = _rows_overhead(runtime)
        return dict(_OVERHEAD)

    # -- after a crash ------------------------------------------------------------------------------

    def _sized_by_the_cut(self, message: str) -> bool:
        """The message names both the size a cut loop or sampled call stopped at and its full size
        ("shapes (11643,1) (4247,1)" after `cross_val_predict` on 4247 of 11643 rows): what the sample
        made met something of the full size, which the full run would not meet."""
        numbers = {int(n) for n in re.findall(r"\d+", message)}
        return any(
            loop.cut and loop.total is not None and loop.iterations != loop.total
            and {loop.iterations, loop.total} <= numbers
            for loop in [*self.loops.values(), *self.fits]
        )  # fmt: skip

    def _sampled_estimators(self) -> set[str]:
        """Names of estimators libcalls fitted on a sample of rows (and nothing else cut): the receiver of
        the fit, and the names its result is assigned to."""
        cut = [lid for lid, loop in self.loops.items() if loop.cut]
        if self.globals or any(f.cut for f in self.fits):
            return set()
        if any(self.loops[lid].kind != "fit" or lid not in self.plan.fitted for lid in cut):
            return set()
        return set().union(*(self.plan.fitted[lid] for lid in cut)) if cut else set()

    def skip(self, index: int, line: int) -> bool:
        """Whether a failed `assert` of the cell (top-level statement `index`) is passed over: it checks
        what the shortened loops computed (`assert len(history) == EPOCHS`, an accuracy threshold), which
        a shortened run fails by itself. The quick trial goes on to the code after it; a crash seen
        later then depends on the cut."""
        touched = self._touched(index, self.ns)
        if touched is None or touched[0] is False:
            return False
        self.skipped.append(line)
        return True

    def _touched(self, index: int | None, ns: dict[str, Any]) -> tuple[bool, bool] | None:
        """Whether top-level statement `index` reads what the cut loops changed: (any value, what they
        built by the count: the names of their own statements and what plain statements derive from
        those). None: the statement is not found, or a cut happened outside the cell."""
        reach = self._reach(index, ns)
        if reach is None:
            return None
        values, counts, calls_user, any_value = reach
        return bool(values) or (calls_user and any_value), bool(counts)

    def _reach(self, index: int | None, ns: dict[str, Any]) -> tuple[set[str], set[str], bool, bool] | None:
        """What `_touched` reads from: the names statement `index` reads that the cut loops changed (any
        value; by the count), whether it calls a function of the cell, whether anything was changed."""
        cut = [self.plan.loops[lid][2] for lid, loop in self.loops.items() if loop.cut]
        fits = [_statement(self.plan.body, f.line) for f in self.fits if f.cut]
        if index is None or None in fits or any(loop.cut for loop in self.earlier.values()):
            return None
        cut_statements = set(cut) | {i for i in fits if i is not None}
        if not cut_statements:
            return set(), set(), False, False
        reads = _names(self.plan.body[index])
        if index in cut_statements:
            return reads | {NAME}, reads | {NAME}, False, True  # never only estimators' names
        values: set[str] = set()
        # what a function's cut loop touched: its callers' stores; globals a sampled call's function uses
        counts: set[str] = {n for n in self.globals if carries(ns.get(n))}
        for i in cut_statements:
            stmt = self.plan.body[i]
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                counts.add(stmt.name)
            else:  # what it binds or changes, and every mutable object it reads
                counts |= _stored(stmt) | {n for n in _names(stmt) if carries(ns.get(n))}
        values |= counts
        for stmt in self.plan.body[min(cut_statements) + 1 : index]:
            names = _names(stmt)
            if names & values:
                values |= _stored(stmt)
            if names & counts:
                counts |= _stored(stmt)
        calls_user = any(_user_function(ns.get(n)) for n in reads)
        return reads & values, reads & counts, calls_user, bool(values)


def _slowing(
    started: float, n: int, mark: tuple[float, int] | None, now: float
) -> tuple[float, float, int] | None:
    """The seconds an iteration took before `mark` (the time and count at about half of the `n` since
    `started`) and after it, and how many ran after it, where the later ran clearly slower (an inner
    loop that grows with the outer index); None where they did not, or too few ran after it to tell."""
    if mark is None or mark[1] <= 0 or n - mark[1] < 16:
        return None
    after = n - mark[1]
    early, late = (mark[0] - started) / mark[1], (now - mark[0]) / after
    return (early, late, after) if late > 1.25 * early else None


def _counting_may_show(loops: list[dict[str, Any]]) -> bool:
    """Whether counting the loops that ran whole may have cost the trial 20 ms or more (at a rough 0.1 us
    an iteration and 1 us a run's start): then what it cost is measured (about 20 ms), to take it off the
    time the trial observed."""
    return sum(1e-7 * int(v.get("iterations") or 0) + 1e-6 * int(v.get("runs") or 0) for v in loops) >= 0.02


# Loops as `quick.rewrite` makes a cell's (and as they are bare), to time what counting costs.
_CALIBRATION = {
    "for": (
        "for _r in range(runs):\n    for _ in __crane_quick__.each(0, range(n)):\n        pass\n",
        "for _r in range(runs):\n    for _ in range(n):\n        pass\n",
    ),
    "while": (
        "for _r in range(runs):\n    i = 0\n    __crane_quick__.enter(1, lambda: (i, n), '<')\n    try:\n"
        "        while i < n:\n            if __crane_quick__.stop(1):\n                break\n"
        "            i += 1\n    finally:\n        __crane_quick__.leave(1)\n",
        "for _r in range(runs):\n    i = 0\n    while i < n:\n        i += 1\n",
    ),
}


def _rows_overhead(runtime: Runtime) -> list[float]:
    """As `Runtime.overhead`, for the function a row-wise library call calls (`libcalls.counting`): no
    start; a call among the first 64, a call after them."""

    def bare(value: Any) -> Any:
        return value

    def calls(functions: list[Any], n: int) -> float:
        started = time.perf_counter()
        for function in functions:
            for i in range(n):
                function(i)
        return time.perf_counter() - started

    def counted(runs: int) -> list[Any]:
        return [libcalls.counting(runtime, bare, 1 << 40, 1, None, Exception())[0] for _ in range(runs)]

    short, runs, long = 64, 64, 8192
    first = (calls(counted(runs), short) - calls([bare] * runs, short)) / (runs * short)
    warm = counted(1)
    calls(warm, short)
    rest = (calls(warm, long) - calls([bare], long)) / long
    return [0.0, max(first, 0.0), max(rest, 0.0)]


def _extra(counted: str, bare: str, runtime: Runtime, runs: int, n: int) -> float:
    """Seconds counting added to each of `runs` runs of `n` iterations."""
    return (_timed(counted, runtime, runs, n) - _timed(bare, runtime, runs, n)) / runs


def _timed(code: str, runtime: Runtime, runs: int, n: int) -> float:
    """Seconds `code` takes at a module's top level, with `runs` and `n` and the runtime as globals."""
    compiled = compile(code, "<crane-calibration>", "exec")
    namespace = {"__crane_quick__": runtime, "runs": runs, "n": n}
    started = time.perf_counter()
    exec(compiled, namespace)
    return time.perf_counter() - started


def _number(value: Any) -> float | None:
    """A counter's or bound's value as a number (numpy's scalars too); None for anything else."""
    if isinstance(value, bool) or (not isinstance(value, (int, float)) and type(value).__module__ != "numpy"):
        return None
    number = float(value)
    return number if number == number and abs(number) != float("inf") else None


def _steps_left(value: float, bound: float, step: float, op: str) -> int | None:
    """Iterations a `while counter OP bound` loop has left, its condition just found true at `value`,
    the counter moving by `step` each iteration; None where it never reaches the bound this way."""
    import math

    if op in ("<", "<=") and step > 0:
        gap = (bound - value) / step
    elif op in (">", ">=") and step < 0:
        gap = (value - bound) / -step
    elif op == "!=" and step:
        gap = (bound - value) / step
        return round(gap) if gap >= 0 and abs(gap - round(gap)) < 1e-9 else None
    else:
        return None
    if gap < 0:
        return 0
    return math.floor(gap) + 1 if op in ("<=", ">=") else max(math.ceil(gap), 1)


def _length(iterable: Any) -> int | None:
    if isinstance(iterable, (range, list, tuple, dict, str, set, frozenset)):
        return len(iterable)
    size = getattr(type(iterable), "__len__", None)  # DataLoader, arrays, frames: their own length
    if size is None:
        return None
    try:
        n = size(iterable)
    except Exception:
        return None
    return n if isinstance(n, int) else None


def _statement(body: list[ast.stmt], line: int | None) -> int | None:
    if line is None:
        return None
    for n, stmt in enumerate(body):
        if stmt.lineno <= line <= (getattr(stmt, "end_lineno", None) or stmt.lineno):
            return n
    return None


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and n.id != NAME}


def _stored(node: ast.AST) -> set[str]:
    """Names a statement binds or may change: assignment targets, the objects of attribute and item
    stores, and the receivers of method calls."""
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            out.add(n.id)
        elif isinstance(n, (ast.Attribute, ast.Subscript)) and isinstance(n.ctx, (ast.Store, ast.Del)):
            base = n.value
            while isinstance(base, (ast.Attribute, ast.Subscript)):
                base = base.value
            if isinstance(base, ast.Name):
                out.add(base.id)
        elif (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and isinstance(n.func.value, ast.Name)
        ):
            out.add(n.func.value.id)
    return out


def carries(value: Any) -> bool:
    """Whether a name's value can carry what a loop did to it without rebinding the name: not a module,
    class, function or builtin, nor an immutable value (a number, a string, a tuple of those)."""
    import types

    kinds = (types.ModuleType, type, types.BuiltinFunctionType, types.FunctionType)
    if isinstance(value, (int, float, complex, str, bytes, bool, type(None), range, frozenset)):
        return False
    if isinstance(value, tuple):
        return any(carries(v) for v in value)
    return not isinstance(value, kinds)


def _user_function(value: Any) -> bool:
    import types

    return isinstance(value, types.FunctionType) and getattr(value, "__module__", "") == "__main__"


# -- the child's hooks (child.py calls these two) -------------------------------------------------------
