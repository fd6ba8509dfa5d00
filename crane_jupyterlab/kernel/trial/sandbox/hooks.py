"""Python audit hooks (`sys.addaudithook`): the trial's second layer, installed in the forked child only.

They refuse, at the Python level and with words a user can read, the side effects the OS sandbox refuses
below them: writing, deleting, renaming or changing files outside the scratch directory, starting
processes, network access, signals to other processes, asking the user for input. Where the platform
offers no OS sandbox (hooks-only mode, which an administrator must allow) they are the only layer, and
C code that writes a file itself (`torch.save`, `ndarray.tofile` on an open handle), ctypes, or an
already-open file escapes them.

A refused operation raises `Refused` (a PermissionError, so library code that copes with a read-only
file system copes with it) and is recorded; a cell that then raises is reported as *blocked*, not crashed.
"""

from __future__ import annotations

import errno
import os
import socket
import sys
from typing import Any, Callable

from .seccomp import O_WRITE_MASK
from .supervisor import describe, inside, natural_error, resolve


class Refused(PermissionError):
    """The trial's sandbox refused a side effect."""


class Guard:
    """The audit hook of one trial child. `active` is switched on right before the cell runs."""

    def __init__(
        self,
        scratch: str | None,
        os_layer: bool,
        private: tuple[str, ...] = (),
        netns: bool = False,
        processes: bool = False,
    ) -> None:
        # Where the child may write: the scratch directory, and directories private to it (its own
        # /dev/shm in a mount namespace).
        self.scratch = [os.path.realpath(scratch)] if scratch else []
        self.scratch += list(private)
        self.os_layer = os_layer
        # In a network namespace of its own (the OS layer's), an address bound reaches nothing outside.
        self.netns = os_layer and netns
        # The OS layer runs the cell's processes in the sandbox (every layer inherited, in the trial's
        # process group, which ends with it): shell commands and subprocesses run; without it they are
        # refused here.
        self.processes = os_layer and processes
        self.pid = os.getpid()  # the trial's own process (a process the cell forks inherits this hook)
        self.refusals: list[str] = []
        self.active = False
        # The control socket, on which the kernel's supervisor sends a byte per refusal (watch.py)
        self.channel: Any = None

    def os_refused(self) -> int:
        """How many calls the OS layer refused since the last ask (a program the cell ran, C code)."""
        count = 0
        while self.channel is not None:
            try:
                got = self.channel.recv(4096, socket.MSG_DONTWAIT)
            except OSError:  # nothing waiting (BlockingIOError), or the kernel's end is gone
                break
            if not got:
                break
            count += len(got)
        return count

    def __call__(self, event: str, args: tuple) -> None:  # type: ignore[type-arg]
        if not self.active:
            return
        handler = _HANDLERS.get(event)
        if handler is None or (self.processes and event in _PROCESS_EVENTS):
            return
        if event == "os.exec" and self.processes and os.getpid() != self.pid:
            return  # a process the cell forked runs its program, under the same OS layers, as it would
        self.active = False  # our own checks raise audit events too
        try:
            reason = handler(self, args)
        except Refused:
            raise
        except Exception as exc:
            # An argument we cannot read: below us the OS layer still stands; without one, refuse.
            reason = None if self.os_layer else f"{event} (which the sandbox could not check: {exc!r:.80})"
        finally:
            self.active = True
        if reason:
            self.refuse(reason)

    def refuse(self, reason: str) -> None:
        self.refusals.append(reason)
        raise Refused(errno.EACCES, f"not allowed in a trial run: {reason}")

    # -- files --

    def target(self, path: Any, dir_fd: Any = None) -> str | None:
        """The resolved path an operation names (None: an fd or nothing we can name)."""
        if isinstance(path, int):
            if not sys.platform.startswith("linux"):
                return None
            return os.path.realpath(f"/proc/self/fd/{path}")
        if path is None:
            return None
        base = os.getcwd()
        if isinstance(dir_fd, int) and dir_fd >= 0 and sys.platform.startswith("linux"):
            base = os.readlink(f"/proc/self/fd/{dir_fd}")  # -1 (or None) is the working directory
        return resolve(os.fsdecode(path), base)

    def file(self, op: str, path: Any, dir_fd: Any = None, exclusive: bool = False) -> str | None:
        target = self.target(path, dir_fd)
        if target is None or inside(target, self.scratch):
            return None
        if natural_error(op, target, exclusive=exclusive) is not None:
            return None  # it fails anyway, with its real error
        return describe(op, target)

    def open(self, args: tuple) -> str | None:  # type: ignore[type-arg]
        path, mode, flags = ((*tuple(args), None, None, None))[:3]
        writes = isinstance(mode, str) and any(c in mode for c in "wax+")
        writes = writes or (isinstance(flags, int) and bool(flags & O_WRITE_MASK))
        if not writes or isinstance(path, int):
            return None
        target = self.target(path)
        if target is None or inside(target, self.scratch):
            return None
        creates = (isinstance(mode, str) and any(c in mode for c in "wax")) or (
            isinstance(flags, int) and bool(flags & os.O_CREAT)
        )
        exclusive = (isinstance(mode, str) and "x" in mode) or (
            isinstance(flags, int) and bool(flags & os.O_EXCL)
        )
        op = "create" if creates and not os.path.lexists(target) else "write"
        if natural_error(op, target, exclusive=exclusive) is not None:
            return None
        return describe(op, target)


def _fs(
    op: str, path_index: int = 0, dir_fd_index: int | None = None
) -> Callable[[Guard, tuple], str | None]:  # type: ignore[type-arg]
    def handler(guard: Guard, args: tuple) -> str | None:  # type: ignore[type-arg]
        dir_fd = args[dir_fd_index] if dir_fd_index is not None and len(args) > dir_fd_index else None
        return guard.file(op, args[path_index], dir_fd, exclusive=op in ("mkdir", "create"))

    return handler


def _rename(guard: Guard, args: tuple) -> str | None:  # type: ignore[type-arg]
    src = guard.target(args[0], args[2] if len(args) > 2 else None)
    dst = guard.target(args[1], args[3] if len(args) > 3 else None)
    if src is None or dst is None or (inside(src, guard.scratch) and inside(dst, guard.scratch)):
        return None
    if natural_error("rename", src) is not None:
        return None
    return describe("rename", src, dst)


def _rmtree(guard: Guard, args: tuple) -> str | None:  # type: ignore[type-arg]
    target = guard.target(args[0], args[1] if len(args) > 1 else None)
    if target is None or inside(target, guard.scratch) or not os.path.lexists(target):
        return None
    return f"delete the directory tree '{target}'"


def _command(args: Any) -> str:
    if isinstance(args, (list, tuple)):
        text = " ".join(os.fsdecode(a) if isinstance(a, (str, bytes, os.PathLike)) else str(a) for a in args)
    else:
        text = os.fsdecode(args) if isinstance(args, (str, bytes, os.PathLike)) else str(args)
    return text if len(text) <= 120 else text[:117] + "..."


def _popen(guard: Guard, args: tuple) -> str:  # type: ignore[type-arg]
    return f"run the program '{_command(args[1] if len(args) > 1 and args[1] else args[0])}'"


def _kill(guard: Guard, args: tuple) -> str | None:  # type: ignore[type-arg]
    pid = args[0]
    if pid in (0, os.getpid()) or (guard.processes and _started_here(abs(pid))):  # its own group, its own
        return None
    return f"send signal {args[1]} to process {pid}"


def _killpg(guard: Guard, args: tuple) -> str | None:  # type: ignore[type-arg]
    if args[0] in (0, os.getpgid(0)) or (guard.processes and _started_here(args[0])):
        return None
    return f"send signal {args[1]} to process group {args[0]}"


def _started_here(pid: Any) -> bool:
    """Whether `pid` is one of the processes the trial started (in its process group), or that group."""
    try:
        return bool(pid > 0) and (pid == os.getpgid(0) or os.getpgid(pid) == os.getpgid(0))
    except (OSError, TypeError):
        return False


def _address(value: Any) -> str:
    if isinstance(value, tuple) and len(value) >= 2:
        return f"{value[0]}:{value[1]}"
    return os.fsdecode(value) if isinstance(value, (str, bytes)) else repr(value)


def _connect(guard: Guard, args: tuple) -> str | None:  # type: ignore[type-arg]
    return f"connect to {_address(args[1])}"


def _bind(guard: Guard, args: tuple) -> str | None:  # type: ignore[type-arg]
    if guard.netns and isinstance(args[1], tuple):  # an IP address in the trial's own namespace
        return None
    return f"bind a socket to {_address(args[1])}"  # a path is shared with the machine


def _send(guard: Guard, args: tuple) -> str | None:  # type: ignore[type-arg]
    return None if args[1] is None else f"send data to {_address(args[1])}"


def _lookup(guard: Guard, args: tuple) -> str | None:  # type: ignore[type-arg]
    return None if args[0] is None else f"look up the host '{os.fsdecode(args[0])}'"


def _url(guard: Guard, args: tuple) -> str | None:  # type: ignore[type-arg]
    url = str(args[0])
    if url.split(":", 1)[0].lower() in ("file", "data"):
        return None
    return f"open the URL '{url[:200]}'"


def _sqlite(guard: Guard, args: tuple) -> str | None:  # type: ignore[type-arg]
    if guard.os_layer:
        return None  # the OS layer sees sqlite's own writes; reading a database is fine
    database = os.fsdecode(args[0]) if isinstance(args[0], (str, bytes, os.PathLike)) else ""
    if database in ("", ":memory:") or "mode=ro" in database or "mode=memory" in database:
        return None
    target = resolve(database, os.getcwd())
    return None if inside(target, guard.scratch) else f"open the database '{target}' for writing"


def _prlimit(guard: Guard, args: tuple) -> str | None:  # type: ignore[type-arg]
    return None if args[0] in (0, os.getpid()) else f"change the limits of process {args[0]}"


_HANDLERS: dict[str, Callable[[Guard, tuple], str | None]] = {  # type: ignore[type-arg]
    "open": Guard.open,
    "os.remove": _fs("delete", 0, 1),
    "os.rmdir": _fs("rmdir", 0, 1),
    "os.mkdir": _fs("mkdir", 0, 2),
    "os.chmod": _fs("chmod", 0, 2),
    "os.chown": _fs("chown", 0, 3),
    "os.utime": _fs("utime", 0, 3),
    "os.truncate": _fs("truncate", 0),
    "os.setxattr": _fs("xattr", 0),
    "os.removexattr": _fs("xattr", 0),
    "os.chflags": _fs("chmod", 0),
    "os.lchflags": _fs("chmod", 0),
    "os.link": _fs("link", 1, 3),
    "os.symlink": _fs("link", 1, 2),
    "os.rename": _rename,
    "shutil.rmtree": _rmtree,
    "subprocess.Popen": _popen,
    "os.system": lambda g, a: f"run the shell command '{_command(a[0])}'",
    "os.exec": lambda g, a: f"replace the trial's process with the program '{_command(a[0])}'",
    "os.posix_spawn": lambda g, a: f"run the program '{_command(a[0])}'",
    "os.spawn": lambda g, a: f"run the program '{_command(a[1])}'",
    "os.fork": lambda g, a: "start a process (os.fork)",
    "os.forkpty": lambda g, a: "start a process (os.forkpty)",
    "os.startfile": lambda g, a: f"open '{_command(a[0])}' with another program",
    "webbrowser.open": lambda g, a: f"open a web browser at '{a[0]}'",
    "os.kill": _kill,
    "os.killpg": _killpg,
    "socket.connect": _connect,
    "socket.bind": _bind,
    "socket.sendto": _send,
    "socket.sendmsg": _send,
    "socket.getaddrinfo": _lookup,
    "socket.gethostbyname": _lookup,
    "socket.gethostbyname_ex": _lookup,
    "socket.gethostbyaddr": _lookup,
    "urllib.Request": _url,
    "http.client.connect": lambda g, a: f"connect to {a[1]}:{a[2]}",
    "ftplib.connect": lambda g, a: f"connect to {a[1]}:{a[2]}",
    "smtplib.connect": lambda g, a: f"connect to {a[1]}:{a[2]}",
    "poplib.connect": lambda g, a: f"connect to {a[1]}:{a[2]}",
    "imaplib.open": lambda g, a: f"connect to {a[1]}:{a[2]}",
    "nntplib.connect": lambda g, a: f"connect to {a[1]}:{a[2]}",
    "sqlite3.connect": _sqlite,
    "resource.prlimit": _prlimit,
    "builtins.input": lambda g, a: "wait for input from the user",
}
# What the OS layer lets run inside the sandbox (Guard.processes).
_PROCESS_EVENTS = frozenset(
    ("subprocess.Popen", "os.system", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty")
)
