"""The OS sandbox of a trial run (Linux), entered by the trial process before the cell runs; its
supervisor, run by the kernel, is `supervisor.py`.

Layers, each optional where the platform lacks it, strongest guarantee first:

- **seccomp** (required for the OS sandbox): a BPF filter that refuses new processes (fork, vfork, clone
  without CLONE_THREAD, execve, execveat; clone3 answers ENOSYS so libc falls back to clone), network
  sockets (any family but AF_UNIX stream and AF_NETLINK), connect and bind, signals to other processes,
  the file operations Landlock does not cover (chmod, chown, utime, xattr) and the administrative calls
  a root kernel could otherwise make (mount, reboot, settimeofday, ptrace, ...). Opening a file for
  writing and every refused call reach the supervisor through a seccomp user notification: the kernel's
  thread that reaps the child reads the call's arguments, answers with an errno (or lets a write inside
  the scratch directory through, which Landlock still checks) and records what was refused, so a
  refusal in C code (`torch.save`, `ndarray.tofile`) is reported as **blocked**, never as a crash.
- **Landlock** (kernel >= 5.13): the file system is read-only but for a private scratch directory (the
  child's TMPDIR) and /dev/null; ABI >= 4 also refuses TCP bind/connect, ABI >= 6 signals and abstract
  unix sockets outside the sandbox. Without Landlock, seccomp refuses every open for writing, the
  scratch directory included.
- **user + network namespaces** where unprivileged user namespaces are allowed: an empty network
  namespace, a second wall around the network.
- **capabilities** dropped (a kernel running as root keeps none in the child), no_new_privs.
- Python **audit hooks** (`hooks.py`) as the second layer: they refuse the same side effects at the
  Python level with readable reasons, and are the only layer where the OS offers none (hooks-only mode,
  which an administrator must allow: C code can then write files unseen).

The filter itself (syscall tables, BPF) is `seccomp.py`. Stdlib only: the server calls `probe()` in a
separate interpreter to learn what its platform allows. Numbers below are from the kernel's uapi headers.
"""

from __future__ import annotations

import json
import os
import platform
import signal
import struct
import sys
from typing import Any

from .seccomp import (
    _COMMON,
    SECCOMP_FILTER_FLAG_NEW_LISTENER,
    SECCOMP_FILTER_FLAG_TSYNC,
    SECCOMP_FILTER_FLAG_TSYNC_ESRCH,
    SECCOMP_SET_MODE_FILTER,
    arch,
    filter_program,
)

# -- the kernel's ABI ---------------------------------------------------------------------------------

PR_SET_PDEATHSIG = 1
PR_SET_NO_NEW_PRIVS = 38

CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 1
CLONE_NEWNS = 0x00020000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 2, 4, 8, 1 << 14, 1 << 18
# Where POSIX shared memory and named semaphores live; private to the child when it has a mount namespace.
SHM = "/dev/shm"
CAP_VERSION_3 = 0x20080522

LANDLOCK_CREATE_RULESET_VERSION = 1
LANDLOCK_RULE_PATH_BENEATH = 1
# Access rights (landlock.h), by the ABI that introduced them.
LL_WRITE_FILE = 1 << 1
LL_FS_ABI1 = sum(1 << n for n in (1, 4, 5, 6, 7, 8, 9, 10, 11, 12))  # write, remove, make_*
LL_REFER = 1 << 13  # ABI 2
LL_TRUNCATE = 1 << 14  # ABI 3
LL_NET_TCP = 1 | 2  # ABI 4: bind, connect
LL_NET_CONNECT = 2
LL_SCOPE = 1 | 2  # ABI 6: abstract unix sockets, signals

# -- ctypes plumbing ----------------------------------------------------------------------------------


class _Libc:
    """libc through ctypes, loaded on first use (ctypes is imported only in the forked child or when a
    trial is asked for)."""

    def __init__(self) -> None:
        import ctypes

        self.ctypes = ctypes
        self.lib = ctypes.CDLL(None, use_errno=True)
        self.lib.syscall.restype = ctypes.c_long
        self.lib.mmap.restype = ctypes.c_void_p
        self.lib.mmap.argtypes = [
            ctypes.c_void_p,
            ctypes.c_size_t,
            ctypes.c_int,
            ctypes.c_int,
            ctypes.c_int,
            ctypes.c_long,
        ]
        self.lib.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        self.lib.ioctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p]

    def syscall(self, nr: int, *args: Any) -> int:
        """`syscall(nr, *args)`: ints become longs, None a NULL pointer, ctypes objects pass as they are;
        OSError on failure."""
        c = self.ctypes
        converted = [
            c.c_long(a) if isinstance(a, int) else (c.c_void_p(None) if a is None else a) for a in args
        ]
        result = int(self.lib.syscall(c.c_long(nr), *converted))
        if result == -1:
            code = c.get_errno()
            raise OSError(code, os.strerror(code))
        return result

    def prctl(self, option: int, arg: int) -> None:
        c = self.ctypes
        zero = c.c_ulong(0)
        if self.lib.prctl(c.c_int(option), c.c_ulong(arg), zero, zero, zero) != 0:
            code = c.get_errno()
            raise OSError(code, os.strerror(code))


_libc: _Libc | None = None


def libc() -> _Libc:
    global _libc
    if _libc is None:
        _libc = _Libc()
    return _libc


# -- the layers (run in the child) ------------------------------------------------------------------


def set_pdeathsig() -> None:
    """SIGKILL when the thread that forked us (the kernel's main thread) ends: restart, shutdown, crash."""
    libc().prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def landlock_abi() -> int:
    """Landlock's ABI version (0: none). A harmless query, fine in any process."""
    if arch() is None:
        return 0
    try:
        return libc().syscall(_COMMON["landlock_create_ruleset"], None, 0, LANDLOCK_CREATE_RULESET_VERSION)
    except OSError:
        return 0


def enter_namespaces(shm_mb: int = 256) -> bool:
    """New user, network and mount namespaces, our uid/gid mapped to themselves (so file ownership reads
    the same), and a private tmpfs of `shm_mb` MB on /dev/shm: multiprocessing semaphores and shared
    memory (joblib probes for them on import) then work inside the trial and are invisible outside it.
    Returns whether /dev/shm is private. Raises OSError where the platform refuses namespaces (Docker's
    seccomp profile, Ubuntu's AppArmor)."""
    uid, gid = os.geteuid(), os.getegid()
    c = libc()
    if c.lib.unshare(c.ctypes.c_int(CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWNS)) != 0:
        code = c.ctypes.get_errno()
        raise OSError(code, os.strerror(code))
    for path, text in (
        ("/proc/self/setgroups", "deny"),
        ("/proc/self/uid_map", f"{uid} {uid} 1"),
        ("/proc/self/gid_map", f"{gid} {gid} 1"),
    ):
        fd = os.open(path, os.O_WRONLY)
        try:
            os.write(fd, text.encode())
        finally:
            os.close(fd)
    _loopback_up()
    if not os.path.isdir(SHM):
        return False
    mount = c.lib.mount
    mount.argtypes = [
        c.ctypes.c_char_p,
        c.ctypes.c_char_p,
        c.ctypes.c_char_p,
        c.ctypes.c_ulong,
        c.ctypes.c_char_p,
    ]
    # Nothing mounted here propagates back to the kernel's namespace.
    if mount(None, b"/", None, MS_REC | MS_PRIVATE, None) != 0:
        return False
    options = f"size={int(shm_mb)}m,mode=1777".encode()
    return bool(mount(b"tmpfs", SHM.encode(), b"tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, options) == 0)


def _loopback_up() -> None:
    """The new network namespace's own loopback, up (it starts down): a library that binds or probes
    127.0.0.1 / ::1 (TensorFlow, a local test server) meets what it meets in the kernel, and still
    nothing outside the trial."""
    import fcntl
    import socket

    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            request = struct.pack("16sH", b"lo", 0)
            flags = struct.unpack_from("16sH", fcntl.ioctl(sock.fileno(), SIOCGIFFLAGS, request))[1]
            fcntl.ioctl(sock.fileno(), SIOCSIFFLAGS, struct.pack("16sH", b"lo", flags | IFF_UP))
    except OSError:
        pass  # binding a loopback address then fails as on a machine without one


def drop_privileges(numbers: dict[str, int]) -> None:
    """no_new_privs (Landlock and seccomp need it) and no capabilities, whoever the kernel runs as."""
    c = libc()
    c.prctl(PR_SET_NO_NEW_PRIVS, 1)
    header = struct.pack("<Ii", CAP_VERSION_3, 0)
    data = bytes(24)  # two __user_cap_data_struct, all sets empty
    hbuf = c.ctypes.create_string_buffer(header, len(header))
    dbuf = c.ctypes.create_string_buffer(data, len(data))
    c.syscall(numbers["capset"], hbuf, dbuf)


def restrict_files(abi: int, writable: list[str], devices: tuple[str, ...] = (), netns: bool = False) -> None:
    """Landlock: writes only beneath the `writable` directories and to /dev/null, and writes (no
    creation, no truncation) beneath this process's own /proc/<pid>/task, where its threads' names are
    (the supervisor lets only their `comm` files through), and to the `devices` files (a worker's GPU);
    with ABI >= 4 no TCP connect, nor bind outside a network namespace of the trial's own (`netns`: an
    address bound there reaches nothing); with ABI >= 6 no signals or abstract unix sockets beyond the
    sandbox."""
    c = libc()
    handled = LL_FS_ABI1 | (LL_REFER if abi >= 2 else 0) | (LL_TRUNCATE if abi >= 3 else 0)
    net = (LL_NET_CONNECT if netns else LL_NET_TCP) if abi >= 4 else 0
    scoped = LL_SCOPE if abi >= 6 else 0
    attr = struct.pack("<QQQ", handled, net, scoped)
    size = 24 if abi >= 6 else (16 if abi >= 4 else 8)
    abuf = c.ctypes.create_string_buffer(attr[:size], size)
    ruleset = c.syscall(_COMMON["landlock_create_ruleset"], abuf, c.ctypes.c_size_t(size), c.ctypes.c_uint(0))
    try:
        rules = [(directory, handled) for directory in writable]
        rules.append(("/dev/null", LL_WRITE_FILE | (LL_TRUNCATE if abi >= 3 else 0)))
        rules.append((f"/proc/{os.getpid()}/task", LL_WRITE_FILE))
        rules += [(device, LL_WRITE_FILE) for device in devices]  # a worker's GPU driver files
        for path, rights in rules:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            try:
                rule = struct.pack("<Qi", rights, fd)  # landlock_path_beneath_attr is packed
                rbuf = c.ctypes.create_string_buffer(rule, len(rule))
                c.syscall(_COMMON["landlock_add_rule"], ruleset, LANDLOCK_RULE_PATH_BENEATH, rbuf, 0)
            finally:
                os.close(fd)
        c.syscall(_COMMON["landlock_restrict_self"], ruleset, 0)
    finally:
        os.close(ruleset)


def install_filter(
    numbers: dict[str, int],
    audit_arch: int,
    watched: Any = (),
    every_thread: bool = False,
    processes: bool = False,
) -> int:
    """Install the seccomp filter (calls on the `watched` descriptors notified; new processes let through
    with `processes`, in this process's group), on every thread of the process with `every_thread`;
    returns the user-notification listener's fd."""
    c = libc()
    program = filter_program(audit_arch, numbers, os.getpid(), watched, processes)
    code = c.ctypes.create_string_buffer(program, len(program))
    fprog = struct.pack("<HxxxxxxQ", len(program) // 8, c.ctypes.addressof(code))
    pbuf = c.ctypes.create_string_buffer(fprog, len(fprog))
    flags = SECCOMP_FILTER_FLAG_NEW_LISTENER
    if every_thread:
        flags |= SECCOMP_FILTER_FLAG_TSYNC | SECCOMP_FILTER_FLAG_TSYNC_ESRCH
    return c.syscall(numbers["seccomp"], SECCOMP_SET_MODE_FILTER, flags, pbuf)


# -- the platform's capabilities (the server asks once) ---------------------------------------------


def probe() -> dict[str, Any]:
    """What this platform allows, found by trying each layer in a throwaway child process."""
    found: dict[str, Any] = {"platform": sys.platform, "machine": platform.machine()}
    if not hasattr(os, "fork"):
        return {**found, "available": False, "sandbox": None, "reason": "this platform cannot fork a process"}
    table = arch()
    if table is None:
        reason = (
            "no OS sandbox on this platform (Landlock, seccomp and namespaces are Linux features)"
            if not sys.platform.startswith("linux")
            else f"no seccomp filter for the {platform.machine()} architecture"
        )
        return {**found, "available": False, "sandbox": None, "reason": reason}
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        report: dict[str, Any] = {}
        try:
            os.close(read)
            report["landlock_abi"] = landlock_abi()
            try:
                report["private_shm"] = enter_namespaces()
                report["netns"] = True
            except OSError as exc:
                report["netns"] = False
                report["netns_error"] = os.strerror(exc.errno or 0)
            drop_privileges(table[1])
            if report["landlock_abi"]:
                import tempfile

                restrict_files(report["landlock_abi"], [tempfile.gettempdir()])
            listener = install_filter(table[1], table[0])
            report["seccomp"] = True
            os.close(listener)
        except OSError as exc:
            report.setdefault("seccomp", False)
            report["error"] = f"{exc.strerror or exc}"
        except Exception as exc:
            report.setdefault("seccomp", False)
            report["error"] = f"{type(exc).__name__}: {exc}"
        finally:
            os.write(write, json.dumps(report).encode())
            os._exit(0)
    os.close(write)
    chunks = []
    while True:
        chunk = os.read(read, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(read)
    os.waitpid(pid, 0)
    try:
        report = json.loads(b"".join(chunks) or b"{}")
    except ValueError:
        report = {}
    found.update(report)
    found["available"] = bool(report.get("seccomp"))
    found["sandbox"] = sandbox_name(report) if found["available"] else None
    error = report.get("error", "unknown error")
    found["reason"] = None if found["available"] else f"the kernel refused a seccomp filter ({error})"
    return found


def sandbox_name(layers: dict[str, Any]) -> str:
    parts = ["seccomp"]
    if layers.get("landlock_abi"):
        parts.append("landlock")
    if layers.get("netns"):
        parts.append("netns")
    if layers.get("private_shm"):
        parts.append("private-shm")
    return "+".join(parts)
