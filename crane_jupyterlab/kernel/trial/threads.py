"""How much of a trial's time torch's compute took: the forked child runs it on one thread (child.py: a
thread pool does not survive the fork), the kernel on all of its own, so a forecast scales that share.

A sampler thread sleeps `PERIOD` at a time. Waking, it needs the GIL. Where the cell's thread is inside a
native call that released it (torch's ops do), the sampler gets it at once. Where that thread runs Python,
the sampler waits up to the interpreter's switch interval. A timely wake whose cell frame is torch's own
code (a module's `forward`, `backward`, an optimiser's `step`) counts its span as torch's compute. Work
released from a frame of the user's (`a @ b`) is not counted: numpy's element-wise loops release the GIL
too, on one thread in the kernel as in the trial. A loaded machine makes wakes late, so the share is
counted low, never high.

Measured on 2 cores: inference over slices took 2.62 s in a child and 1.56 s in the kernel, with 99 % of
its time counted; a small CNN's training took 1.94 s and 1.67 s, with 44 % counted. Stdlib only.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from typing import Any

PERIOD = 0.002  # seconds between samples
TIMELY = 0.0007  # a wake later than this waited for the GIL: the cell ran Python
# torch's threads: the kernel's own count, recorded in the child before it sets one (child.py)
KERNEL = [0]


class Sampler:
    """Started before the cell and stopped after it, in the forked child; a no-op where torch is not
    imported or the kernel runs it on one thread."""

    def __init__(self) -> None:
        self.thread: threading.Thread | None = None
        self.stopped = threading.Event()
        self.torch_s = self.sampled_s = 0.0
        torch = sys.modules.get("torch")
        self.root = os.path.dirname(getattr(torch, "__file__", None) or "") if torch is not None else ""

    def start(self) -> None:
        if KERNEL[0] <= 1 or not self.root:
            return
        self.root += os.sep
        self.thread = threading.Thread(target=self._sample, args=(threading.get_ident(),), daemon=True)
        with contextlib.suppress(RuntimeError):  # no thread can start: nothing is scaled
            self.thread.start()

    def stop(self) -> dict[str, Any] | None:
        """{"kernel": its threads, "share": the share of the cell's time torch's compute took}; None where
        nothing was sampled."""
        if self.thread is None or not self.thread.is_alive():
            return None
        self.stopped.set()
        self.thread.join(1.0)
        if self.sampled_s <= 0:
            return None
        return {"kernel": KERNEL[0], "share": round(min(1.0, self.torch_s / self.sampled_s), 3)}

    def _sample(self, cell: int) -> None:
        last = time.perf_counter()
        root = self.root
        while not self.stopped.is_set():
            time.sleep(PERIOD)
            now = time.perf_counter()
            span, last = now - last, now
            self.sampled_s += span
            if span - PERIOD > TIMELY:
                continue
            frame = sys._current_frames().get(cell)
            if frame is not None and frame.f_code.co_filename.startswith(root):
                self.torch_s += span
