"""torch's CUDA memory counters, for the forecast's GPU half: what a trial's loops keep and peak at on the
GPU (read in the trial's process, a worker with a CUDA context of its own), and what the kernel holds and
the device has free (read in the kernel, after the trial).

Read only where torch is already loaded and has initialised CUDA in this process: asking anything else
would initialise it, and a kernel that has initialised CUDA can no longer fork a trial that uses it. One
device: the one this process holds the most on (its current one where it holds nothing). `COUNTERS` is
what every reader goes through, so that a test can put a stand-in in its place (counting bytes of CPU
tensors, or scripted), as `bench/gpuworker.py --device cpu` pretends the kernel's CUDA. Stdlib only:
torch is looked up in `sys.modules`, never imported; nothing here raises.
"""

from __future__ import annotations

import sys
from typing import Any


class Counters:
    """torch's counters (bytes) of one CUDA device of this process."""

    def active(self) -> bool:
        """Whether this process has a CUDA context to count in."""
        return _cuda() is not None

    def allocated(self) -> int:
        """Bytes of the tensors alive now."""
        return _count("memory_allocated")

    def peak(self) -> int:
        """The most bytes allocated at once since the last `reset_peak`."""
        return _count("max_memory_allocated")

    def reset_peak(self) -> None:
        torch = _cuda()
        try:
            if torch is not None:
                torch.cuda.reset_peak_memory_stats(_device(torch))
        except Exception:
            pass

    def device(self) -> tuple[int, int, int] | None:
        """(allocated, reserved, free) bytes: what the tensors hold, what torch's caching allocator holds
        (the allocated part included), what the device has free besides; None without CUDA here."""
        torch = _cuda()
        if torch is None:
            return None
        try:
            index = _choose(torch)  # the kernel's: chosen afresh at each trial
            free = int(torch.cuda.mem_get_info(index)[0])
            return int(torch.cuda.memory_allocated(index)), int(torch.cuda.memory_reserved(index)), free
        except Exception:
            return None


def _cuda() -> Any:
    """torch, where it is loaded and has initialised CUDA in this process (in a fork of such a process
    torch says it has not); None otherwise."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    try:
        return torch if torch.cuda.is_initialized() else None
    except Exception:
        return None


def _count(counter: str) -> int:
    """One of torch.cuda's byte counters of the counted device; 0 without CUDA here."""
    torch = _cuda()
    try:
        return int(getattr(torch.cuda, counter)(_device(torch))) if torch is not None else 0
    except Exception:
        return 0


_DEVICE: list[int] = []  # the device chosen, once per process


def _device(torch: Any) -> int:
    """The device counted in this process, chosen at its first count (a loop's iterations read it often)."""
    if not _DEVICE:
        _DEVICE.append(_choose(torch))
    return _DEVICE[0]


def _choose(torch: Any) -> int:
    """The device this process holds the most on (the allocator's statistics: no device is touched),
    else its current one."""
    held = [(int(torch.cuda.memory_allocated(i)), -i) for i in range(torch.cuda.device_count())]
    most = max(held, default=(0, 0))
    return -most[1] if most[0] > 0 else int(torch.cuda.current_device())


COUNTERS = Counters()

# The peak so far of each open window (`Window`), raised before any reset of torch's one peak counter:
# a loop's iteration inside another's, inside the trial, each keeps its own.
_OPEN: list[list[int]] = []


class Window:
    """The most bytes allocated at once from now until `close` (torch keeps one peak; nested windows
    share it)."""

    def __init__(self) -> None:
        _fold()
        COUNTERS.reset_peak()
        self.top = [0]
        _OPEN.append(self.top)

    def close(self) -> int:
        _fold()
        for n, top in enumerate(_OPEN):
            if top is self.top:  # this one (another's list may hold the same peak: `==` would match it)
                del _OPEN[n]
                break
        return self.top[0]


def _fold() -> None:
    now = COUNTERS.peak()
    for top in _OPEN:
        top[0] = max(top[0], now)


class Trial:
    """The whole cell's peak above what the process held before it (a worker: its copies of the inputs)."""

    def __init__(self) -> None:
        self.active = COUNTERS.active()
        self.before = COUNTERS.allocated() if self.active else 0
        self.window = Window() if self.active else None

    def extra_kb(self) -> int | None:
        """kB at the cell's peak above what was held before it; None without CUDA here."""
        if self.window is None:
            return None
        return max(self.window.close() - self.before, 0) // 1024


class Iterations:
    """What one run of a loop holds on the GPU: its allocation at the start and after its first iteration,
    and the highest peak of one iteration above what was allocated as it began."""

    def __init__(self) -> None:
        self.start = self.begun = COUNTERS.allocated()
        self.after_first: int | None = None
        self.peak = 0
        self.window: Window | None = None

    @classmethod
    def here(cls) -> Iterations | None:
        """One, where this process counts CUDA memory; else None (the loop does nothing more)."""
        return cls() if COUNTERS.active() else None

    def next(self, n: int) -> None:
        """Before iteration n + 1 (n have run): the last one's peak, and the next one's window (all of the
        first 64, then every 16th: each costs three calls into torch)."""
        now = COUNTERS.allocated()
        self._close()
        if n == 1:
            self.after_first = now
        if n < 64 or not n & 15:
            self.begun, self.window = now, Window()

    def end(self) -> tuple[int, int, int]:
        """(grew, steady, peak) kB: the run's growth, the part after its first iteration, and one
        iteration's highest peak."""
        end = COUNTERS.allocated()
        self._close()
        steady = end - self.after_first if self.after_first is not None else 0
        return max(end - self.start, 0) // 1024, max(steady, 0) // 1024, self.peak // 1024

    def _close(self) -> None:
        if self.window is not None:
            self.peak = max(self.peak, self.window.close() - self.begun)
            self.window = None
