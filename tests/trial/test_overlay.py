"""The private copy-on-write layers of a trial (overlay.py) without a kernel: trials forked from the test
process, and the helpers. test_private_writes.py runs the writers in a real kernel."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from crane_jupyterlab.kernel import overlay


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
        [str(tmp_path / "a" / "b"), str(tmp_path / "a"), "/", str(tmp_path / "gone"), ""]
    )
    assert found == [str((tmp_path / "a").resolve())]  # the root would hide /proc and /dev: never covered


def test_what_was_written_is_said_in_words() -> None:
    assert overlay.describe({"files": 0, "bytes": 0, "deleted": 0}) is None
    text = overlay.describe({"files": 2, "bytes": 1_300_000, "deleted": 1})
    assert text == (
        "wrote 2 files (1.2 MB) and removed or renamed 1 in a private copy, discarded: the real files did "
        "not change"
    )
    text = overlay.describe({"files": 1, "bytes": 10, "dirs": 2, "deleted": 0})
    assert text and text.startswith("wrote 1 file (10 B) and made 2 directories in a private copy")
