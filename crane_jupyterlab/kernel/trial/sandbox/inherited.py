"""What the kernel holds open when a trial forks, made private to the child and recorded (child side).

Every descriptor the child inherits is one of:

- a file or directory opened read-only: reopened read-only with its own offset (reading moves the kernel's
  position no more); it works as in the kernel and is not watched;
- a file opened for writing (a log, a shared-memory segment): reopened read-only and watched for writes;
  reading works;
- a sqlite database (or its journal) opened for writing: reopened read-only and watched for any use (its
  locks and cache are the kernel's: the fork cannot share them);
- a socket of any family, a pipe or FIFO, a device, an event/epoll/timer descriptor: replaced by
  /dev/null (nothing can reach what it led to) and watched for any use.

"Watched" means the seccomp filter (`seccomp.filter_program`) sends every call on that descriptor number
to the supervisor (`supervisor.py`), which refuses it and records what it was, in words: "use a
connection the kernel already had open to 127.0.0.1:5432". A refusal makes the outcome *blocked*,
whatever the cell did next; a cell that never touches the descriptor is unaffected. Closing one is let
through (the supervisor forgets it, so a new file that gets its number is not mistaken for it).

Pools of worker processes (multiprocessing.Pool, concurrent.futures and loky process pools) the kernel
started have no workers in the fork: their entry points refuse, with the reason, through the audit
guard (`guard_pools`). Stdlib only; runs in the forked child before the sandbox.
"""

from __future__ import annotations

import contextlib
import os
import stat
from typing import Any

# Descriptors the filter can watch by number; more are still neutralised, but not watched.
MAX_WATCHED = 150
# Character devices a cell may use as they are (nothing outside changes through them).
_HARMLESS_DEVICES = ("/dev/null", "/dev/zero", "/dev/urandom", "/dev/random", "/dev/full")
_SQLITE_HEADER = b"SQLite format 3\x00"
_SQLITE_SUFFIXES = ("-journal", "-wal", "-shm")


def neutralise(
    keep: set[int],
) -> tuple[list[str], dict[int, dict[str, str]]]:  # pragma: no cover - child only
    """Make the inherited descriptors private (see the module docstring). Returns the files that were
    open for writing, and the watched descriptors: `{fd: {"what": words, "mode": "any" | "write"}}`."""
    import fcntl

    downgraded: list[str] = []
    watched: dict[int, dict[str, str]] = {}
    try:
        fds = sorted(int(fd) for fd in os.listdir("/proc/self/fd"))
    except OSError:
        return downgraded, watched
    null = os.open(os.devnull, os.O_RDWR)
    for fd in fds:
        if fd <= 2 or fd in keep or fd == null:
            continue
        try:
            st = os.fstat(fd)
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        entry: dict[str, str] | None = None
        try:
            inheritable = os.get_inheritable(fd)
            if stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode):
                flags = fcntl.fcntl(fd, fcntl.F_GETFL)
                if flags & (os.O_WRONLY | os.O_RDWR):
                    downgraded.append(target)
                    entry = _written_file(fd, target)
                mode = os.O_RDONLY | (os.O_DIRECTORY if stat.S_ISDIR(st.st_mode) else 0)
                fresh = os.open(f"/proc/self/fd/{fd}", mode | (flags & os.O_NONBLOCK))
                with contextlib.suppress(OSError):
                    os.lseek(fresh, os.lseek(fd, 0, os.SEEK_CUR), os.SEEK_SET)
                os.dup2(fresh, fd, inheritable=inheritable)
                os.close(fresh)
            elif stat.S_ISCHR(st.st_mode) and target in _HARMLESS_DEVICES:
                continue
            else:
                entry = _describe(fd, st, target)
                os.dup2(null, fd, inheritable=inheritable)
        except OSError:
            with contextlib.suppress(OSError):
                os.dup2(null, fd)
            entry = entry or {"what": f"'{target}', which the kernel had open", "mode": "any"}
        if entry is not None and len(watched) < MAX_WATCHED:
            watched[fd] = entry
    os.close(null)
    return downgraded, watched


def _written_file(fd: int, path: str) -> dict[str, str]:
    """A regular file the kernel opened for writing: a sqlite database (any use watched) or a file
    (writes watched)."""
    head = b""
    with contextlib.suppress(OSError):
        head = os.pread(fd, len(_SQLITE_HEADER), 0)
    if head == _SQLITE_HEADER or path.endswith(_SQLITE_SUFFIXES):
        database = path
        for suffix in _SQLITE_SUFFIXES:
            if database.endswith(suffix):
                database = database[: -len(suffix)]
        words = f"the sqlite database {database} the kernel had open for writing"
        return {"what": words, "mode": "any", "path": path}
    if path.startswith("/dev/shm/"):
        return {
            "what": f"the shared memory {path} the kernel had open for writing",
            "mode": "write",
            "path": path,
        }
    return {"what": f"the file {path} the kernel had open for writing", "mode": "write", "path": path}


def _describe(fd: int, st: os.stat_result, target: str) -> dict[str, str]:
    """What a socket, pipe or device leads to, as a user would say it ("holder": the pipe or socket a
    process the kernel started may share, looked up by the supervisor if the cell uses it)."""
    if stat.S_ISSOCK(st.st_mode):
        return {"what": _socket_words(fd), "mode": "any", "holder": target, "shared": " shared with {}"}
    if stat.S_ISFIFO(st.st_mode):
        if target.startswith("pipe:"):
            return {
                "what": "a pipe the kernel had open",
                "mode": "any",
                "holder": target,
                "shared": "a pipe to {}",
            }
        return {"what": f"the FIFO {target} the kernel had open", "mode": "any"}
    if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode):
        return {"what": f"the device {target} the kernel had open", "mode": "any"}
    if target.startswith("anon_inode:"):
        kind = target[len("anon_inode:") :].strip("[]")
        return {"what": f"the kernel's own {kind} descriptor", "mode": "any"}
    return {"what": f"'{target}', which the kernel had open", "mode": "any"}


def holder_words(entry: dict[str, str], kernel: int, trial: int) -> str:
    """The words for a watched descriptor, with the process the kernel started that holds the same pipe or
    socket, if one does (read by the supervisor, in the kernel: a trial in its own user namespace may not
    read other processes' descriptors)."""
    what = entry.get("what") or "a descriptor the kernel had open"
    target, shared = entry.get("holder"), entry.get("shared")
    if not target or not shared:
        return what
    pid = _holder(target, kernel, trial)
    if pid is None:
        return what
    process = f"a process the kernel started (pid {pid}{_command(pid)})"
    return f"{what}{shared.format(process)}" if shared.startswith(" ") else shared.format(process)


def _socket_words(fd: int) -> str:
    import socket

    try:
        sock = socket.socket(fileno=os.dup(fd))
    except OSError:
        return "a socket the kernel had open"
    try:
        family, kind = sock.family, sock.type
        try:
            peer: Any = sock.getpeername()
        except OSError:
            peer = None
        try:
            local: Any = sock.getsockname()
        except OSError:
            local = None
        listening = bool(sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN))
    except OSError:
        return "a socket the kernel had open"
    finally:
        sock.close()
    if family in (socket.AF_INET, socket.AF_INET6):
        if listening:
            return f"a socket the kernel listens on at {_address(local)}"
        if kind == socket.SOCK_DGRAM:
            return f"a UDP socket the kernel had open ({_address(peer or local)})"
        if peer:
            return f"a connection the kernel already had open to {_address(peer)}"
        return "a network socket the kernel had open"
    if family == socket.AF_UNIX:
        name = peer or local
        if isinstance(name, bytes):
            name = "@" + name.lstrip(b"\0").decode(errors="replace")
        return f"a unix socket the kernel had open to {name}" if name else "a unix socket the kernel had open"
    return f"a socket the kernel had open (family {int(family)})"


def _address(value: Any) -> str:
    if isinstance(value, tuple) and len(value) >= 2:
        host = str(value[0])
        return f"[{host}]:{value[1]}" if ":" in host else f"{host}:{value[1]}"
    return str(value)


def _holder(target: str, kernel: int, trial: int) -> int | None:
    """The first process the kernel started (or one of theirs) that holds `target` (pipe:[n], socket:[n])."""
    seen: set[int] = set()
    todo = [pid for pid in _children(kernel) if pid != trial]
    while todo and len(seen) < 256:
        pid = todo.pop(0)
        if pid in seen:
            continue
        seen.add(pid)
        todo += _children(pid)
        try:
            names = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for name in names:
            with contextlib.suppress(OSError):
                if os.readlink(f"/proc/{pid}/fd/{name}") == target:
                    return pid
    return None


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as fh:
                out += [int(p) for p in fh.read().split()]
        except (OSError, ValueError):
            continue
    return out


def _command(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            words = [w.decode(errors="replace") for w in fh.read().split(b"\0") if w]
    except OSError:
        return ""
    text = " ".join(os.path.basename(w) if i == 0 else w for i, w in enumerate(words[:4]))
    return f": {text[:60]}" if text else ""


# -- pools of worker processes --------------------------------------------------------------------


def guard_pools(refuse: Any) -> None:  # pragma: no cover - child only
    """The entry points of process pools the kernel started refuse in the child (their workers are other
    processes; the fork has none). A pool the cell starts itself is refused when it starts a process."""
    import sys

    def refusing(method: Any, words: str, started: Any) -> Any:
        def guarded(self: Any, *args: Any, **kwargs: Any) -> Any:
            if started(self):
                refuse(words)
            return method(self, *args, **kwargs)

        return guarded

    module = sys.modules.get("multiprocessing.pool")
    pool = getattr(module, "Pool", None)
    thread_pool = getattr(module, "ThreadPool", None)
    if pool is not None and hasattr(pool, "_check_running"):
        # Every use of a Pool (apply, map, imap, starmap, their async forms) checks it is running first.
        pool._check_running = refusing(
            pool._check_running,
            "use a multiprocessing pool the kernel started (its worker processes are outside the trial)",
            lambda self: (
                not (thread_pool is not None and isinstance(self, thread_pool))
                and bool(getattr(self, "_pool", None))
            ),
        )
    for name in ("concurrent.futures.process", "joblib.externals.loky.process_executor"):
        executor = getattr(sys.modules.get(name), "ProcessPoolExecutor", None)
        if executor is not None and hasattr(executor, "submit"):
            executor.submit = refusing(
                executor.submit,
                "use a process pool the kernel started (its worker processes are outside the trial)",
                lambda self: bool(getattr(self, "_processes", None)),
            )
