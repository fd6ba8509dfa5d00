"""The cell as the kernel will run it: IPython's cell rules (the cleanup of pasted code, `%magic`, `!cmd`,
`obj?`) turned into Python.

The one cell transform of the project. `runnable(source, shell)` is the Python the kernel compiles for a
cell (the trial child runs exactly that; a later rewrite of the cell hooks after it); `python_source`
is what the deterministic checks (server side) and the probe (kernel side) read. Both keep the cell's own
line numbers: IPython drops leading blank lines, which are put back as empty lines.

Where IPython is loaded its own transformer does it all; the fallback (stdlib only, a kernel without
IPython) applies the same cleanup transforms as IPython >= 7 (`leading_empty_lines`, `leading_indent`,
`classic_prompt`, `ipython_prompt`, in IPython's order and with its patterns), so both agree on plain
Python, and turns magic lines into `pass`.
"""

from __future__ import annotations

import re
import sys
from typing import Any, Callable

_TIMING_MAGICS = frozenset({"time", "timeit", "capture", "prun"})

# IPython's patterns (IPython.core.inputtransformer2), for the fallback.
_INDENT = re.compile(r"^[ \t]+")
_CLASSIC_PROMPT = re.compile(r"^(>>>|\.\.\.)( |$)")
_CLASSIC_INITIAL = re.compile(r"^>>>( |$)")
_IPYTHON_PROMPT = re.compile(r"^(((\[nav\]|\[ins\])?\ )?In\ \[\d+\]:\ |\s*\.{3,}:\ ?)")


def runnable(source: str, shell: Any = None) -> str:
    """The Python the kernel compiles for `source`: the shell's own `transform_cell` (with the kernel's
    extensions' transformers) when given one, else IPython's transformer when IPython is loaded, else
    the stdlib fallback. Line numbers are the cell's."""
    transform: Callable[[str], str] | None = getattr(shell, "transform_cell", None)
    if not callable(transform):
        transform = _ipython_transform()
    text = None
    if transform is not None:
        try:
            text = str(transform(source))
        except Exception:
            text = None
    if text is None:
        text = fallback(source)
    return _keep_line_numbers(source, text)


def python_source(source: str) -> str:
    """The cell as Python for analysis: `runnable` without a shell, but a cell magic that wraps Python
    (`%%time`) keeps its body (on its own lines) and any other cell magic (`%%bash`) has no Python."""
    if source.lstrip().startswith("%%"):
        first, _, body = source.lstrip().partition("\n")
        name = first[2:].split()[0] if first[2:].split() else ""
        if name not in _TIMING_MAGICS:
            return ""
        return "\n" + runnable(body)  # keep line numbers
    return runnable(source)


def fallback(source: str) -> str:
    """IPython's cleanup transforms without IPython; magic, shell and help lines become `pass`."""
    if not source.endswith("\n"):
        source += "\n"
    lines = source.splitlines(True)
    for transform in (_leading_empty_lines, _leading_indent, _strip_classic, _strip_ipython):
        lines = transform(lines)
    out = []
    for line in lines:
        stripped = line.strip()
        if stripped.startswith(("%", "!")) or (stripped.endswith("?") and stripped[:-1].isidentifier()):
            end = line[len(line.rstrip("\r\n")) :]
            line = line[: len(line) - len(line.lstrip())] + "pass" + end
        out.append(line)
    return "".join(out)


def _ipython_transform() -> Callable[[str], str] | None:
    module = sys.modules.get("IPython.core.inputtransformer2")
    if module is None:
        return None
    global _manager
    if _manager is None or not isinstance(_manager, module.TransformerManager):
        _manager = module.TransformerManager()
    return _manager.transform_cell  # type: ignore[no-any-return]


_manager: Any = None


def _keep_line_numbers(source: str, text: str) -> str:
    """Put back the leading blank lines IPython removed, so line N of the result is line N of the cell."""
    if not text.startswith(("\n", "\r")) and source[:1].isspace():
        blank = len(_leading_empty_lines(source.splitlines(True)))
        removed = len(source.splitlines(True)) - blank
        if removed > 0:
            return "\n" * removed + text
    return text


def _leading_empty_lines(lines: list[str]) -> list[str]:
    for i, line in enumerate(lines):
        if line and not line.isspace():
            return lines[i:]
    return lines


def _leading_indent(lines: list[str]) -> list[str]:
    match = _INDENT.match(lines[0]) if lines else None
    if not match:
        return lines
    space = match.group(0)
    return [line[len(space) :] if line.startswith(space) else line for line in lines]


def _prompt_stripper(prompt: re.Pattern, initial: re.Pattern) -> Callable[[list[str]], list[str]]:  # type: ignore[type-arg]
    def strip(lines: list[str]) -> list[str]:
        if lines and (initial.match(lines[0]) or (len(lines) > 1 and prompt.match(lines[1]))):
            return [prompt.sub("", line, count=1) for line in lines]
        return lines

    return strip


_strip_classic = _prompt_stripper(_CLASSIC_PROMPT, _CLASSIC_INITIAL)
_strip_ipython = _prompt_stripper(_IPYTHON_PROMPT, _IPYTHON_PROMPT)
