"""Private copy-on-write layers for a trial's file writes (Linux: user + mount namespaces, overlayfs).

In the forked child, right after `confine.enter_namespaces`, the kernel's working directory, the user's
home and the temporary directory are each covered by an overlay mount whose upper layer lives on a tmpfs
mounted in the child's own mount namespace (over its scratch directory) and sized to the trial's memory
cap. Every write there (create, truncate, append, rename, delete, mkdir, chmod) lands in that tmpfs; reads
see the cell's own writes; the real files never change, and nobody outside the child can see the layer
(the mounts are private to its namespace). The tmpfs is freed when the child's namespace and the kernel's
last descriptor of it are gone. Landlock then allows writes beneath those directories only, which are the
overlays: elsewhere writes stay refused (*blocked*).

Needs Linux >= 6.6 (overlayfs in a user namespace since 5.11, keeping its marks in user xattrs, which
tmpfs holds since 6.6); where namespaces are refused (Ubuntu 24.04's AppArmor default, Docker's default
seccomp profile) or the kernel is older, nothing is mounted and writes stay refused. Stdlib only.
"""

from __future__ import annotations

import contextlib
import os
import stat
from typing import Any

MS_NOSUID, MS_NODEV = 2, 4


def _beneath(path: str, directory: str) -> bool:
    return path.startswith(directory.rstrip("/") + "/")


def mount_points() -> list[str]:
    """This mount namespace's mount points."""
    points: list[str] = []
    try:
        with open("/proc/self/mountinfo", "rb") as fh:
            for line in fh.read().split(b"\n"):
                parts = line.split()
                if len(parts) > 4:
                    points.append(_unescape(parts[4]))
    except OSError:
        pass
    return points


def _unescape(raw: bytes) -> str:
    """A mountinfo field: space, tab, newline and backslash come as octal escapes (no codec is imported
    for it: the child may not be able to read one by then)."""
    out, index = bytearray(), 0
    while index < len(raw):
        chunk = raw[index + 1 : index + 4]
        if raw[index] == 0x5C and len(chunk) == 3 and all(0x30 <= b <= 0x37 for b in chunk):
            out.append(int(chunk, 8))
            index += 4
        else:
            out.append(raw[index])
            index += 1
    return os.fsdecode(bytes(out))


def layer_dirs(candidates: list[str], points: list[str]) -> list[str]:
    """The directories to cover, outer ones first: existing ones, resolved, and none the root or with a
    mount beneath it. A new user namespace may not uncover what its parent's mounts hide, so overlayfs
    refuses such a lower directory (and it would show those mounts' mount points, not their files); a
    candidate beneath it (the working directory beneath a home that has a mount in it) is covered
    instead. One beneath another is covered too, by an overlay of its own on top: a write there copies
    up only the directories beneath it, which are usually the user's own (copying up a directory of
    another user, /tmp/pytest-of-root, fails with EOVERFLOW in a user namespace that maps only ours)."""
    found: list[str] = []
    for path in candidates:
        real = os.path.realpath(path) if path else "/"
        mounted = any(_beneath(p, real) for p in points)
        if real != "/" and os.path.isdir(real) and real not in found and not mounted:
            found.append(real)
    return sorted(found, key=lambda d: d.count("/"))


def mount_layers(candidates: list[str], scratch: str, size_mb: int) -> dict[str, Any]:
    """Cover `candidates` (see `layer_dirs`) with overlays whose upper layers are on a `size_mb` MB tmpfs
    mounted over `scratch`. Returns {"dirs": the covered directories, "fd": a descriptor of the tmpfs's
    root, which the kernel keeps to measure and list what was written}. Raises OSError where a mount is
    refused; then nothing the cell sees has changed but possibly some directories already covered,
    which is harmless: the caller offers none of them as writable."""
    from .confine import libc

    c = libc()
    mount = c.lib.mount
    mount.argtypes = [c.ctypes.c_char_p] * 3 + [c.ctypes.c_ulong, c.ctypes.c_char_p]

    def do(source: str, target: str, fstype: str, flags: int, data: str) -> None:
        if mount(*(os.fsencode(s) for s in (source, target, fstype)), flags, os.fsencode(data)) != 0:
            code = c.ctypes.get_errno()
            raise OSError(code, f"mount {fstype} on {target}: {os.strerror(code)}")

    dirs = layer_dirs(candidates, mount_points())
    cwd = os.getcwd()
    opened: list[int] = []
    try:
        # Paths given as /proc/self/fd/N: no escaping of ',' or ':' in overlay's options, and the tmpfs
        # stays reachable once the temporary directory above it is covered.
        lowers = [os.open(d, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC) for d in dirs]
        opened += lowers
        do("tmpfs", scratch, "tmpfs", MS_NOSUID | MS_NODEV, f"size={int(size_mb)}m,mode=0700")
        root = os.open(scratch, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        opened.append(root)
        # Overlayfs in a user namespace keeps what it needs to remove or rename a directory of the real
        # files (opaque and redirect marks) in user.* xattrs ("userxattr"); tmpfs holds them since Linux
        # 6.6. Without them such a removal would fail with EIO, a crash the real run never has: no copy.
        try:
            os.setxattr(f"/proc/self/fd/{root}", "user.crane-trial", b"1")
        except OSError as exc:
            raise OSError(exc.errno, "tmpfs holds no user xattrs here (Linux < 6.6)") from exc
        for index, (directory, lower) in enumerate(zip(dirs, lowers)):
            upper, work = f"/proc/self/fd/{root}/u{index}", f"/proc/self/fd/{root}/w{index}"
            os.mkdir(upper, 0o700)
            os.mkdir(work, 0o700)
            # The merged root shows its upper directory's mode: keep the real one (/tmp's sticky bit).
            with contextlib.suppress(OSError):
                os.chmod(upper, stat.S_IMODE(os.stat(directory).st_mode))
            do("overlay", directory, "overlay", MS_NOSUID | MS_NODEV,
               f"lowerdir=/proc/self/fd/{lower},upperdir={upper},workdir={work},userxattr")  # fmt: skip
        with contextlib.suppress(OSError):
            os.chdir(cwd)  # the old working directory is the one beneath the overlay
        opened.remove(root)
        return {"dirs": dirs, "fd": root}
    finally:
        for fd in opened:
            with contextlib.suppress(OSError):
                os.close(fd)


NONE: dict[str, Any] = {"dirs": [], "fd": -1}


def enter(scratch: str, size_mb: int) -> dict[str, Any]:
    """In the child, after `confine.enter_namespaces` and before Landlock: cover the working directory,
    the home directory and the temporary directory (the scratch directory's parent). Returns what
    `mount_layers` does, or no directories and the reason ("error"). Only where Landlock exists, which
    keeps every other write refused; without it the supervisor refuses all writes anyway."""
    from .confine import landlock_abi

    if not landlock_abi():
        return {**NONE, "error": "no Landlock to confine writes to the private copies"}
    try:
        candidates = [os.getcwd(), os.path.expanduser("~"), os.path.dirname(scratch)]
        return mount_layers(candidates, scratch, size_mb)
    except OSError as exc:
        return {**NONE, "error": str(exc)}


def grant(found: dict[str, Any]) -> dict[str, Any]:
    """What the supervisor must know of the layers (see supervisor.Supervisor)."""
    return {"layers": found["dirs"]}


def fds(found: dict[str, Any]) -> list[int]:
    """The tmpfs's descriptor, to send to the kernel (none without layers)."""
    return [found["fd"]] if found["fd"] >= 0 else []


# -- the kernel's side: what the layer holds --------------------------------------------------------


# A private copy with less room left than this is full: the cell's write that failed was the cap's doing.
FULL_BYTES = 1 << 20


def free_bytes(root: int) -> int:
    try:
        st = os.fstatvfs(root)
    except OSError:
        return 1 << 62
    return int(st.f_bavail * st.f_frsize)


def used_bytes(root: int) -> int:
    """Bytes the tmpfs holds (its blocks in use)."""
    try:
        st = os.fstatvfs(root)
    except OSError:
        return 0
    return int((st.f_blocks - st.f_bfree) * st.f_frsize)


def settle(
    outcome: dict[str, Any], root: int, layers: list[str], cap_mb: int, peak: int, scratch: str = ""
) -> str | None:
    """What the cell wrote to its private copy, in words, once the child is gone; and a crash that is
    the copy's doing, not the cell's, made what it is: a full copy (no space left: the real disk would
    have taken the write) is the cap's outcome; a rename of a directory of the real files, which
    overlayfs in a user namespace answers with EXDEV (it may not mark redirects), and a change to a file
    of another user, which it cannot copy up (EOVERFLOW: that owner is not mapped), are blocked."""
    text = f"{outcome.get('exception')}: {outcome.get('message')}".lower()
    if outcome.get("status") == "crashed":
        if free_bytes(root) < FULL_BYTES or "no space left on device" in text or "errno 28" in text:
            outcome.clear()
            outcome.update(
                status="out_of_memory",
                reason=f"the cell wrote more than the trial's {cap_mb} MB cap allows to its private copy "
                f"of the files ({size(peak)} written; the real disk was never touched)",
            )
        elif "invalid cross-device link" in text or "errno 18" in text:
            outcome.clear()
            outcome.update(
                status="blocked",
                reason="the cell moved or linked a file in a way the trial's private copy cannot follow "
                "(EXDEV: overlayfs in a user namespace cannot rename a directory of the real files, nor "
                "link across copies), so the trial stopped there",
            )
        elif "value too large for defined data type" in text or "errno 75" in text:
            outcome.clear()
            outcome.update(
                status="blocked",
                reason="the cell changed a file or directory owned by another user, which the trial's "
                "private copy cannot copy (EOVERFLOW in a user namespace), so the trial stopped there",
            )
    return describe(summary(root, layers, scratch))


def summary(root: int, layers: list[str] | None = None, skip: str = "") -> dict[str, Any]:
    """What the upper layers hold: regular files written (count, bytes), directories made (new, or
    emptied and made again: opaque) and deletions (whiteouts, which a rename leaves too), leaving out
    what lies beneath `skip` (the trial's own TMPDIR, whose writes were never refused). Upper layer u<i>
    covers layers[i]."""
    files = total = deleted = dirs = 0
    top = f"/proc/self/fd/{root}"
    try:
        uppers = [n for n in os.listdir(top) if n[:1] == "u" and n[1:].isdigit()]
    except OSError:
        uppers = []
    for name in uppers:
        index = int(name[1:])
        real = layers[index] if layers and index < len(layers) else None
        upper = os.path.join(top, name)
        for base, subdirs, names in os.walk(upper):
            if real is not None and skip:
                subdirs[:] = [d for d in subdirs if _real(real, upper, os.path.join(base, d)) != skip]
            for entry in subdirs:
                path = os.path.join(base, entry)
                if real is None:
                    continue
                try:
                    opaque = os.getxattr(path, "user.overlay.opaque", follow_symlinks=False) == b"y"
                except OSError:
                    opaque = False
                if opaque or not os.path.lexists(_real(real, upper, path)):
                    dirs += 1
            for entry in names:
                try:
                    st = os.lstat(os.path.join(base, entry))
                except OSError:
                    continue
                if stat.S_ISREG(st.st_mode):
                    files += 1
                    total += st.st_size
                elif stat.S_ISCHR(st.st_mode) and st.st_rdev == 0:
                    deleted += 1
    return {"files": files, "bytes": total, "dirs": dirs, "deleted": deleted}


def _real(real: str, upper: str, path: str) -> str:
    """The real path a path in an upper layer stands for."""
    return os.path.normpath(os.path.join(real, os.path.relpath(path, upper)))


def describe(found: dict[str, Any]) -> str | None:
    """'wrote 2 files (1.2 MB) in a private copy, discarded: ...' (None: nothing written)."""
    files, dirs, deleted = (int(found.get(k, 0)) for k in ("files", "dirs", "deleted"))
    parts = []
    if files:
        parts.append(f"wrote {files} file{'s' if files != 1 else ''} ({size(int(found.get('bytes', 0)))})")
    if dirs:
        parts.append(f"made {dirs} director{'ies' if dirs != 1 else 'y'}")
    if deleted:
        parts.append(f"removed or renamed {deleted}")
    if not parts:
        return None
    listed = ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]
    return f"{listed} in a private copy, discarded: the real files did not change"


def size(n: int) -> str:
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("kB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"
