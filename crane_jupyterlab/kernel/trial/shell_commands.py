"""Shell commands in a trial (`!cmd`, `%%bash`, `%pip`, `subprocess`): they run inside the trial's
sandbox, every layer inherited (sandbox/), in the trial's process group, which the kernel ends with it.

Two things differ from the kernel, both here:

- IPython runs `!cmd` through a pseudo-terminal (pexpect), whose child must start a session of its own,
  which the sandbox refuses (a process outside the group would outlive the trial): in a trial `!cmd`
  runs as IPython's `system_raw` runs it, through the shell, its exit code in `_exit_code`.
- A package install (`!pip install`, `%pip install`, `!conda install`, `-r requirements.txt`) needs the
  network, which no trial has. It is answered from this environment instead, never run: a requirement
  already satisfied is a no-op, said so; one that is not is recorded, and a later import error is then
  *unavailable* ("needs X, which `!pip install X` installs; this environment lacks it"), never a crash.

Runs in the trial's process only (the fork or a worker); `packaging` (a dependency of pip and of
ipykernel) is imported there, never in the kernel.
"""

from __future__ import annotations

import os
import re
import shlex
from typing import Any

# What the trial's install commands found, in order: (command, satisfied, missing).
_INSTALLS: list[tuple[str, list[str], list[str]]] = []

# Options of `pip install` that take a value, and those of `conda install`.
_PIP_VALUED = {
    "-i", "--index-url", "--extra-index-url", "-f", "--find-links", "-c", "--constraint", "--target", "-t",
    "--prefix", "--root", "--src", "--upgrade-strategy", "--progress-bar", "--platform", "--python-version",
    "--implementation", "--abi", "--only-binary", "--no-binary", "--config-settings", "-C", "--report",
    "--log", "--cache-dir", "--timeout", "--retries", "--proxy", "--trusted-host", "--cert",
    "--client-cert", "--exists-action", "--global-option", "--install-option", "--python",
    "--root-user-action",
}  # fmt: skip
_CONDA_VALUED = {
    "-c", "--channel", "-n", "--name", "-p", "--prefix", "--file", "--repodata-fn", "--solver",
}  # fmt: skip
_QUIETED = re.compile(r"\s*(?:&>\s*/dev/null|[12]?>\s*/dev/null|2>&1)\s*$")


def prepare(shell: Any) -> None:  # pragma: no cover - trial process only
    """Route the shell's `!cmd` (and the `%pip`/`%conda` magics, which call it) through `system`, and
    the script cell magics (`%%bash`, `%%sh`, `%%script`, ...) through `script`: on the trial's copy of
    the shell, the kernel's untouched."""
    _INSTALLS.clear()
    if shell is None or not hasattr(shell, "var_expand"):
        return

    def plain_system(cmd: str) -> None:
        expanded = shell.var_expand(cmd, depth=1)
        shell.user_ns["_exit_code"] = system(expanded)

    shell.system = plain_system
    manager = getattr(shell, "magics_manager", None)
    cells = getattr(manager, "magics", {}).get("cell")
    if not isinstance(cells, dict):
        return
    # IPython runs these on an event loop thread of the kernel's, which a fork does not have (and may
    # declare them lazily, its ScriptMagics not loaded yet).
    scripts = getattr(manager, "registry", {}).get("ScriptMagics")
    paths = dict(getattr(scripts, "script_paths", {}) or {})
    for name in {*SCRIPT_MAGICS, *getattr(scripts, "script_magics", [])}:
        if name in cells or name in SCRIPT_MAGICS:
            cells[name] = _script_magic(shell, None if name == "script" else paths.get(name, name))


# IPython's script cell magics (`%%script prog` and its named forms).
SCRIPT_MAGICS = ("script", "sh", "bash", "perl", "ruby", "python", "python2", "python3", "pypy")


def _script_magic(shell: Any, program: str | None) -> Any:  # pragma: no cover - trial process only
    def magic(line: str, cell: str) -> None:
        script(shell.user_ns, program, line, cell)

    return magic


def script(ns: dict[str, Any], program: str | None, line: str, cell: str) -> None:
    """A script cell magic as IPython's `%%script` runs it (`--out`, `--err`, `--bg`, `--proc`,
    `--no-raise-error`), without its event loop: `cell` is the program's input."""
    import subprocess

    words = shlex.split(line)
    options: dict[str, Any] = {"raise": True}
    command: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        if word in ("--out", "--err", "--proc") and index < len(words):
            options[word[2:]] = words[index]
            index += 1
        elif word == "--bg":
            options["bg"] = True
        elif word in ("--no-raise-error", "--raise-error"):
            options["raise"] = word == "--raise-error"
        else:
            command.append(word)
    if program is not None:
        command = shlex.split(program) + command
    if not command:
        raise ValueError("%%script needs a program to run")
    try:
        process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
    except FileNotFoundError:  # IPython prints this and raises nothing
        print(f"Couldn't find program: {command[0]!r}")
        return
    if options.get("bg"):
        for key in ("out", "err", "proc"):
            if key in options:
                ns[options[key]] = {"out": process.stdout, "err": process.stderr, "proc": process}[key]
        assert process.stdin is not None
        process.stdin.write(cell.encode())
        process.stdin.close()
        return
    out, err = process.communicate(cell.encode())
    text_out, text_err = out.decode(errors="replace"), err.decode(errors="replace")
    if "out" in options:
        ns[options["out"]] = text_out
    if "err" in options:
        ns[options["err"]] = text_err
    if process.returncode != 0 and options["raise"]:
        raise subprocess.CalledProcessError(process.returncode, cell, output=text_out, stderr=text_err)


def system(command: str) -> int:
    """Run `command` through the shell as IPython's `system_raw` does (no pseudo-terminal); an install
    is answered from this environment instead. The exit code, negative for a signal (IPython's way)."""
    answer = install_answer(command)
    if answer is not None:
        _INSTALLS.append(answer)
        return 0
    import subprocess

    try:
        code = subprocess.call(command, shell=True, executable=os.environ.get("SHELL") or None)
    except OSError:
        code = subprocess.call(command, shell=True)
    return -(code - 128) if code > 128 else code


def install_answer(command: str) -> tuple[str, list[str], list[str]] | None:
    """(command, satisfied, missing) for a package install, answered from this environment; None for
    any other command (and for an install chained with other commands, which runs as it is)."""
    while _QUIETED.search(command):  # `> /dev/null 2>&1` says only where its output goes
        command = _QUIETED.sub("", command)
    if "`" in command or "$(" in command:
        return None
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        words = list(lexer)
    except ValueError:
        return None
    if any(word and set(word) <= set("();<>|&") for word in words):  # an operator outside quotes
        return None
    requirements = _requested(words)
    if requirements is None:
        return None
    satisfied: list[str] = []
    missing: list[str] = []
    for text in requirements:
        found = _satisfied(text)
        (satisfied if found.startswith("already") else missing).append(found)
    return command.strip(), satisfied, missing


def _requested(words: list[str]) -> list[str] | None:
    """The requirements an install command names (read from `-r` files too); None if it is no install."""
    while words and "=" in words[0] and not words[0].startswith("-"):  # VAR=value pip install ...
        words = words[1:]
    if not words:
        return None
    program = os.path.basename(words[0])
    rest = words[1:]
    if program.startswith("python") and rest[:2] == ["-m", "pip"]:
        program, rest = "pip", rest[2:]
    elif program == "uv" and rest[:1] == ["pip"]:
        program, rest = "pip", rest[1:]
    if program in ("pip", "pip3") or (program.startswith("pip3.") and program[5:].isdigit()):
        return _pip_requirements(rest) if rest[:1] == ["install"] else None
    if program in ("conda", "mamba", "micromamba") and rest[:1] == ["install"]:
        return _conda_requirements(rest[1:])
    return None


def _pip_requirements(args: list[str]) -> list[str]:
    found: list[str] = []
    index = 1
    while index < len(args):
        word = args[index]
        index += 1
        if word in ("-r", "--requirement"):
            if index < len(args):
                found += _from_file(args[index])
                index += 1
        elif word.startswith("--requirement="):
            found += _from_file(word.split("=", 1)[1])
        elif word in ("-e", "--editable"):
            if index < len(args):
                found.append(args[index])
                index += 1
        elif word in _PIP_VALUED:
            index += 1
        elif not word.startswith("-"):
            found.append(word)
    return found


def _conda_requirements(args: list[str]) -> list[str]:
    found: list[str] = []
    index = 0
    while index < len(args):
        word = args[index]
        index += 1
        if word in _CONDA_VALUED:
            index += 1
        elif not word.startswith("-"):
            # conda's "numpy=1.26" (and "numpy=1.26=py311_0") is pip's "numpy==1.26.*"
            name, _, version = word.partition("=")
            if version and not version.startswith("="):
                found.append(f"{name}=={version.split('=')[0]}.*" if version[-1:].isdigit() else f"{name}")
            else:
                found.append(word)
    return found


def _from_file(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8") as fh:
            lines = [line.split(" #", 1)[0].strip() for line in fh]
    except OSError:
        return [f"-r {path}"]  # unreadable: it cannot be answered
    return [line for line in lines if line and not line.startswith(("#", "-"))]


def _satisfied(text: str) -> str:
    """'already installed: numpy 2.4.6', or what is missing in words."""
    try:
        from packaging.requirements import InvalidRequirement, Requirement
    except ImportError:
        return f"{text} (no `packaging` here to read the requirement)"
    if text.startswith("-r "):
        return f"{text} (the requirements file cannot be read here)"
    try:
        requirement = Requirement(text)
    except InvalidRequirement:
        return f"{text} (a path, URL or archive: it is not in this environment)"
    from importlib import metadata

    try:
        version = metadata.version(requirement.name)
    except metadata.PackageNotFoundError:
        return requirement.name
    except Exception:
        return requirement.name
    if requirement.specifier and not requirement.specifier.contains(version, prereleases=True):
        return f"{requirement.name}{requirement.specifier} (this environment has {version})"
    return f"already installed: {requirement.name} {version}"


def mark() -> int:
    """Where the next cell's installs begin (for `installs_note`)."""
    return len(_INSTALLS)


def installs_note(since: int = 0) -> str | None:
    """What the install commands run since `mark()` did, in words: each answered from this environment."""
    if len(_INSTALLS) <= since:
        return None
    parts = []
    for _command, satisfied, missing in _INSTALLS[since:]:
        if satisfied:
            parts.append("; ".join(satisfied))
        if missing:
            parts.append("not in this environment: " + ", ".join(missing))
    return "the install was answered from this environment, not run: " + "; ".join(parts)


def lacking(chain: list[BaseException]) -> str | None:
    """An import error after an install this environment could not satisfy: why the cell cannot be
    checked here (the notebook installs what the import needs); None otherwise."""
    missing = [(command, name) for command, _satisfied, names in _INSTALLS for name in names]
    if not missing or not any(isinstance(e, ImportError) for e in chain):
        return None
    error = next(e for e in chain if isinstance(e, ImportError))
    module = (getattr(error, "name", None) or "").split(".")[0]
    # A distribution's import name may differ from its own (scikit-learn, sklearn): any import error
    # after a missing install is not claimed as a crash.
    needed = [m for m in missing if _same(m[1], module)] or missing
    names = ", ".join(dict.fromkeys(name.split(" ")[0] for _c, name in needed))
    command = needed[0][0]
    return f"needs {names}, which `{command}` installs; this environment lacks it"


def _same(requirement: str, module: str) -> bool:
    name = requirement.split(" ")[0].split("=")[0].split("<")[0].split(">")[0].split("[")[0]
    return bool(module) and name.lower().replace("-", "_") == module.lower()
