"""The renamed-API table against the installed libraries: each entry's `demo` crashes here with the very
message the entry waits for, its edit turns the demo into its fixed form, and that form runs."""

from __future__ import annotations

import importlib.util
import re

import pytest

from crane_jupyterlab.fixes import RENAMES, renamed


def _run(code: str) -> BaseException | None:
    try:
        exec(compile(code, "<cell>", "exec"), {"__name__": "__cell__"})
    except Exception as exc:
        return exc
    return None


@pytest.mark.parametrize("entry", RENAMES, ids=lambda e: f"{e.library}:{e.changelog[:40]}")
def test_each_entry_names_a_crash_of_the_installed_library_and_its_edit_runs(entry):
    if importlib.util.find_spec(entry.library) is None:
        pytest.skip(f"{entry.library} is not installed here")
    old, new = entry.demo
    crash = _run(old)
    if crash is None:
        pytest.skip(f"the installed {entry.library} still has the old API ({entry.changelog})")
    message = f"{type(crash).__name__}: {crash}"
    assert entry.message.search(message), f"the library now says: {message}"
    edits = [edited for e, edited in renamed(old, message) if e is entry]
    assert edits == [new]
    assert _run(new) is None


def test_an_entry_applies_only_to_its_own_message_and_to_a_cell_that_uses_the_old_api():
    cell = "import numpy as np\nx = np.NaN + np.Inf"
    message = "AttributeError: `np.NaN` was removed in the NumPy 2.0 release. Use `np.nan` instead."
    [(entry, edited)] = renamed(cell, message)
    assert entry.library == "numpy"
    assert edited == "import numpy as np\nx = np.nan + np.Inf"  # only what the message names
    assert renamed(cell, "KeyError: 'NaN'") == []
    assert renamed("x = 1", message) == []
    # An alias of a builtin: only the one the message names, not np.float64.
    alias = "AttributeError: module 'numpy' has no attribute 'float'"
    [(_, edited)] = renamed("a = np.float(1) + np.float64(2)", alias)
    assert edited == "a = float(1) + np.float64(2)"


def test_every_message_pattern_compiles_and_every_entry_says_where_the_library_says_so():
    for entry in RENAMES:
        assert isinstance(entry.message, re.Pattern) and entry.changelog
