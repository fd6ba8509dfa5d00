"""Shell commands in a trial (kernel/trial/shell_commands.py): which commands are package installs, how
each is answered from this environment, the import errors they explain, and the script magics without
IPython's event loop. The sandboxed runs themselves are in test_kernel.py and test_top.py."""

from __future__ import annotations

import subprocess
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

from crane_jupyterlab.kernel.trial import shell_commands

NUMPY = version("numpy")


@pytest.mark.parametrize(
    "command",
    [
        "pip install numpy",
        "pip install -q numpy",
        "pip3 install --quiet -U numpy",
        "/opt/conda/bin/python -m pip install numpy",
        "python3 -m pip install 'numpy>=1.0' --no-cache-dir",
        "pip install numpy > /dev/null 2>&1",
        "pip install --index-url https://example.org/simple numpy",
        "PIP_QUIET=1 pip install numpy",
        "uv pip install numpy",
        "conda install -y -c conda-forge numpy",
        f"conda install numpy={NUMPY.rsplit('.', 1)[0]}",
    ],
)
def test_an_install_of_what_is_here_is_answered_as_installed(command: str) -> None:
    answer = shell_commands.install_answer(command)
    assert answer is not None, command
    _command, satisfied, missing = answer
    assert satisfied == [f"already installed: numpy {NUMPY}"] and missing == []


@pytest.mark.parametrize(
    "command",
    [
        "ls -l",
        "pip list",
        "pip install numpy && python train.py",  # chained: it runs as written
        "pip install numpy>=1.0",  # an unquoted '>' is a redirection in the shell
        "pip install `cat reqs`",
        "echo pip install numpy",
    ],
)
def test_other_commands_are_not_answered(command: str) -> None:
    assert shell_commands.install_answer(command) is None


def test_what_is_missing_or_another_version_is_said(tmp_path: Path) -> None:
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("# pinned\nnumpy\ncrane-not-a-package>=2  # comment\n--extra-index-url x\n")
    answer = shell_commands.install_answer(f"pip install -r {requirements} numpy==0.0.1 git+https://x/y.git")
    assert answer is not None
    _command, satisfied, missing = answer
    assert satisfied == [f"already installed: numpy {NUMPY}"]
    assert missing[0] == "crane-not-a-package"
    assert missing[1] == f"numpy==0.0.1 (this environment has {NUMPY})"
    assert "git+https://x/y.git" in missing[2] and "not in this environment" in missing[2]
    unreadable = shell_commands.install_answer("pip install -r /nonexistent/requirements.txt")
    assert unreadable is not None and "cannot be read here" in unreadable[2][0]


def test_an_import_error_after_a_missing_install_is_explained_not_claimed() -> None:
    assert shell_commands.system("pip install -q crane-not-a-package") == 0  # answered, never run
    since = shell_commands.mark()
    error = ModuleNotFoundError("No module named 'crane_not_a_package'", name="crane_not_a_package")
    why = shell_commands.lacking([error])
    assert why == (
        "needs crane-not-a-package, which `pip install -q crane-not-a-package` installs; "
        "this environment lacks it"
    )
    assert shell_commands.lacking([KeyError("x")]) is None
    assert shell_commands.installs_note(since) is None
    assert "not in this environment: crane-not-a-package" in (shell_commands.installs_note(0) or "")
    shell_commands.prepare(None)  # a new trial starts with none
    assert shell_commands.lacking([error]) is None


def test_a_shell_command_returns_its_exit_code_as_ipython_does() -> None:
    assert shell_commands.system("exit 3") == 3
    assert shell_commands.system("kill -TERM $$") == -15


def test_a_script_magic_runs_its_cell_as_the_programs_input() -> None:
    ns: dict[str, Any] = {}
    shell_commands.script(ns, "bash", "--out out --err err", "echo to-out\necho to-err >&2")
    assert (ns["out"], ns["err"]) == ("to-out\n", "to-err\n")
    with pytest.raises(subprocess.CalledProcessError):
        shell_commands.script(ns, "bash", "", "exit 4")
    shell_commands.script(ns, "bash", "--no-raise-error", "exit 4")
    shell_commands.script(ns, None, "--out via python3", "print(6 * 7)")
    assert ns["via"] == "42\n"
    shell_commands.script(ns, "crane-no-such-interpreter", "", "anything")  # printed, as IPython does


def test_a_program_the_cell_runs_counts_in_the_trials_memory(kit: Any, os_layer: Any) -> None:
    # 600 MB in a child process, against a 256 MB cap: the trial ends out of memory, the program with it
    program = "x = bytearray(600 << 20); import time; time.sleep(5)"
    hog = f"import subprocess\nsubprocess.run(['python3', '-c', {program!r}])"
    outcome = kit.run_here(hog, {}, memory_mb=256, budget_s=8.0)
    assert outcome["status"] == "out_of_memory", outcome
