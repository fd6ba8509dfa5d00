"""Trials forked from the test process: outcomes, limits, the sandbox's refusals, what the child may not
change in its parent. test_kernel.py runs them in a real kernel."""

from __future__ import annotations

import mmap
import os
import random
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from crane_jupyterlab.kernel.trial import child
from crane_jupyterlab.kernel.trial import control as trial
from crane_jupyterlab.kernel.trial.sandbox import confine, seccomp

pytestmark = pytest.mark.usefixtures("os_layer")


def test_a_crash_is_observed_with_its_line_and_frames(kit: SimpleNamespace) -> None:
    ns: dict[str, Any] = {"rows": [{"age": 3}]}
    outcome = kit.run_here("total = 0\ndef age(row):\n    return row['Age']\ntotal += age(rows[0])", ns)
    assert outcome["status"] == "crashed", outcome
    assert (outcome["exception"], outcome["message"]) == ("KeyError", "'Age'")
    assert outcome["line"] == 3  # where it raised, inside the cell's own function
    assert outcome["frames"] == [
        {"line": 4, "text": "total += age(rows[0])"},
        {"line": 3, "text": "return row['Age']"},
    ]
    assert outcome["sandbox"].startswith("seccomp")
    assert "total" not in ns  # the child's copy changed, not ours


def test_a_cell_that_runs_to_its_end_finishes(kit: SimpleNamespace) -> None:
    data = [3, 1, 2]
    ns: dict[str, Any] = {"data": data}
    outcome = kit.run_here("data.append(4)\ndata.sort()\nlast = data[-1]", ns)
    assert outcome["status"] == "finished"
    assert outcome["elapsed_ms"] >= 0 and outcome["extra_memory_mb"] >= 0
    assert data == [3, 1, 2] and "last" not in ns


def test_top_level_await_runs(kit: SimpleNamespace) -> None:
    assert kit.run_here("import asyncio\nawait asyncio.sleep(0)\nx = 1")["status"] == "finished"
    crashed = kit.run_here("import asyncio\nawait asyncio.sleep(0)\n1 / 0")
    assert (crashed["status"], crashed["exception"], crashed["line"]) == ("crashed", "ZeroDivisionError", 3)


def test_the_budget_ends_a_long_cell(kit: SimpleNamespace) -> None:
    outcome = kit.run_here("import time\ntime.sleep(60)", budget_s=0.5)
    assert outcome["status"] == "timed_out"
    assert "0.5 s budget" in outcome["reason"]
    # with no loop to tell how far it got, it still takes at least the budget
    assert outcome["forecast"]["at_least"] and outcome["forecast"]["seconds"] == 0.5, outcome["forecast"]
    assert not [c for c in kit.children_of(os.getpid()) if c[1] == "Z"]


def test_memory_beyond_the_cap_ends_the_trial(kit: SimpleNamespace) -> None:
    grown = kit.run_here("import time\nblock = bytearray(300 * 2**20)\ntime.sleep(5)", memory_mb=64)
    assert grown["status"] == "out_of_memory" and "64 MB" in grown["reason"]
    refused = kit.run_here("huge = bytearray(10**14)")
    assert refused["status"] == "out_of_memory"


def test_a_deadlock_after_the_fork_is_reported_early(kit: SimpleNamespace) -> None:
    # (worker "never": where this process has run TensorFlow, a worker would take over the cell)
    deadlock = "import threading\nlock = threading.Lock()\nlock.acquire()\nlock.acquire()"
    outcome = kit.run_here(deadlock, budget_s=60, worker="never")
    assert outcome["status"] == "unavailable"
    assert "lock no thread can release" in outcome["reason"]


def test_writes_outside_the_scratch_directory_are_blocked(kit: SimpleNamespace, tmp_path: Path) -> None:
    target = tmp_path / "out.csv"
    outcome = kit.run_here(f"open({str(target)!r}, 'w').write('x')")
    assert outcome["status"] == "blocked"
    assert f"create '{target}'" in outcome["reason"]
    assert not target.exists()


def test_a_c_level_write_is_blocked_by_the_os_layer(kit: SimpleNamespace, tmp_path: Path) -> None:
    # libc's open(), called through ctypes: no audit event, so only the OS layer sees it.
    target = tmp_path / "c-level.bin"
    cell = (
        "import ctypes, os\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        f"fd = libc.open({str(target).encode()!r}, os.O_WRONLY | os.O_CREAT, 0o644)\n"
        "if fd < 0:\n"
        "    raise OSError(ctypes.get_errno(), 'open failed')\n"
    )
    outcome = kit.run_here(cell)
    assert outcome["status"] == "blocked"
    assert f"create '{target}'" in outcome["reason"] and "PermissionError" in outcome["reason"]
    assert not target.exists()


def test_the_scratch_directory_is_writable(kit: SimpleNamespace) -> None:
    cell = (
        "import tempfile, os\n"
        "fd, path = tempfile.mkstemp()\n"
        "os.write(fd, b'x'); os.close(fd)\n"
        "assert open(path).read() == 'x'\n"
        "os.remove(path)\n"
        "with tempfile.TemporaryDirectory() as d:\n"
        "    open(os.path.join(d, 'a'), 'w').write('y')\n"
        "open(os.devnull, 'w').write('ignored')\n"
    )
    outcome = kit.run_here(cell)
    assert outcome["status"] == "finished", outcome
    assert not outcome.get("reason")


def test_semaphores_and_shared_memory_are_private_to_the_trial(
    kit: SimpleNamespace, os_layer: dict[str, Any]
) -> None:
    if not os_layer.get("private_shm"):
        pytest.skip("no mount namespace here: /dev/shm stays the machine's, and writing to it is refused")
    before = sorted(os.listdir(confine.SHM))
    cell = (
        "import multiprocessing\n"
        "lock = multiprocessing.Semaphore()\n"  # what joblib's import does, to see if it can
        "lock.acquire(); lock.release()\n"
        "open('/dev/shm/crane-trial-test', 'w').write('private')\n"
    )
    outcome = kit.run_here(cell)
    assert outcome["status"] == "finished", outcome
    assert "private-shm" in outcome["sandbox"]
    assert sorted(os.listdir(confine.SHM)) == before


def test_a_refusal_the_cell_copes_with_still_blocks(kit: SimpleNamespace, tmp_path: Path) -> None:
    # The cell goes on, but not as it will in the kernel (where the file is written): no observation.
    cell = f"try:\n    open({str(tmp_path / 'x')!r}, 'w')\nexcept PermissionError:\n    saved = False"
    outcome = kit.run_here(cell)
    assert outcome["status"] == "blocked"
    assert "refused to create" in outcome["reason"] and "went on to its end" in outcome["reason"]


def test_files_the_kernel_holds_open_keep_their_position_and_content(
    kit: SimpleNamespace, tmp_path: Path
) -> None:
    source = tmp_path / "lines.txt"
    source.write_text("one\ntwo\nthree\n")
    log = tmp_path / "log.txt"
    log.write_text("start\n")
    reader = open(source)  # noqa: SIM115 - held open across the trial, as a notebook would
    writer = open(log, "a")  # noqa: SIM115
    try:
        reader.readline()
        position = os.lseek(reader.fileno(), 0, os.SEEK_CUR)
        ns = {"reader": reader, "writer": writer}
        read = kit.run_here("rest = reader.read()\nassert rest == 'two\\nthree\\n'", ns)
        assert read["status"] == "finished"
        assert os.lseek(reader.fileno(), 0, os.SEEK_CUR) == position
        assert reader.readline() == "two\n"
        blocked = kit.run_here("writer.write('from the trial\\n')\nwriter.flush()", ns)
        assert blocked["status"] == "blocked"
        assert f"the file {log} the kernel had open for writing" in blocked["reason"]
        assert log.read_text() == "start\n"
    finally:
        reader.close()
        writer.close()


def test_memory_shared_with_the_kernel_stays_unchanged(kit: SimpleNamespace) -> None:
    shared = mmap.mmap(-1, 4096)  # anonymous and shared: a write in the child would show here
    try:
        outcome = kit.run_here("shared[0] = 7\nassert shared[0] == 7", {"shared": shared})
        assert outcome["status"] == "finished"
        assert shared[0] == 0
    finally:
        shared.close()


def test_a_big_shared_mapping_is_read_only_in_the_trial(kit: SimpleNamespace, tmp_path: Path) -> None:
    path = tmp_path / "big.bin"
    with open(path, "wb") as fh:
        fh.truncate(child.COPY_SHARED_LIMIT + 4096)
    fh = open(path, "r+b")  # noqa: SIM115
    big = mmap.mmap(fh.fileno(), 0)
    try:
        ns = {"big": big}
        assert kit.run_here("value = big[100]", ns)["status"] == "finished"
        written = kit.run_here("big[100] = 9", ns)
        assert written["status"] == "blocked" and "shared" in written["reason"]
        assert big[100] == 0
    finally:
        big.close()
        fh.close()
    assert path.read_bytes()[100] == 0


def test_the_child_starts_from_the_kernels_random_state(kit: SimpleNamespace) -> None:
    random.seed(11)
    copy = random.Random()
    copy.setstate(random.getstate())
    ns = {"expected": copy.random(), "random": random}
    assert kit.run_here("assert random.random() == expected", ns)["status"] == "finished"


def test_nothing_reaches_the_parents_output(kit: SimpleNamespace, capfd: pytest.CaptureFixture[str]) -> None:
    kit.run_here(
        "import sys, os\nprint('out')\nsys.stderr.write('err')\nos.write(1, b'fd1')\nos.write(2, b'fd2')"
    )
    captured = capfd.readouterr()
    assert "out" not in captured.out and "fd1" not in captured.out
    assert "err" not in captured.err and "fd2" not in captured.err


def test_input_is_refused(kit: SimpleNamespace) -> None:
    outcome = kit.run_here("name = input('Your name? ')")
    assert outcome["status"] == "blocked" and "input" in outcome["reason"]


def test_one_trial_at_a_time(kit: SimpleNamespace) -> None:
    first = trial.start("import time\ntime.sleep(60)", {}, {})
    second = trial.start("x = 1", {}, {})
    assert trial.result(first["token"]) == {"state": "unknown"}
    deadline = time.monotonic() + 20
    while kit.alive(first["pid"]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not kit.alive(first["pid"])
    while trial.result(second["token"])["state"] == "running":
        time.sleep(0.02)
    assert trial.result(second["token"])["outcome"]["status"] == "finished"


def test_cancel_ends_the_trial(kit: SimpleNamespace) -> None:
    started = trial.start("import time\ntime.sleep(60)", {}, {})
    assert trial.cancel(started["token"]) == {"state": "cancelled", "token": started["token"]}
    while trial.result(started["token"])["state"] == "running":
        time.sleep(0.02)
    outcome = trial.result(started["token"])["outcome"]
    assert outcome["status"] == "unavailable" and outcome["reason"] == "cancelled"
    assert trial.cancel("not-a-token") == {"state": "unknown"}


def test_scratch_directories_of_ended_kernels_are_removed(kit: SimpleNamespace) -> None:
    import tempfile

    dead = Path(tempfile.gettempdir()) / f"{trial.SCRATCH_PREFIX}{_ended_pid()}-x1"
    dead.mkdir()
    (dead / "left.bin").write_bytes(b"x")
    alive = Path(tempfile.gettempdir()) / f"{trial.SCRATCH_PREFIX}1-x2"  # pid 1 always exists
    alive.mkdir(exist_ok=True)
    try:
        assert kit.run_here("x = 1")["status"] == "finished"
        assert not dead.exists() and alive.exists()
        # A warm spare worker (this process has imported TensorFlow in an earlier test) keeps its own
        # until it is discarded; the trial itself leaves nothing.
        from crane_jupyterlab.kernel.trial import worker

        worker.discard_spare()
        assert not [p for p in Path(tempfile.gettempdir()).glob(f"{trial.SCRATCH_PREFIX}{os.getpid()}-*")]
    finally:
        alive.rmdir()


def _ended_pid() -> int:
    """The pid of a process that has ended (and been reaped)."""
    import subprocess

    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def test_no_zombie_is_left(kit: SimpleNamespace) -> None:
    for source in ("x = 1", "1 / 0", "import time\ntime.sleep(9)"):
        kit.run_here(source, budget_s=0.3)
    deadline = time.monotonic() + 10
    while [c for c in kit.children_of(os.getpid()) if c[1] == "Z"] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [c for c in kit.children_of(os.getpid()) if c[1] == "Z"]


def test_without_an_os_sandbox_only_an_administrator_allows_a_trial(
    kit: SimpleNamespace, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(seccomp, "arch", lambda: None)
    refused = kit.run_here("x = 1")
    assert refused["status"] == "unavailable" and "trial_hooks_only" in refused["reason"]
    allowed = kit.run_here("x = 1", hooks_only=True)
    assert allowed["status"] == "finished" and allowed["sandbox"] == "audit hooks only"
    blocked = kit.run_here(f"open({str(tmp_path / 'x')!r}, 'w')", hooks_only=True)
    assert blocked["status"] == "blocked" and not (tmp_path / "x").exists()


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"budget_s": 0.0}, {"budget_s": 0.05}),
        ({"budget_s": "5"}, {"budget_s": 5.0}),  # a wrong type keeps the default
        ({"memory_mb": 10**9}, {"memory_mb": 1 << 20}),
        ({"hooks_only": 1}, {"hooks_only": False}),
        ({"unknown": 1}, {}),
    ],
)
def test_options_are_bounded(options: dict[str, Any], expected: dict[str, Any]) -> None:
    assert trial._options(options) == {**trial.DEFAULTS, **expected}


def test_bad_input_is_a_clear_outcome() -> None:
    assert trial.start(b"x = 1", {}, {})["outcome"]["status"] == "unavailable"  # type: ignore[arg-type]
    outside = trial.start("x = 1", {}, None)  # no IPython here, and no namespace given
    assert outside["outcome"]["reason"].startswith("not an IPython kernel")
    assert trial.result("never-started") == {"state": "unknown"}


@pytest.mark.skipif(sys.platform != "linux", reason="Linux")
def test_the_child_is_in_its_own_process_group(kit: SimpleNamespace) -> None:
    ns = {"kernel_group": os.getpgid(0)}
    assert kit.run_here("import os\nassert os.getpgid(0) != kernel_group", ns)["status"] == "finished"


def test_a_dataloader_the_kernel_made_with_workers_loads_in_the_trial(kit: SimpleNamespace) -> None:
    """A loader made in an earlier cell with `num_workers=2` (its workers are processes, which the sandbox
    refuses) is iterated in the trial's own process: the same batches, a dataset's error as the same
    exception the workers re-raise; the kernel's loader keeps its workers."""
    torch = pytest.importorskip("torch")
    from torch.utils.data import DataLoader, Dataset, TensorDataset

    class Broken(Dataset):  # type: ignore[type-arg]
        def __len__(self) -> int:
            return 3

        def __getitem__(self, i: int) -> Any:
            return {"a": i}["b"]

    data = TensorDataset(torch.arange(10.0))
    ns: dict[str, Any] = {
        "loader": DataLoader(data, batch_size=4, shuffle=True, num_workers=2, prefetch_factor=2, timeout=5),
        "broken": DataLoader(Broken(), num_workers=2),
    }
    ran = kit.run_here("total = sum(float(b[0].sum()) for b in loader)\nassert total == 45.0", ns)
    assert ran["status"] == "finished", ran
    crashed = kit.run_here("next(iter(broken))", ns)
    assert (crashed["status"], crashed["exception"]) == ("crashed", "KeyError"), crashed
    assert ns["loader"].num_workers == 2 and ns["loader"].timeout == 5
