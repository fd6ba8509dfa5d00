"""The private copy-on-write layers of a trial (overlay.py) without a kernel: trials forked from the test
process, and the helpers. test_private_writes.py runs the writers in a real kernel."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from crane_jupyterlab.kernel.trial.sandbox import overlay


@pytest.fixture
def cow(os_layer: dict[str, Any]) -> None:
    """Skips where the platform cannot mount a private copy (no user namespaces or no Landlock)."""
    if not (os_layer.get("netns") and os_layer.get("landlock_abi")):
        pytest.skip("no unprivileged user namespaces or no Landlock here: writes stay refused")


def test_the_working_directory_is_covered_too(
    kit: SimpleNamespace, os_layer: dict[str, Any], cow: None
) -> None:
    # Forked from this process: its working directory (the repository) is beneath neither /tmp nor home.
    name = "crane-trial-test-cwd.txt"
    outcome = kit.run_here(
        f"open({name!r}, 'w').write('x')\nassert open({name!r}).read() == 'x'", private_writes=True
    )
    assert outcome["status"] == "finished", outcome
    assert not Path(name).exists()


def test_without_the_option_writes_stay_refused(
    kit: SimpleNamespace, os_layer: dict[str, Any], tmp_path: Path
) -> None:
    outcome = kit.run_here(f"open({str(tmp_path / 'x')!r}, 'w')")
    assert outcome["status"] == "blocked" and "writes" not in outcome
    assert not (tmp_path / "x").exists()


def test_the_covered_directories_are_the_outermost_existing_ones(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    found = overlay.layer_dirs(
        [str(tmp_path / "a" / "b"), str(tmp_path / "a"), "/", str(tmp_path / "gone"), ""], ["/proc"]
    )
    # Outer first; the root would hide /proc and /dev: never covered.
    assert found == [str((tmp_path / "a").resolve()), str((tmp_path / "a" / "b").resolve())]


def test_what_was_written_is_said_in_words() -> None:
    assert overlay.describe({"files": 0, "bytes": 0, "deleted": 0}) is None
    text = overlay.describe({"files": 2, "bytes": 1_300_000, "deleted": 1})
    assert text == (
        "wrote 2 files (1.2 MB) and removed or renamed 1 in a private copy, discarded: the real files did "
        "not change"
    )
    text = overlay.describe({"files": 1, "bytes": 10, "dirs": 2, "deleted": 0})
    assert text and text.startswith("wrote 1 file (10 B) and made 2 directories in a private copy")


def _in_own_namespace(work: Path, job: Any) -> Any:
    """`job()` in a forked process with its own user and mount namespaces, where `work/sub` is a tmpfs
    holding `f` (a mount beneath a directory the trial would cover, as a home with a data volume in it
    has), its working directory `work/inner`. Returns what `job` returned (JSON)."""
    import json
    import os

    from crane_jupyterlab.kernel.trial.sandbox import confine

    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the forked helper
        try:
            confine.enter_namespaces()
            if confine.libc().lib.mount(b"tmpfs", str(work / "sub").encode(), b"tmpfs", 0, b"size=1m"):
                raise OSError("could not mount a tmpfs")
            (work / "sub" / "f").write_text("on the submount")
            os.chdir(work / "inner")
            result = {"ok": job()}
        except BaseException as exc:
            result = {"error": f"{type(exc).__name__}: {exc}"}
        os.write(write, json.dumps(result).encode())
        os._exit(0)
    os.close(write)
    data = b""
    while chunk := os.read(read, 65536):
        data += chunk
    os.close(read)
    os.waitpid(pid, 0)
    found = json.loads(data)
    assert "error" not in found, found["error"]
    return found["ok"]


def test_mount_points_are_read_with_their_escapes() -> None:
    assert overlay._unescape(rb"/home/a\040b/c\134d\0") == "/home/a b/c\\d\\0"
    assert "/proc" in overlay.mount_points()


def test_a_directory_with_a_mount_beneath_it_is_not_covered(tmp_path: Path) -> None:
    (tmp_path / "home" / "work").mkdir(parents=True)
    home, work = str(tmp_path / "home"), str(tmp_path / "home" / "work")
    assert overlay.layer_dirs([work, home], [f"{home}/data"]) == [work]  # the working directory instead
    assert overlay.layer_dirs([work, home], [f"{work}/data"]) == []
    assert overlay.layer_dirs([work, home], [home, "/proc"]) == [home, work]  # a mount *at* it is fine


def test_a_mount_beneath_a_covered_directory_keeps_it_real(
    tmp_path: Path, kit: SimpleNamespace, os_layer: dict[str, Any], cow: None
) -> None:
    # The mount (work/sub) is the kernel's, so its parent (work) cannot be covered in the trial's
    # namespace; the working directory (work/inner) is, and writes to `work` stay refused.
    work = tmp_path / "work"
    (work / "sub").mkdir(parents=True)
    (work / "inner").mkdir()

    def job() -> list[dict[str, Any]]:
        return [
            kit.run_here(
                "assert open('../sub/f').read() == 'on the submount'\n"
                "open('x.txt', 'w').write('private')\nassert open('x.txt').read() == 'private'",
                private_writes=True,
            ),
            kit.run_here("open('../sub/g', 'w').write('real')", private_writes=True),
            kit.run_here("open('../top.txt', 'w').write('real')", private_writes=True),
        ]

    inner, submount, parent = _in_own_namespace(work, job)
    assert inner["status"] == "finished" and inner["writes"].startswith("wrote 1 file"), inner
    assert submount["status"] == "blocked" and "sub/g" in submount["reason"], submount
    assert parent["status"] == "blocked" and "top.txt" in parent["reason"], parent
    assert sorted(p.name for p in work.rglob("*")) == ["inner", "sub"]


def test_an_unprivileged_user_gets_the_private_copy_too(
    kit: SimpleNamespace, os_layer: dict[str, Any], cow: None
) -> None:
    # Run as `nobody` (the test runs as root here): the user namespace then maps only that user, and a
    # write beneath a directory owned by someone else (root's /tmp, root's folder above the working
    # directory) must not need to copy that directory up.
    import json
    import os
    import shutil
    import tempfile

    from crane_jupyterlab.kernel.trial.sandbox import confine

    if os.geteuid() != 0:
        pytest.skip("needs root to become another user; as a user, every other test here is this one")
    top = Path(tempfile.mkdtemp(prefix="crane-overlay-test-"))  # root's, 0755
    try:
        top.chmod(0o755)
        work, home = top / "work", top / "home"
        for folder in (work, home):
            folder.mkdir()
            os.chown(folder, 65534, 65534)
        (work / "data.csv").write_text("x\n1\n")
        os.chown(work / "data.csv", 65534, 65534)
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the forked helper
            try:
                os.setgroups([])
                os.setgid(65534)
                os.setuid(65534)
                confine.libc().prctl(4, 1)  # PR_SET_DUMPABLE, which setuid cleared, as a user's process has
                os.environ["HOME"] = str(home)
                os.chdir(work)
                cell = (
                    "open('data.csv', 'a').write('2\\n')\n"
                    "assert open('data.csv').read() == 'x\\n1\\n2\\n'\n"
                    "import pathlib\n"
                    "(pathlib.Path.home() / 'cache').mkdir()\n"
                    "(pathlib.Path.home() / 'cache' / 'c.txt').write_text('c')\n"
                    "open('/tmp/crane-overlay-test-nobody.txt', 'w').write('t')\n"
                )
                result = kit.run_here(cell, private_writes=True)
            except BaseException as exc:
                result = {"error": f"{type(exc).__name__}: {exc}"}
            os.write(write, json.dumps(result).encode())
            os._exit(0)
        os.close(write)
        data = b""
        while chunk := os.read(read, 65536):
            data += chunk
        os.close(read)
        os.waitpid(pid, 0)
        outcome = json.loads(data)
        assert outcome["status"] == "finished", outcome
        assert outcome["writes"].startswith("wrote 3 files"), outcome
        assert (work / "data.csv").read_text() == "x\n1\n" and not (home / "cache").exists()
        assert not Path("/tmp/crane-overlay-test-nobody.txt").exists()
    finally:
        shutil.rmtree(top, ignore_errors=True)


def test_the_trials_own_temporary_files_are_not_reported(
    kit: SimpleNamespace, os_layer: dict[str, Any], cow: None
) -> None:
    # The trial's TMPDIR was always writable and private: a library's temporary files are no news.
    cell = "import tempfile, os\nfd, path = tempfile.mkstemp()\nos.write(fd, b'x')\nos.makedirs(path + '.d')"
    outcome = kit.run_here(cell, private_writes=True)
    assert outcome["status"] == "finished" and "writes" not in outcome, outcome
