"""The supervisor of a trial run's OS sandbox (Linux): it runs in the kernel, on the thread that reaps the
child (`../watch.py`), and answers the seccomp user notifications of the filter `seccomp.py` installs in the
child; and the rules of what the child may write, which the audit hooks (`hooks.py`) apply too.

A refused call is answered with an errno and recorded in words a user can read; a write inside the scratch
directory is let through where Landlock guards it; an operation that would fail anyway fails with its real
error and is not a refusal. Stdlib only.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import signal
import struct
from typing import Any

from .confine import libc
from .inherited import holder_words
from .seccomp import (
    AF_INET,
    AF_INET6,
    AF_UNIX,
    AT_FDCWD,
    AT_REMOVEDIR,
    CLONE_NAMESPACES,
    FD_CALLS,
    FS_CALLS,
    NOTIF_ID_VALID,
    NOTIF_RECV,
    NOTIF_SEND,
    REFUSED,
    SECCOMP_USER_NOTIF_FLAG_CONTINUE,
    arch,
)

# -- what the child may write -----------------------------------------------------------------------


def resolve(path: str, base: str, tid: int | None = None) -> str:
    """`path` (relative to `base`) as an absolute path with symlinks resolved; /proc/self and /dev/fd
    name the child (`tid`) when resolved from outside it."""
    full = os.path.normpath(os.path.join(base, path))
    if tid is not None:
        for alias, real in (("/proc/self/", f"/proc/{tid}/"), ("/proc/thread-self/", f"/proc/{tid}/")):
            if full.startswith(alias):
                full = real + full[len(alias) :]
        if full.startswith("/dev/fd/"):
            full = f"/proc/{tid}/fd/" + full[len("/dev/fd/") :]
        std = {"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}.get(full)
        if std is not None:
            full = f"/proc/{tid}/fd/{std}"
    return os.path.realpath(full)


def gpu_device(path: str) -> bool:
    """Whether `path` is a GPU driver's device file (NVIDIA, AMD KFD, DRM render nodes)."""
    return path.startswith(("/dev/nvidia", "/dev/kfd", "/dev/dri/renderD"))


def inside(path: str, writable: str | list[str] | None) -> bool:
    """Whether a resolved path may be written: beneath a writable directory (the scratch directory, a
    private /dev/shm), or /dev/null."""
    if path == os.devnull:
        return True
    for directory in [writable] if isinstance(writable, str) else writable or []:
        if directory and (path == directory or path.startswith(directory.rstrip("/") + "/")):
            return True
    return False


# What a refused file operation is called, and whether its target must exist ("old") or must not
# ("new"): an operation that would fail anyway fails with its real error and is not a refusal.
FS_WORDS = {
    "write": ("write to", "old"),
    "create": ("create", "new"),
    "mkdir": ("create the directory", "new"),
    "delete": ("delete", "old"),
    "rmdir": ("delete the directory", "old"),
    "rename": ("rename", "old"),
    "link": ("create a link at", "new"),
    "chmod": ("change the mode of", "old"),
    "chown": ("change the owner of", "old"),
    "utime": ("change the times of", "old"),
    "xattr": ("change the attributes of", "old"),
    "truncate": ("truncate", "old"),
}


def natural_error(op: str, path: str, *, exclusive: bool = False) -> int | None:
    """The errno the operation would fail with anyway, so there is nothing to refuse; else None."""
    exists = os.path.lexists(path)
    if exclusive and exists:
        return errno.EEXIST
    need = FS_WORDS[op][1]
    if need == "old" and not exists:
        return errno.ENOENT
    if need == "new":
        if not os.path.isdir(os.path.dirname(path) or "/"):
            return errno.ENOENT
        if exists and op != "create":
            return errno.EEXIST
    return None


def describe(op: str, path: str, other: str | None = None) -> str:
    words = FS_WORDS[op][0]
    return f"{words} '{path}' to '{other}'" if other else f"{words} '{path}'"


def _own_network(pid: int) -> bool:
    """Whether process `pid` is in another network namespace than this one (the kernel's), seen from
    here rather than taken from the child's word."""
    try:
        return os.stat(f"/proc/{pid}/ns/net").st_ino != os.stat("/proc/self/ns/net").st_ino
    except OSError:
        return False


# -- the supervisor (runs in the kernel, on the thread that reaps the child) --------------------------


class Supervisor:
    """Answers the child's seccomp notifications: lets writes into the scratch directory through (when
    Landlock guards them), makes operations that would fail anyway fail with their real error, refuses
    the rest and records what each refusal was."""

    def __init__(
        self,
        listener: int,
        pid: int,
        writable: list[str],
        landlock: bool,
        memory: int = -1,
        layers: list[str] | None = None,
        watched: dict[int, dict[str, str]] | None = None,
        processes: bool = False,
    ) -> None:
        self.listener = listener
        self.pid = pid
        # The child may start processes: each stays in its process group (whose id is its pid), which
        # the kernel kills when the trial ends (watch.py, worker.py).
        self.processes = processes
        # Called on each refusal, before the refused call returns: tells the child (hooks.Guard.os_refused)
        self.on_refusal: Any = None
        self._last: str | None = None  # the last refusal recorded (a repeat of it is not recorded again)
        self._caller_mem: int | None = None  # /proc/<pid>/mem of a process the child started
        # The kernel's descriptors the child has neutralised (inherited.py): number -> what and how.
        self.watched = dict(watched or {})
        self.writable = writable
        # Directories covered by the child's private copy-on-write layers (overlay.py): what the child
        # changes there is invisible from here, so a path is resolved as the kernel's files have it.
        self.layers = layers or []
        self.landlock = landlock
        self.gpu = False  # a worker that uses the GPU opens its driver's device files for writing
        self.refusals: list[str] = []
        found = arch()
        self.numbers: dict[str, int] = dict(found[1]) if found else {}
        self.names = {nr: name for name, nr in self.numbers.items()}
        self.c = libc()
        self._req = self.c.ctypes.create_string_buffer(80)  # struct seccomp_notif
        self._resp = self.c.ctypes.create_string_buffer(24)  # struct seccomp_notif_resp
        self.netns = _own_network(pid)
        self.mem: int | None = memory if memory >= 0 else None
        if self.mem is None:
            try:
                self.mem = os.open(f"/proc/{pid}/mem", os.O_RDONLY | os.O_CLOEXEC)
            except OSError:
                self.mem = None

    def close(self) -> None:
        for fd in (self.mem, self.listener):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.mem = None

    def handle(self) -> bool:
        """Answer one pending notification; False once the child is gone."""
        ctypes = self.c.ctypes
        ctypes.memset(self._req, 0, 80)
        if self.c.lib.ioctl(self.listener, NOTIF_RECV, self._req) != 0:
            return ctypes.get_errno() in (errno.EINTR, errno.ENOENT)  # interrupted / the caller died
        notif_id, tid, _flags, nr, _arch, _ip = struct.unpack_from("<QIIiIQ", self._req.raw, 0)
        args = struct.unpack_from("<6Q", self._req.raw, 32)
        try:
            self._caller_mem = self._open_caller(tid)
            verdict, reason = self.decide(self.names.get(nr, f"syscall {nr}"), args, tid)
        except Exception as exc:  # never let a bad read open the sandbox: refuse
            verdict, reason = errno.EPERM, f"an operation the sandbox could not read ({type(exc).__name__})"
        finally:
            if self._caller_mem is not None:
                with contextlib.suppress(OSError):
                    os.close(self._caller_mem)
                self._caller_mem = None
        if not self._valid(notif_id):
            return True  # the calling thread died meanwhile: what we read may not be its memory
        # Each refusal in order, a run of the same one collapsed: the chain's steps each take theirs from
        # where `barrier` was called, so one a step repeats after an earlier step is still that step's.
        if reason and reason != self._last:
            self.refusals.append(reason)
            self._last = reason
        if reason and verdict != 0 and self.on_refusal is not None:
            with contextlib.suppress(Exception):
                self.on_refusal()
        if verdict == 0:
            struct.pack_into("<QqiI", self._resp, 0, notif_id, 0, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE)
        else:
            struct.pack_into("<QqiI", self._resp, 0, notif_id, 0, -verdict, 0)
        self.c.lib.ioctl(self.listener, NOTIF_SEND, self._resp)
        return True

    def barrier(self) -> None:
        """A step of the chain starts: its first refusal is recorded even if the last step's was the same."""
        self._last = None

    def _valid(self, notif_id: int) -> bool:
        value = self.c.ctypes.c_uint64(notif_id)
        return bool(self.c.lib.ioctl(self.listener, NOTIF_ID_VALID, self.c.ctypes.byref(value)) == 0)

    # -- reading the child --

    def _open_caller(self, tid: int) -> int | None:
        """The memory of the process behind a notification from one of the child's own processes (each
        is read afresh: an execve gives it new memory); None for the child itself."""
        if not self.processes or self.ours(tid):
            return None
        return os.open(f"/proc/{tid}/mem", os.O_RDONLY | os.O_CLOEXEC)

    def of_group(self, pid: int) -> bool:
        """Whether `pid` is a process of the child's process group (one the child started), or that
        group itself."""
        return self.processes and pid > 0 and (pid == self.pid or _group_of(pid) == self.pid)

    def _memory_fd(self) -> int | None:
        return self._caller_mem if self._caller_mem is not None else self.mem

    def string(self, address: int, limit: int = 4096) -> str:
        mem = self._memory_fd()
        if mem is None or address == 0:
            raise OSError(errno.EFAULT, "unreadable")
        out = b""
        while len(out) < limit:
            chunk = os.pread(mem, 4096 - (address % 4096), address)
            end = chunk.find(b"\0")
            if end >= 0:
                return os.fsdecode(out + chunk[:end])
            out += chunk
            address += len(chunk)
        return os.fsdecode(out)

    def memory(self, address: int, size: int) -> bytes:
        mem = self._memory_fd()
        if mem is None or address == 0:
            raise OSError(errno.EFAULT, "unreadable")
        return os.pread(mem, size, address)

    def base(self, tid: int, dirfd: int) -> str:
        dirfd = _signed(dirfd)
        if dirfd == AT_FDCWD:
            return os.readlink(f"/proc/{tid}/cwd")
        return os.readlink(f"/proc/{tid}/fd/{dirfd}")

    def path(self, tid: int, args: tuple[int, ...], dirfd_arg: int | None, path_arg: int) -> str:
        base = self.base(tid, args[dirfd_arg]) if dirfd_arg is not None else os.readlink(f"/proc/{tid}/cwd")
        raw = self.string(args[path_arg]) if args[path_arg] else ""
        return resolve(raw, base, tid) if raw else resolve(base, "/", tid)

    def fd_path(self, tid: int, fd: int) -> str:
        return os.readlink(f"/proc/{tid}/fd/{_signed(fd)}")

    def thread_name(self, path: str) -> bool:
        """`path` is the `comm` file (the name) of one of the child's threads, reached through another."""
        match = _COMM.fullmatch(path)
        return match is not None and self.ours(int(match[1])) and self.ours(int(match[2]))

    def ours(self, pid: int) -> bool:
        """Whether `pid` is a thread of the child."""
        return pid > 0 and os.path.exists(f"/proc/{self.pid}/task/{pid}")

    # -- the decision --

    def decide(self, name: str, args: tuple[int, ...], tid: int) -> tuple[int, str | None]:
        """(0 to let the call through or an errno, what was refused or None)."""
        if name in FD_CALLS or name == "close_range":
            return self.fd_call(name, args, tid)
        started = self._caller_mem is not None  # the call comes from a process the child started
        if name in ("wait4", "waitid"):
            return (0, None) if started else self.wait_call(name, args)
        if name in FS_CALLS:
            return self.file_call(name, args, tid)
        if name in ("clone", "fork", "vfork"):
            if self.processes and name == "clone" and args[0] & CLONE_NAMESPACES:
                return errno.EPERM, "create a namespace"
            return errno.EPERM, "start a process"
        if name in ("execve", "execveat"):
            if started:  # a program the cell runs, under this same sandbox
                return 0, None
            # the trial's own process: what would report the outcome would be gone
            program = self.string(args[1] if name == "execveat" else args[0])
            return errno.EPERM, f"replace the trial's process with the program '{program}'"
        kind = REFUSED.get(name)
        if kind == "signal":
            target = _signed(args[0])
            if self.ours(abs(target)) or target == 0:  # a thread of the child; its own process group
                return 0, None
            if self.of_group(abs(target)):  # a process it started; the group of them all
                return 0, None
            if target > 0 and not os.path.exists(f"/proc/{target}"):
                return errno.ESRCH, None
            sig = _signed(args[2] if name in ("tgkill", "rt_tgsigqueueinfo") else args[1])
            who = f"process group {-target}" if target < 0 else f"process {target}"
            return errno.EPERM, f"send {_signal_name(sig)} to {who}"
        if kind == "sched":
            target = _signed(args[1] if name in ("setpriority", "ioprio_set") else args[0])
            if self.ours(target) or self.of_group(target) or (started and target == 0):
                return 0, None
            return errno.EPERM, f"change the scheduling or limits of process {target}"
        if name in ("connect", "bind"):
            if name == "bind" and self.netns and self.family(args[1]) in (AF_INET, AF_INET6):
                return 0, None  # an IP address of its own namespace: nothing outside is reached
            address = self.address(args[1], args[2])
            if name == "connect" and address.startswith("/") and not os.path.exists(address):
                return errno.ENOENT, None
            if name == "connect" and address in NAME_SERVICES:
                return errno.ECONNREFUSED, None  # a user or host lookup: the C library reads files instead
            words = f"{'connect to' if name == 'connect' else 'bind a socket to'} {address}"
            if started and name == "connect" and not address.startswith(("/", "@")):
                # a program the cell ran (`!wget`, `!pip download`) needed the network, which no trial has
                program = _command_name(tid)
                return errno.EACCES, f"let '{program}' reach the network ({words}): a trial has none"
            return errno.EACCES, words
        if name == "socket":
            if self.netns and args[0] & 0xFFFFFFFF in (AF_INET, AF_INET6):
                # In a network namespace of its own a socket reaches nothing (TensorFlow's import makes
                # one and never connects); connect and bind are still refused, Python's sends too.
                return 0, None
            family = {AF_INET: "AF_INET", AF_INET6: "AF_INET6", AF_UNIX: "AF_UNIX datagram"}.get(
                args[0] & 0xFFFFFFFF, f"family {args[0] & 0xFFFFFFFF}"
            )
            return errno.EACCES, f"open a network socket ({family})"
        if kind:
            return errno.EPERM, kind
        return errno.EPERM, f"call {name}()"

    def fd_call(self, name: str, args: tuple[int, ...], tid: int) -> tuple[int, str | None]:
        """A call on a descriptor the child inherited from the kernel and neutralised: refused and
        recorded as a use of what it led to; closing one is let through, and it is forgotten."""
        if self._caller_mem is not None:  # a process the child started: its descriptors are its own
            return self.started_fd_call(name, args, tid)
        if name == "close_range":
            first, last = args[0] & 0xFFFFFFFF, args[1] & 0xFFFFFFFF
            for fd in [fd for fd in self.watched if first <= fd <= last]:
                del self.watched[fd]
            return 0, None
        positions, _writes = FD_CALLS[name]
        fds = [_signed(args[p]) for p in positions]
        if name == "close" or (name in ("dup2", "dup3") and fds[0] not in self.watched):
            self.watched.pop(fds[-1], None)  # closed, or replaced: its number may now be a new file's
            return 0, None
        hit = next((fd for fd in fds if fd in self.watched), None)
        if hit is None:
            return 0, None
        return self.watched_call(name, args, hit)

    def started_fd_call(self, name: str, args: tuple[int, ...], tid: int) -> tuple[int, str | None]:
        """A call of a process the child started on a number the child watches: closing or replacing its
        own copy changes nothing the child keeps; any other call is judged as the child's only where the
        number still leads to the kernel's file (a program's loader reuses freed numbers for its own)."""
        if name in ("close", "close_range", "dup2", "dup3"):
            return 0, None
        positions, _writes = FD_CALLS[name]
        fds = [_signed(args[p]) for p in positions]
        hit = next((fd for fd in fds if fd in self.watched and self.same_file(tid, fd)), None)
        return (0, None) if hit is None else self.watched_call(name, args, hit)

    def same_file(self, tid: int, fd: int) -> bool:
        """Whether `fd` of process `tid` is the child's `fd` (the same open file, by kcmp). Where kcmp
        cannot tell (no kcmp; the child has ended while a program it started goes on loading), by where
        the number leads: the child's copy of a watched number leads to /dev/null or to the file the
        kernel had open for writing, reopened (inherited.py); a number that leads elsewhere is the
        program's own (its loader's libc.so.6). True where that cannot be read either."""
        number = self.numbers.get("kcmp")
        if number is not None:
            try:
                return self.c.syscall(number, self.pid, tid, _KCMP_FILE, fd, fd) == 0
            except OSError:
                pass
        try:
            target = os.readlink(f"/proc/{tid}/fd/{fd}")
        except OSError:
            return True
        return target == os.devnull or target == self.watched.get(fd, {}).get("path")

    def watched_call(self, name: str, args: tuple[int, ...], hit: int) -> tuple[int, str | None]:
        """A call on the watched descriptor `hit`: refused and recorded unless it only reads a file the
        kernel opened for writing, or releases a lock."""
        _positions, writes = FD_CALLS[name]
        entry = self.watched[hit]
        if name == "fcntl" and _signed(args[1]) in _LOCKS:
            kind = struct.unpack_from("<h", self.memory(args[2], 2))[0]
            if kind == _F_UNLCK:  # releasing a lock (a connection being closed) changes nothing
                return 0, None
            writes = kind == _F_WRLCK
        if name == "mmap":
            writes = bool(args[2] & 2 and args[3] & 1)  # PROT_WRITE, MAP_SHARED
        if entry.get("mode") == "write" and not writes:
            return 0, None  # reading a file the kernel opened for writing works on the child's copy
        # A lock refused with EACCES (or ENOLCK) reads as "held by another process": sqlite would wait.
        code = errno.EIO if name in ("fcntl", "flock") else errno.EACCES
        return code, f"use {holder_words(entry, os.getpid(), self.pid)}"

    def wait_call(self, name: str, args: tuple[int, ...]) -> tuple[int, str | None]:
        """A wait for a process the kernel started is refused (the copy of a `Popen` the cell inherited);
        one for the child's own processes goes through where it may start them."""
        if name == "waitid":
            pid = _signed(args[1]) if args[0] & 0xFFFFFFFF == 1 else -1  # P_PID
        else:
            pid = _signed(args[0])
        if pid > 0 and _parent_of(pid) == os.getpid():  # the supervisor runs in the kernel
            return errno.ECHILD, f"wait for a process the kernel started (pid {pid})"
        return (0, None) if self.processes else (errno.ECHILD, None)

    def family(self, pointer: int) -> int:
        raw = self.memory(pointer, 2)
        return int(struct.unpack_from("<H", raw, 0)[0]) if len(raw) >= 2 else -1

    def address(self, pointer: int, size: int) -> str:
        raw = self.memory(pointer, min(size, 128))
        family = struct.unpack_from("<H", raw, 0)[0] if len(raw) >= 2 else -1
        if family == AF_UNIX:
            name = raw[2:]
            if name[:1] == b"\0":
                return "@" + os.fsdecode(name[1:].rstrip(b"\0"))
            return os.fsdecode(name.split(b"\0", 1)[0])
        if family == AF_INET and len(raw) >= 8:
            port = struct.unpack_from(">H", raw, 2)[0]
            return f"{'.'.join(str(b) for b in raw[4:8])}:{port}"
        if family == AF_INET6 and len(raw) >= 24:
            import ipaddress

            port = struct.unpack_from(">H", raw, 2)[0]
            return f"[{ipaddress.IPv6Address(raw[8:24])}]:{port}"
        return f"an address of family {family}"

    def file_call(self, name: str, args: tuple[int, ...], tid: int) -> tuple[int, str | None]:
        op, paths, exclusive = self.file_targets(name, args, tid)
        if op == "write" and paths[0] == "/dev/tty":
            return errno.ENXIO, None  # the terminal the kernel started from: as if the trial had none
        if op == "write" and self.thread_name(paths[0]):
            return 0, None  # a thread of the child naming itself changes nothing outside it
        if op == "write" and self.gpu and gpu_device(paths[0]):
            return 0, None  # its own GPU context (a worker's, never the kernel's)
        if self.landlock and all(inside(p, self.writable) for p in paths):
            # Landlock checks it again, race-free; and a private /dev/shm is not what we see from here.
            outward = self.outward_link(name, args, paths[0])
            if outward:
                return errno.EACCES, outward
            return 0, None
        first = paths[0]
        natural = natural_error(op, first, exclusive=exclusive)
        if natural is not None:
            return natural, None
        return errno.EACCES, describe(op, first, paths[1] if len(paths) > 1 else None)

    def outward_link(self, name: str, args: tuple[int, ...], link: str) -> str | None:
        """A symlink made in a private layer that points outside the writable directories: refused, since
        this side cannot see it, and a write through it (which Landlock refuses) would pass here for a
        write inside and reach the cell as a bare PermissionError, never recorded."""
        if name not in ("symlink", "symlinkat") or not inside(link, self.layers):
            return None
        target = self.string(args[0])
        resolved = resolve(target, os.path.dirname(link))
        return None if inside(resolved, self.writable) else describe("link", link, resolved)

    def file_targets(self, name: str, args: tuple[int, ...], tid: int) -> tuple[str, list[str], bool]:
        """(operation, resolved paths, whether the call fails on an existing target) of a file call."""
        if name in ("open", "openat", "creat"):
            path = self.path(tid, args, 0, 1) if name == "openat" else self.path(tid, args, None, 0)
            flags = os.O_CREAT | os.O_TRUNC if name == "creat" else args[2 if name == "openat" else 1]
            if not os.path.lexists(path) and flags & os.O_CREAT:
                return "create", [path], False
            return "write", [path], bool(flags & os.O_CREAT and flags & os.O_EXCL)
        if name in ("fchmod", "fchown", "fsetxattr", "fremovexattr"):
            return _FD_CALLS[name], [self.fd_path(tid, args[0])], False
        op, *pairs = _PATH_CALLS[name]
        paths = [self.path(tid, args, dirfd, path) for dirfd, path in pairs]
        if name == "unlinkat" and args[2] & AT_REMOVEDIR:
            op = "rmdir"
        return op, paths, op in ("mkdir", "create")


# The file calls that name paths: (operation, (dirfd argument or None, path argument), ...).
_PATH_CALLS: dict[str, tuple[Any, ...]] = {
    "truncate": ("truncate", (None, 0)),
    "rename": ("rename", (None, 0), (None, 1)),
    "renameat": ("rename", (0, 1), (2, 3)),
    "renameat2": ("rename", (0, 1), (2, 3)),
    "mkdir": ("mkdir", (None, 0)),
    "mkdirat": ("mkdir", (0, 1)),
    "mknod": ("create", (None, 0)),
    "mknodat": ("create", (0, 1)),
    "rmdir": ("rmdir", (None, 0)),
    "unlink": ("delete", (None, 0)),
    "unlinkat": ("delete", (0, 1)),
    "link": ("link", (None, 1)),
    "linkat": ("link", (2, 3)),
    "symlink": ("link", (None, 1)),
    "symlinkat": ("link", (1, 2)),
    "chmod": ("chmod", (None, 0)),
    "fchmodat": ("chmod", (0, 1)),
    "fchmodat2": ("chmod", (0, 1)),
    "chown": ("chown", (None, 0)),
    "lchown": ("chown", (None, 0)),
    "fchownat": ("chown", (0, 1)),
    "utime": ("utime", (None, 0)),
    "utimes": ("utime", (None, 0)),
    "futimesat": ("utime", (0, 1)),
    "utimensat": ("utime", (0, 1)),
    "setxattr": ("xattr", (None, 0)),
    "lsetxattr": ("xattr", (None, 0)),
    "removexattr": ("xattr", (None, 0)),
    "lremovexattr": ("xattr", (None, 0)),
    "setxattrat": ("xattr", (0, 1)),
    "removexattrat": ("xattr", (0, 1)),
    "file_setattr": ("xattr", (0, 1)),
}
_FD_CALLS = {"fchmod": "chmod", "fchown": "chown", "fsetxattr": "xattr", "fremovexattr": "xattr"}


# A thread's name: the `comm` file of a task of a process (resolve() writes /proc/self as /proc/<tid>).
_COMM = re.compile(r"/proc/(\d+)/task/(\d+)/comm")

_KCMP_FILE = 0

# fcntl's record locks: F_SETLK, F_SETLKW, F_OFD_SETLK, F_OFD_SETLKW; struct flock's l_type values.
_LOCKS = (6, 7, 37, 38)
_F_WRLCK, _F_UNLCK = 1, 2


# The sockets of the C library's user and host lookups (nscd, sssd, systemd's userdb): refused quietly,
# and `ls -l` or `getpass.getuser()` read /etc/passwd instead.
NAME_SERVICES = ("/var/run/nscd/socket", "/run/nscd/socket", "/var/lib/sss/pipes/nss",
                 "/run/systemd/userdb/io.systemd.Multiplexer", "/run/dbus/system_bus_socket")  # fmt: skip


def _stat_field(pid: int, index: int) -> int:
    """A numeric field of /proc/<pid>/stat after the command's name (1: the parent, 2: the process
    group); -1 if the process is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return int(fh.read().rsplit(b")", 1)[1].split()[index])
    except (OSError, ValueError, IndexError):
        return -1


def _group_of(pid: int) -> int:
    return _stat_field(pid, 2)


def _command_name(pid: int) -> str:
    """The name of the program process `pid` runs (its `comm`)."""
    try:
        with open(f"/proc/{pid}/comm") as fh:
            return fh.read().strip() or f"process {pid}"
    except OSError:
        return f"process {pid}"


def _parent_of(pid: int) -> int:
    return _stat_field(pid, 1)


def _signed(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
