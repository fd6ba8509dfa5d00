"""Why a trial process is not getting anywhere, read from the scheduler's own accounting in /proc: a
deadlock after a fork (`Stuck`), or how it spent its time before a timeout (`activity`).
"""

from __future__ import annotations

import os

# The futex call's number, by machine (a thread blocked in it shows it in /proc/<pid>/syscall).
_FUTEX = {"x86_64": 202, "aarch64": 98}
# Seconds without CPU progress, the main thread in an untimed futex wait, before the child counts as
# deadlocked.
STUCK_S = 1.0


class Stuck:
    """Spots a child that can never go on: its main thread waits, without a timeout, on a futex (a lock
    or condition) while the process uses no CPU. After a fork that is a lock held by, or work handed to,
    a thread that exists only in the kernel (TensorFlow's pools, a lock held by one of the kernel's
    threads at the fork)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.futex = _FUTEX.get(os.uname().machine)
        self.cpu = -1.0
        self.since = 0.0

    def deadlocked(self, now: float) -> bool:
        try:
            with open(f"/proc/{self.pid}/schedstat", "rb") as fh:
                cpu = int(fh.read().split()[0]) / 1e9
            with open(f"/proc/{self.pid}/syscall", "rb") as fh:
                call = fh.read().split()
        except (OSError, ValueError, IndexError):
            return False
        waiting = (
            self.futex is not None
            and len(call) > 4
            and call[0] == str(self.futex).encode()
            and int(call[2], 16) & 0x7F in (0, 9)  # FUTEX_WAIT, FUTEX_WAIT_BITSET
            and int(call[4], 16) == 0  # no timeout
        )
        if not waiting or cpu - self.cpu > 0.005:
            self.cpu, self.since = cpu, now
            return False
        return now - self.since >= STUCK_S


def activity(pid: int, wall: float) -> str:
    """Why a child ran out of time: computing, starved of CPU by a busy machine, or waiting on something
    (from the scheduler's own accounting: time on a CPU and time waiting for one)."""
    try:
        with open(f"/proc/{pid}/schedstat", "rb") as fh:
            running, queued = (int(x) / 1e9 for x in fh.read().split()[:2])
    except (OSError, ValueError):
        return ""
    if running >= 0.5 * wall:
        return " (it was computing)"
    if queued >= 0.3 * wall:
        return (
            f" (the machine was busy: it ran {running:.1f} s and waited {queued:.1f} s for a CPU, "
            "at a lower priority than the kernel)"
        )
    return f" (it was waiting: sleeping, for I/O or for a lock; {running:.1f} s on a CPU in {wall:.1f} s)"
