"""The trial's seccomp filter: the syscall tables of each machine and the BPF program that refuses, records
or lets through each call. Installed by `confine.install_filter`; its notifications are answered by
`supervisor.py` in the kernel.

What it refuses (see `confine.py` for every layer): new processes (fork, vfork, clone without
CLONE_THREAD, execve, execveat; clone3 answers ENOSYS so libc falls back to clone), network sockets (any
family but AF_UNIX stream and AF_NETLINK), connect and bind, signals to other processes, the file
operations Landlock does not cover (chmod, chown, utime, xattr) and the administrative calls a root kernel
could otherwise make (mount, reboot, settimeofday, ptrace, ...). Opening a file for writing and every
refused call reach the supervisor as a user notification. Numbers are from the kernel's uapi headers.
"""

from __future__ import annotations

import errno
import os
import platform
import struct
import sys
from typing import Any, Callable

# -- the kernel's ABI ---------------------------------------------------------------------------------

SECCOMP_SET_MODE_FILTER = 1
SECCOMP_GET_NOTIF_SIZES = 3
SECCOMP_FILTER_FLAG_NEW_LISTENER = 1 << 3
# Every thread of the process gets the filter (a spawned worker has library threads); with a listener,
# a thread that cannot take it fails the call with ESRCH.
SECCOMP_FILTER_FLAG_TSYNC = 1
SECCOMP_FILTER_FLAG_TSYNC_ESRCH = 1 << 4
SECCOMP_RET_KILL_PROCESS = 0x80000000
SECCOMP_RET_ERRNO = 0x00050000
SECCOMP_RET_USER_NOTIF = 0x7FC00000
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_USER_NOTIF_FLAG_CONTINUE = 1
# _IOWR('!', 0, struct seccomp_notif) and friends.
NOTIF_RECV = 0xC0502100
NOTIF_SEND = 0xC0182101
NOTIF_ID_VALID = 0x40082102


CLONE_THREAD = 0x00010000
# CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET, and NEWTIME (0x80): a new namespace.
CLONE_NAMESPACES = (
    0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000 | 0x80
)

O_WRITE_MASK = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
AT_FDCWD = -100
AT_REMOVEDIR = 0x200
AT_EMPTY_PATH = 0x1000
AF_UNIX, AF_INET, AF_INET6, AF_NETLINK = 1, 2, 10, 16
SOCK_DGRAM = 2

# Syscall numbers used below. x86_64 from asm/unistd_64.h, aarch64 from asm-generic/unistd.h (which
# has no open/creat/fork/... : those are *at calls there). Numbers >= 424 are shared by every arch.
_COMMON = {
    "pidfd_send_signal": 424, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
    "clone3": 435, "openat2": 437, "pidfd_getfd": 438, "process_madvise": 440, "mount_setattr": 442,
    "close_range": 436, "landlock_create_ruleset": 444, "landlock_add_rule": 445,
    "landlock_restrict_self": 446,
    "process_mrelease": 448, "fchmodat2": 452, "setxattrat": 463, "removexattrat": 466,
    "open_tree_attr": 467, "file_setattr": 469,
}  # fmt: skip
_X86_64 = {
    "open": 2, "shmget": 29, "shmat": 30, "shmctl": 31, "socket": 41, "connect": 42, "bind": 49,
    "clone": 56, "fork": 57, "vfork": 58, "execve": 59, "kill": 62, "semget": 64, "semop": 65,
    "semctl": 66, "msgget": 68, "msgsnd": 69, "msgrcv": 70, "msgctl": 71, "truncate": 76,
    "rename": 82, "mkdir": 83, "rmdir": 84, "creat": 85, "link": 86, "unlink": 87, "symlink": 88,
    "chmod": 90, "fchmod": 91, "chown": 92, "fchown": 93, "lchown": 94, "ptrace": 101, "syslog": 103,
    "capset": 126, "rt_sigqueueinfo": 129, "utime": 132, "mknod": 133, "uselib": 134,
    "setpriority": 141, "sched_setparam": 142, "sched_setscheduler": 144, "vhangup": 153,
    "pivot_root": 155, "adjtimex": 159, "chroot": 161, "acct": 163, "settimeofday": 164, "mount": 165,
    "umount2": 166, "swapon": 167, "swapoff": 168, "reboot": 169, "sethostname": 170,
    "setdomainname": 171, "iopl": 172, "ioperm": 173, "init_module": 175, "delete_module": 176,
    "quotactl": 179, "nfsservctl": 180, "setxattr": 188, "lsetxattr": 189, "fsetxattr": 190,
    "removexattr": 197, "lremovexattr": 198, "fremovexattr": 199, "tkill": 200,
    "sched_setaffinity": 203, "lookup_dcookie": 212, "semtimedop": 220, "clock_settime": 227,
    "tgkill": 234, "utimes": 235, "mq_open": 240, "mq_unlink": 241, "mq_timedsend": 242,
    "mq_timedreceive": 243, "mq_notify": 244, "mq_getsetattr": 245, "kexec_load": 246,
    "add_key": 248, "request_key": 249, "keyctl": 250, "ioprio_set": 251, "migrate_pages": 256,
    "openat": 257, "mkdirat": 258, "mknodat": 259, "fchownat": 260, "futimesat": 261,
    "unlinkat": 263, "renameat": 264, "linkat": 265, "symlinkat": 266, "fchmodat": 268,
    "unshare": 272, "move_pages": 279, "utimensat": 280, "rt_tgsigqueueinfo": 297,
    "perf_event_open": 298, "fanotify_init": 300, "prlimit64": 302, "open_by_handle_at": 304,
    "clock_adjtime": 305, "setns": 308, "process_vm_writev": 311, "finit_module": 313,
    "sched_setattr": 314, "renameat2": 316, "seccomp": 317, "kexec_file_load": 320, "bpf": 321,
    "execveat": 322, "mremap": 25, "setpgid": 109, "setsid": 112, "kcmp": 312,
    # Calls on a descriptor (the filter watches inherited ones, see FD_CALLS).
    "read": 0, "write": 1, "close": 3, "mmap": 9, "ioctl": 16, "pread64": 17, "pwrite64": 18,
    "readv": 19, "writev": 20, "dup": 32, "dup2": 33, "sendfile": 40, "accept": 43, "sendto": 44,
    "recvfrom": 45, "sendmsg": 46, "recvmsg": 47, "shutdown": 48, "listen": 50, "getsockname": 51,
    "getpeername": 52, "setsockopt": 54, "getsockopt": 55, "wait4": 61, "fcntl": 72, "flock": 73,
    "ftruncate": 77, "epoll_ctl": 233, "waitid": 247, "splice": 275, "tee": 276, "fallocate": 285,
    "accept4": 288, "dup3": 292, "preadv": 295, "pwritev": 296, "recvmmsg": 299, "sendmmsg": 307,
    "copy_file_range": 326, "preadv2": 327, "pwritev2": 328,
}  # fmt: skip
_AARCH64 = {
    "setxattr": 5, "lsetxattr": 6, "fsetxattr": 7, "removexattr": 14, "lremovexattr": 15,
    "fremovexattr": 16, "lookup_dcookie": 18, "ioprio_set": 30, "mknodat": 33, "mkdirat": 34,
    "unlinkat": 35, "symlinkat": 36, "linkat": 37, "renameat": 38, "umount2": 39, "mount": 40,
    "pivot_root": 41, "nfsservctl": 42, "truncate": 45, "chroot": 51, "fchmod": 52, "fchmodat": 53,
    "fchownat": 54, "fchown": 55, "openat": 56, "quotactl": 60, "vhangup": 58, "utimensat": 88,
    "acct": 89, "capset": 91, "unshare": 97, "kexec_load": 104, "init_module": 105,
    "delete_module": 106, "clock_settime": 112, "syslog": 116, "ptrace": 117, "sched_setparam": 118,
    "sched_setscheduler": 119, "sched_setaffinity": 122, "kill": 129, "tkill": 130, "tgkill": 131,
    "rt_sigqueueinfo": 138, "setpriority": 140, "reboot": 142, "sethostname": 161,
    "setdomainname": 162, "settimeofday": 170, "adjtimex": 171, "mq_open": 180, "mq_unlink": 181,
    "mq_timedsend": 182, "mq_timedreceive": 183, "mq_notify": 184, "mq_getsetattr": 185,
    "msgget": 186, "msgctl": 187, "msgrcv": 188, "msgsnd": 189, "semget": 190, "semctl": 191,
    "semtimedop": 192, "semop": 193, "shmget": 194, "shmctl": 195, "shmat": 196, "socket": 198,
    "bind": 200, "connect": 203, "mremap": 216, "add_key": 217, "request_key": 218, "keyctl": 219,
    "clone": 220, "execve": 221, "swapon": 224, "swapoff": 225, "migrate_pages": 238,
    "move_pages": 239, "rt_tgsigqueueinfo": 240, "perf_event_open": 241, "prlimit64": 261,
    "fanotify_init": 262, "open_by_handle_at": 265, "clock_adjtime": 266, "setns": 268,
    "process_vm_writev": 271, "finit_module": 273, "sched_setattr": 274, "renameat2": 276,
    "seccomp": 277, "bpf": 280, "execveat": 281, "kexec_file_load": 294, "setpgid": 154, "setsid": 157,
    "kcmp": 272,
    "epoll_ctl": 21, "dup": 23, "dup3": 24, "fcntl": 25, "ioctl": 29, "flock": 32, "ftruncate": 46,
    "fallocate": 47, "close": 57, "read": 63, "write": 64, "readv": 65, "writev": 66, "pread64": 67,
    "pwrite64": 68, "preadv": 69, "pwritev": 70, "sendfile": 71, "splice": 76, "tee": 77,
    "waitid": 95, "listen": 201, "accept": 202, "getsockname": 204, "getpeername": 205, "sendto": 206,
    "recvfrom": 207, "setsockopt": 208, "getsockopt": 209, "shutdown": 210, "sendmsg": 211,
    "recvmsg": 212, "mmap": 222, "accept4": 242, "recvmmsg": 243, "wait4": 260, "sendmmsg": 269,
    "copy_file_range": 285, "preadv2": 286, "pwritev2": 287,
}  # fmt: skip
# machine -> (AUDIT_ARCH_*, syscall numbers, highest number this filter knows)
ARCHES: dict[str, tuple[int, dict[str, int]]] = {
    "x86_64": (0xC000003E, {**_X86_64, **_COMMON}),
    "aarch64": (0xC00000B7, {**_AARCH64, **_COMMON}),
}
# Calls numbered above this are newer than the filter: they answer ENOSYS, as on an older kernel.
HIGHEST_KNOWN = 469

# What the supervisor does with a refused call, by name. "fs": a file operation (the path decides);
# the others are refused and recorded with the words shown.
REFUSED = {
    "clone": "start a process", "fork": "start a process", "vfork": "start a process",
    "execve": "run a program", "execveat": "run a program",
    "socket": "open a network socket", "connect": "connect a socket", "bind": "bind a socket",
    "kill": "signal", "tkill": "signal", "tgkill": "signal", "rt_sigqueueinfo": "signal",
    "rt_tgsigqueueinfo": "signal", "pidfd_send_signal": "send a signal to another process",
    "setpriority": "sched", "sched_setparam": "sched", "sched_setscheduler": "sched",
    "sched_setaffinity": "sched", "sched_setattr": "sched", "prlimit64": "sched", "ioprio_set": "sched",
    "migrate_pages": "sched", "move_pages": "sched",
    "setsid": "start a new session (a process that would outlive the trial)",
    "setpgid": "move a process to another process group (where it would outlive the trial)",
}  # fmt: skip
FS_CALLS = [
    "open", "openat", "creat", "truncate", "rename", "renameat", "renameat2", "mkdir", "mkdirat", "rmdir",
    "unlink", "unlinkat", "link", "linkat", "symlink", "symlinkat", "mknod", "mknodat", "chmod", "fchmod",
    "fchmodat", "fchmodat2", "chown", "lchown", "fchown", "fchownat", "utime", "utimes", "futimesat",
    "utimensat", "setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr", "fremovexattr",
    "setxattrat", "removexattrat", "file_setattr"
]  # fmt: skip
# Refused and recorded: they change something outside the child.
_OTHER_RECORDED = [
    "ptrace", "process_vm_writev", "pidfd_getfd", "process_madvise", "process_mrelease", "mount", "umount2",
    "pivot_root", "chroot", "swapon", "swapoff", "reboot", "sethostname", "setdomainname", "settimeofday",
    "clock_settime", "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
    "acct", "quotactl", "iopl", "ioperm", "unshare", "setns", "vhangup", "open_tree", "move_mount",
    "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr", "open_tree_attr", "shmget", "shmat",
    "shmctl", "semget", "semop", "semctl", "semtimedop", "msgget", "msgsnd", "msgrcv", "msgctl", "mq_open",
    "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify", "mq_getsetattr"
]  # fmt: skip
# Allowed on the child itself (a pid of 0 or its own), sent to the supervisor otherwise.
_OWN_PROCESS = ("sched_setparam", "sched_setscheduler", "sched_setaffinity", "sched_setattr", "prlimit64",
                "migrate_pages", "move_pages")  # fmt: skip
# Refused without a record: libraries probe for them and cope with the error; none changes anything.
_SILENT = {
    "clone3": errno.ENOSYS, "openat2": errno.ENOSYS, "io_uring_setup": errno.ENOSYS,
    "io_uring_enter": errno.ENOSYS, "io_uring_register": errno.ENOSYS, "perf_event_open": errno.EACCES,
    "bpf": errno.EPERM, "keyctl": errno.ENOSYS, "add_key": errno.ENOSYS, "request_key": errno.ENOSYS,
    "adjtimex": errno.EPERM, "clock_adjtime": errno.EPERM, "syslog": errno.EPERM,
    "fanotify_init": errno.EPERM, "open_by_handle_at": errno.EPERM, "lookup_dcookie": errno.ENOSYS,
    "nfsservctl": errno.ENOSYS, "uselib": errno.ENOSYS,
}  # fmt: skip


# Calls on a descriptor, with the arguments that hold one: sent to the supervisor when one of them is an
# inherited descriptor the child watches (`inherited.py`), allowed otherwise. "write": they change what
# the descriptor leads to (a file the kernel opened for writing is watched for these only).
FD_CALLS: dict[str, tuple[tuple[int, ...], bool]] = {
    "read": ((0,), False), "readv": ((0,), False), "pread64": ((0,), False), "preadv": ((0,), False),
    "preadv2": ((0,), False), "recvfrom": ((0,), False), "recvmsg": ((0,), False),
    "recvmmsg": ((0,), False), "listen": ((0,), False), "accept": ((0,), False),
    "accept4": ((0,), False), "shutdown": ((0,), True), "getsockopt": ((0,), False),
    "setsockopt": ((0,), False), "getpeername": ((0,), False), "getsockname": ((0,), False),
    "ioctl": ((0,), False), "fcntl": ((0,), False), "flock": ((0,), False), "dup": ((0,), False),
    "epoll_ctl": ((2,), False), "write": ((0,), True), "writev": ((0,), True),
    "pwrite64": ((0,), True), "pwritev": ((0,), True), "pwritev2": ((0,), True),
    "sendto": ((0,), True), "sendmsg": ((0,), True), "sendmmsg": ((0,), True),
    "ftruncate": ((0,), True), "fallocate": ((0,), True), "mmap": ((4,), False),
    "sendfile": ((0, 1), True), "splice": ((0, 2), True), "tee": ((0, 1), True),
    "copy_file_range": ((0, 2), True), "dup2": ((0, 1), False), "dup3": ((0, 1), False),
    "close": ((0,), False),
}  # fmt: skip

# Always sent to the supervisor (open/openat, clone, socket and the pid-taking calls only sometimes).
_ALWAYS_NOTIFIED = [n for n in FS_CALLS if n not in ("open", "openat")] + [
    "fork", "vfork", "execve", "execveat", "connect", "bind", "tkill", "pidfd_send_signal",
    "wait4", "waitid", "close_range", *_OTHER_RECORDED,
]  # fmt: skip


def arch() -> tuple[int, dict[str, int]] | None:
    """This machine's (AUDIT_ARCH, syscall numbers), or None where the filter has no table."""
    if not sys.platform.startswith("linux"):
        return None
    return ARCHES.get(platform.machine())


# -- BPF --------------------------------------------------------------------------------------------

_LD_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_JSET = 0x45  # BPF_JMP | BPF_JSET | BPF_K
_JA = 0x05  # BPF_JMP | BPF_JA: an unconditional jump by k (32 bits)
_AND = 0x54  # BPF_ALU | BPF_AND | BPF_K
_RET = 0x06  # BPF_RET | BPF_K

Target = Any  # an int (offset 0) or a label name


class _Asm:
    """A tiny BPF assembler: jumps name labels, resolved (and range-checked) by `code()`."""

    def __init__(self) -> None:
        self.ins: list[tuple[int, Target, Target, int]] = []
        self.labels: dict[str, int] = {}

    def op(self, code: int, k: int, jt: Target = 0, jf: Target = 0) -> None:
        self.ins.append((code, jt, jf, k & 0xFFFFFFFF))

    def label(self, name: str) -> None:
        self.labels[name] = len(self.ins)

    def load(self, offset: int) -> None:
        self.op(_LD_ABS, offset)

    def arg(self, n: int) -> None:
        self.load(16 + 8 * n)  # low 32 bits of args[n] (little-endian machines only)

    def ret(self, value: int) -> None:
        self.op(_RET, value)

    def ja(self, label: str) -> None:
        self.ins.append((_JA, 0, 0, label))  # type: ignore[arg-type]  # k is resolved by code()

    def code(self) -> bytes:
        out = []
        for index, (code, jt, jf, k) in enumerate(self.ins):
            if isinstance(k, str):
                k = self.labels[k] - index - 1
            offsets = []
            for target in (jt, jf):
                offset = target if isinstance(target, int) else self.labels[target] - index - 1
                if not 0 <= offset <= 255:
                    raise ValueError(f"BPF jump out of range at {index}: {offset}")
                offsets.append(offset)
            out.append(struct.pack("<HBBI", code, offsets[0], offsets[1], k))
        return b"".join(out)


def filter_program(
    audit_arch: int, numbers: dict[str, int], pid: int, watched: Any = (), processes: bool = False
) -> bytes:
    """The seccomp program for a child whose process id is `pid` (see the module docstring); calls on the
    `watched` descriptors are sent to the supervisor. With `processes` new processes are let through,
    each under this same filter and in the child's process group, which the kernel ends with the trial:
    what they run (execve) and any attempt to leave the group (setsid, setpgid) or make a namespace
    reach the supervisor."""
    a = _Asm()
    notify, allow = SECCOMP_RET_USER_NOTIF, SECCOMP_RET_ALLOW
    a.load(4)  # arch: a call through another ABI (int 0x80 on x86_64) would be read with wrong numbers
    a.op(_JEQ, audit_arch, "native", 0)
    a.ret(SECCOMP_RET_ERRNO | errno.ENOSYS)
    a.label("native")
    a.load(0)  # the call's number
    if audit_arch == ARCHES["x86_64"][0]:
        a.op(_JSET, 0x40000000, 0, 1)  # the x32 ABI
        a.ret(SECCOMP_RET_ERRNO | errno.ENOSYS)
    a.op(_JGE, HIGHEST_KNOWN + 1, 0, 1)
    a.ret(SECCOMP_RET_ERRNO | errno.ENOSYS)

    def when(name: str, block: Callable[[], None]) -> None:
        """`block` (which always returns) for the call `name`; the accumulator holds its number."""
        nr = numbers.get(name)
        if nr is not None:
            a.op(_JEQ, nr, 0, f"not_{name}")
            block()
            a.label(f"not_{name}")

    def write_open(flags_arg: int) -> Callable[[], None]:
        def block() -> None:
            a.arg(flags_arg)
            a.op(_JSET, O_WRITE_MASK, 0, 1)
            a.ret(notify)
            a.ret(allow)

        return block

    def own_pid(name: str, pid_arg: int, zero_is_self: bool) -> Callable[[], None]:
        def block() -> None:
            a.arg(pid_arg)
            a.op(_JEQ, pid, f"ok_{name}", 0)
            if zero_is_self:
                a.op(_JEQ, 0, f"ok_{name}", 0)
            a.ret(notify)
            a.label(f"ok_{name}")
            a.ret(allow)

        return block

    def which_who(name: str, which: int) -> Callable[[], None]:  # setpriority, ioprio_set: a process
        def block() -> None:
            a.arg(0)
            a.op(_JEQ, which, 0, f"no_{name}")
            a.arg(1)
            a.op(_JEQ, 0, f"ok_{name}", 0)
            a.op(_JEQ, pid, f"ok_{name}", 0)
            a.label(f"no_{name}")
            a.ret(notify)
            a.label(f"ok_{name}")
            a.ret(allow)

        return block

    def clone() -> None:
        a.arg(0)
        a.op(_JSET, CLONE_THREAD, "ok_clone", 0)  # a thread: allowed
        if processes:
            a.op(_JSET, CLONE_NAMESPACES, 0, "ok_clone")  # a process, in no namespace of its own
        a.ret(notify)
        a.label("ok_clone")
        a.ret(allow)

    def socket() -> None:
        a.arg(0)
        a.op(_JEQ, AF_NETLINK, "ok_socket", 0)
        a.op(_JEQ, AF_UNIX, "unix_socket", 0)
        a.ret(notify)
        a.label("unix_socket")
        a.arg(1)
        a.op(_AND, 0xF)
        a.op(_JEQ, SOCK_DGRAM, 0, "ok_socket")  # an unconnected datagram socket sends to any path
        a.ret(notify)
        a.label("ok_socket")
        a.ret(allow)

    fds = sorted({int(fd) for fd in watched})
    if fds:
        # By the arguments that hold a descriptor: the calls jump to one block that compares them with
        # the watched numbers (the others skip the block).
        groups: dict[tuple[int, ...], list[int]] = {}
        for name, (positions, _writes) in FD_CALLS.items():
            if name in numbers:
                groups.setdefault(positions, []).append(numbers[name])
        for n, (positions, nrs) in enumerate(sorted(groups.items())):
            for number in nrs:
                a.op(_JEQ, number, f"fd_block_{n}", 0)
            a.ja(f"fd_done_{n}")
            a.label(f"fd_block_{n}")
            for position in positions:
                a.arg(position)
                for fd in fds:
                    a.op(_JEQ, fd, f"fd_hit_{n}_{position}", 0)
                a.ja(f"fd_miss_{n}_{position}")
                a.label(f"fd_hit_{n}_{position}")
                a.ret(notify)
                a.label(f"fd_miss_{n}_{position}")
            a.ret(allow)
            a.label(f"fd_done_{n}")  # the accumulator still holds the call's number
    when("open", write_open(1))
    when("openat", write_open(2))
    when("clone", clone)
    when("socket", socket)
    for name in ("kill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo"):
        when(name, own_pid(name, 0, zero_is_self=False))
    for name in _OWN_PROCESS:
        when(name, own_pid(name, 0, zero_is_self=True))
    when("setpriority", which_who("setpriority", 0))  # PRIO_PROCESS
    when("ioprio_set", which_who("ioprio_set", 1))  # IOPRIO_WHO_PROCESS
    for name in [*_ALWAYS_NOTIFIED, *(("setsid", "setpgid") if processes else ())]:
        if processes and name in ("fork", "vfork"):
            continue
        nr = numbers.get(name)
        if nr is not None:
            a.op(_JEQ, nr, 0, 1)
            a.ret(notify)
    for name, code in _SILENT.items():
        nr = numbers.get(name)
        if nr is not None:
            a.op(_JEQ, nr, 0, 1)
            a.ret(SECCOMP_RET_ERRNO | code)
    a.ret(allow)
    return a.code()
