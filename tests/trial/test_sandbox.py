"""The sandbox's parts on their own: the seccomp program, the path rules, the audit hook's decisions, the
GPU detection. No fork here; test_trial.py runs trials."""

from __future__ import annotations

import errno
import json
import os
import struct
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from crane_jupyterlab.kernel.trial import control as trial
from crane_jupyterlab.kernel.trial.sandbox import confine, seccomp, supervisor
from crane_jupyterlab.kernel.trial.sandbox.hooks import Guard, Refused


@pytest.mark.parametrize("machine", sorted(seccomp.ARCHES))
def test_filter_program_assembles_for_every_supported_machine(machine: str) -> None:
    audit_arch, numbers = seccomp.ARCHES[machine]
    program = seccomp.filter_program(audit_arch, numbers, pid=4242)
    assert len(program) % 8 == 0 and len(program) // 8 < 4096  # the kernel's limit
    instructions = [struct.unpack_from("<HBBI", program, i) for i in range(0, len(program), 8)]
    # It checks the architecture first, and every path ends in a return.
    assert instructions[0] == (0x20, 0, 0, 4)
    assert instructions[-1][0] == 0x06
    returns = {k for code, _, _, k in instructions if code == 0x06}
    assert seccomp.SECCOMP_RET_USER_NOTIF in returns and seccomp.SECCOMP_RET_ALLOW in returns
    # The child's own pid is what signal calls are compared with.
    assert any(k == 4242 for code, _, _, k in instructions if code == 0x15)


def test_every_recorded_call_has_a_number_on_x86_64() -> None:
    numbers = seccomp.ARCHES["x86_64"][1]
    assert not [name for name in seccomp._ALWAYS_NOTIFIED if name not in numbers]


def test_a_jump_out_of_range_is_refused_when_assembling() -> None:
    asm = seccomp._Asm()
    asm.op(0x15, 1, "far", 0)
    for _ in range(300):
        asm.ret(0)
    asm.label("far")
    asm.ret(0)
    with pytest.raises(ValueError, match="out of range"):
        asm.code()


def test_natural_errors_are_the_real_ones(tmp_path: Path) -> None:
    existing = tmp_path / "data.csv"
    existing.write_text("x")
    missing = tmp_path / "missing.csv"
    assert supervisor.natural_error("delete", str(missing)) == errno.ENOENT
    assert supervisor.natural_error("delete", str(existing)) is None
    assert supervisor.natural_error("mkdir", str(tmp_path)) == errno.EEXIST  # os.makedirs(exist_ok=True)
    assert supervisor.natural_error("create", str(tmp_path / "no" / "dir.csv")) == errno.ENOENT
    assert supervisor.natural_error("create", str(missing)) is None
    assert supervisor.natural_error("write", str(existing), exclusive=True) == errno.EEXIST


def test_resolve_names_the_child_not_the_supervisor(tmp_path: Path) -> None:
    assert supervisor.resolve("/proc/self/fd/1", "/", tid=123).startswith("/proc/123/fd/")
    assert supervisor.resolve("/dev/stdout", "/", tid=123) == os.path.realpath("/proc/123/fd/1")
    link = tmp_path / "link"
    link.symlink_to("/etc")
    assert supervisor.resolve("link/hostname", str(tmp_path)) == os.path.realpath("/etc/hostname")


def test_a_started_programs_own_file_is_not_the_childs_once_the_child_has_ended(tmp_path: Path) -> None:
    # The child has ended (kcmp can no longer compare with it) while a program it started still loads its
    # libraries at the numbers the child watched: the child's copies led to /dev/null, or to the file the
    # kernel wrote, reopened; a number that leads elsewhere is the program's own.
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    judge = supervisor.Supervisor.__new__(supervisor.Supervisor)
    written = tmp_path / "log.txt"
    written.write_text("x")
    own = os.open(str(tmp_path), os.O_RDONLY)  # what a loader opens for itself (libc.so.6)
    null = os.open(os.devnull, os.O_RDONLY)
    reopened = os.open(str(written), os.O_RDONLY)
    try:
        found = seccomp.arch()
        judge.pid, judge.c = ended.pid, supervisor.libc()
        judge.numbers = dict(found[1]) if found else {}
        judge.watched = {
            fd: {"what": "the kernel's own eventfd descriptor", "mode": "any"} for fd in (own, null)
        }
        judge.watched[reopened] = {"what": f"the file {written} ...", "mode": "write", "path": str(written)}
        me = os.getpid()
        assert not judge.same_file(me, own)
        assert judge.same_file(me, null) and judge.same_file(me, reopened)
        judge.numbers = {}  # no kcmp at all: the same answers
        assert not judge.same_file(me, own) and judge.same_file(me, null)
    finally:
        for fd in (own, null, reopened):
            os.close(fd)


def test_inside_means_beneath_the_scratch_directory() -> None:
    assert supervisor.inside("/tmp/scratch/a.csv", "/tmp/scratch")
    assert supervisor.inside("/tmp/scratch", "/tmp/scratch")
    assert supervisor.inside(os.devnull, None)
    assert not supervisor.inside("/tmp/scratchy/a.csv", "/tmp/scratch")
    assert not supervisor.inside("/tmp/a.csv", None)
    assert supervisor.inside("/dev/shm/sem.x", ["/tmp/scratch", "/dev/shm"])
    assert not supervisor.inside("/dev/shmx", ["/tmp/scratch", "/dev/shm"])


def guard_for(tmp_path: Path, os_layer: bool = True) -> Guard:
    scratch = tmp_path / "scratch"
    scratch.mkdir(exist_ok=True)
    guard = Guard(str(scratch), os_layer)
    guard.active = True
    return guard


@pytest.mark.parametrize(
    ("event", "args", "words"),
    [
        ("open", ("{out}/new.csv", "w", os.O_WRONLY | os.O_CREAT), "create"),
        ("open", ("{out}/kept.txt", "a", os.O_WRONLY | os.O_APPEND), "write to"),
        ("os.remove", ("{out}/kept.txt", -1), "delete"),  # dir_fd -1: the working directory
        ("os.rename", ("{out}/kept.txt", "{out}/moved.txt", -1, -1), "rename"),
        ("shutil.rmtree", ("{out}", None), "delete the directory tree"),
        ("os.chmod", ("{out}/kept.txt", 0o777, -1), "change the mode"),
        ("os.mkdir", ("{out}/new", 0o777, -1), "create the directory"),
        ("subprocess.Popen", ("ls", ["ls", "-l"], None, None), "run the program 'ls -l'"),
        ("os.system", (b"touch x",), "run the shell command 'touch x'"),
        ("os.kill", (1, 15), "send signal 15 to process 1"),
        ("socket.connect", (None, ("127.0.0.1", 8888)), "connect to 127.0.0.1:8888"),
        ("socket.getaddrinfo", ("example.org", 443, 0, 0, 0), "look up the host 'example.org'"),
        ("urllib.Request", ("https://example.org/x", None, {}, "GET"), "open the URL"),
        ("builtins.input", ("name?",), "wait for input"),
    ],
)
def test_the_guard_refuses_side_effects(
    tmp_path: Path, event: str, args: tuple[Any, ...], words: str
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "kept.txt").write_text("kept")
    guard = guard_for(tmp_path)
    args = tuple(a.format(out=out) if isinstance(a, str) else a for a in args)
    with pytest.raises(Refused) as caught:
        guard(event, args)
    assert isinstance(caught.value, PermissionError) and caught.value.errno == errno.EACCES
    assert words in guard.refusals[-1]
    assert (out / "kept.txt").read_text() == "kept"


@pytest.mark.parametrize(
    ("event", "args"),
    [
        ("open", ("{scratch}/tmp.bin", "wb", os.O_WRONLY | os.O_CREAT)),  # the scratch directory
        ("open", (os.devnull, "w", os.O_WRONLY)),
        ("open", ("{out}/kept.txt", "r", os.O_RDONLY)),  # reading is fine
        ("open", ("{out}/missing/x.csv", "w", os.O_WRONLY | os.O_CREAT)),  # fails anyway: ENOENT
        ("os.remove", ("{out}/missing.txt", None)),  # fails anyway: ENOENT
        ("os.mkdir", ("{out}", 0o777, None)),  # fails anyway: EEXIST (makedirs(exist_ok=True))
        ("os.kill", ("{pid}", 0)),  # itself
        ("socket.sendto", (None, None)),  # a connected socket
        ("urllib.Request", ("file:///etc/hostname", None, {}, "GET")),
        ("import", ("json", None, [], [], [])),
    ],
)
def test_the_guard_lets_harmless_operations_through(
    tmp_path: Path, event: str, args: tuple[Any, ...]
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "kept.txt").write_text("kept")
    guard = guard_for(tmp_path)
    values = {"out": out, "scratch": tmp_path / "scratch", "pid": os.getpid()}
    args = tuple(
        (os.getpid() if a == "{pid}" else a.format(**values)) if isinstance(a, str) else a for a in args
    )
    guard(event, args)
    assert guard.refusals == []


def test_the_guard_refuses_database_writes_only_without_an_os_layer(tmp_path: Path) -> None:
    db = tmp_path / "notes.db"
    guard_for(tmp_path, os_layer=True)("sqlite3.connect", (str(db),))
    hooks_only = guard_for(tmp_path, os_layer=False)
    hooks_only("sqlite3.connect", (":memory:",))
    with pytest.raises(Refused):
        hooks_only("sqlite3.connect", (str(db),))


def test_an_inactive_guard_lets_everything_through(tmp_path: Path) -> None:
    guard = guard_for(tmp_path)
    guard.active = False
    guard("os.system", ("rm -rf /",))
    assert guard.refusals == []


@pytest.mark.parametrize(
    ("path", "gpu"),
    [
        ("/dev/nvidia0", True),
        ("/dev/nvidiactl", True),
        ("/dev/nvidia-uvm", True),
        ("/dev/kfd", True),
        ("/dev/dri/renderD128", True),
        ("/dev/null", False),
        ("/home/user/nvidia-notes.txt", False),
        ("socket:[1234]", False),
    ],
)
def test_gpu_device_files(path: str, gpu: bool) -> None:
    assert trial.gpu_device(path) is gpu


def test_an_initialised_cuda_context_makes_the_trial_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    # A stand-in for torch with CUDA initialised: the check must ask torch's own flag, never initialise.
    # With the worker off: a fork cannot use the GPU (test_worker.py runs such a trial in the worker).
    calls: list[str] = []

    def is_initialized() -> bool:
        calls.append("is_initialized")
        return True

    def refuse(*args: Any) -> None:
        raise AssertionError("the check must not initialise CUDA")

    fake = types.SimpleNamespace(cuda=types.SimpleNamespace(is_initialized=is_initialized, init=refuse))
    monkeypatch.setitem(sys.modules, "torch", fake)
    started = trial.start("x = 1", {"worker": "never"}, {})
    assert started["state"] == "done"
    assert started["outcome"]["status"] == "unavailable"
    assert started["outcome"]["reason"].startswith("CUDA in use")
    assert calls == ["is_initialized"]


def test_cuda_detection_leaves_torch_uninitialised() -> None:
    torch = pytest.importorskip("torch")
    assert not torch.cuda.is_initialized()
    assert trial.cuda_in_use() is None
    assert not torch.cuda.is_initialized()


CUDA_SCRIPT = """
import json, torch
from crane_jupyterlab.kernel.trial import control as trial
torch.zeros(1, device="cuda")
print(json.dumps({"detected": trial.cuda_in_use(), "outcome": trial.start("x = 1", {}, {})["outcome"]}))
"""


@pytest.mark.skipif(not os.path.exists("/dev/nvidiactl"), reason="no NVIDIA GPU on this machine")
def test_a_real_cuda_context_is_detected() -> None:  # pragma: no cover - GPU machines only
    # In a process of its own: CUDA initialised here would make every later trial of this run unavailable.
    pytest.importorskip("torch")
    done = subprocess.run([sys.executable, "-c", CUDA_SCRIPT], capture_output=True, text=True, timeout=300)
    if "no CUDA" in done.stderr or "CUDA driver" in done.stderr:
        pytest.skip("torch cannot use the GPU here")
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["detected"]
    assert found["outcome"]["status"] == "unavailable"
    assert found["outcome"]["reason"].startswith("CUDA in use")


def test_probe_reports_each_layer() -> None:
    found = confine.probe()
    assert {"platform", "available", "sandbox", "reason"} <= set(found)
    if found["available"]:
        assert found["sandbox"].startswith("seccomp") and found["reason"] is None
    else:
        assert found["reason"]
