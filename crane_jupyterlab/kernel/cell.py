"""The cell as the kernel will run it: IPython's cell rules (the cleanup of pasted code, `%magic`, `!cmd`,
`obj?`) turned into Python.

The one cell transform of the project. `runnable(source, shell)` is the Python the kernel compiles for a
cell (the trial child runs exactly that; a later rewrite of the cell hooks after it); `python_source`
is what the deterministic checks (server side) and the probe (kernel side) read. Both keep the cell's own
line numbers: IPython drops leading blank lines, which are put back as empty lines.

Where IPython is loaded its own transformer does it all; the fallback (stdlib only, a kernel without
IPython) applies the cleanup transforms of IPython >= 9 (leading blank lines dropped, the common
indentation removed, pasted `>>>`/`...` and `In [n]:`/`...:` prompts stripped, in IPython's order and by
its rules), so both agree on plain Python, and turns magic lines into `pass`. (IPython 8 removed the
first line's indentation only and stripped `>>>` only at the start of a line: the same on the cells
that IPython 9 and 8 both run.)
"""

from __future__ import annotations

import re
import sys
from typing import Any, Callable

_TIMING_MAGICS = frozenset({"time", "timeit", "capture", "prun"})

# IPython's patterns (IPython.core.inputtransformer2), for the fallback.
_PS1_AT = re.compile(r"^\s*>>>")
_PS1 = re.compile(r"^\s*>>>[ \t]?")
_PS2 = re.compile(r"^\s*\.\.\.[ \t]?")
_TRIPLE = re.compile(r"(?<!\\)(\"\"\"|\'\'\')")
_STRING_PREFIX = re.compile(r"(?i)^[rubf]*$")
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
    """The indentation all lines share, removed (IPython >= 9; 8 removed the first line's)."""
    import textwrap

    return textwrap.dedent("".join(lines)).splitlines(True) if lines else lines


def _strip_ipython(lines: list[str]) -> list[str]:
    """`In [n]: ` / `...: ` prompts, stripped from every line when one of the first two has one."""
    if lines and (_IPYTHON_PROMPT.match(lines[0]) or (len(lines) > 1 and _IPYTHON_PROMPT.match(lines[1]))):
        return [_IPYTHON_PROMPT.sub("", line, count=1) for line in lines]
    return lines


def _strip_classic(lines: list[str]) -> list[str]:
    """Pasted `>>>` / `...` prompts (doctest style, possibly indented), as IPython >= 9 strips them: only
    when a `>>>` line lies outside a triple-quoted string; prompts inside a string the code opens are kept;
    each run of lines outside strings that lost a prompt is dedented."""
    import textwrap

    inside = _in_strings(lines)
    if not any(not kept and _PS1_AT.match(line) for line, kept in zip(lines, inside)):
        return lines
    out: list[str] = []
    changed: list[bool] = []
    for line, kept in zip(lines, inside):
        new = line
        if not kept and _PS1.match(line):
            new = _PS1.sub("", line, count=1)
        elif not kept and _PS2.match(line):
            new = _PS2.sub("", line, count=1)
        out.append(new)
        changed.append(new != line)
    result: list[str] = []
    start = 0
    while start < len(out):
        end = start
        while end < len(out) and inside[end] == inside[start]:
            end += 1
        run = out[start:end]
        if not inside[start] and any(changed[start:end]):
            run = textwrap.dedent("".join(run)).splitlines(True)
        result += run
        start = end
    return result


def _in_strings(lines: list[str]) -> list[bool]:
    """For each line, whether it lies in a triple-quoted string whose `>>>` lines are text, not prompts
    (a string opened by code, not by a prompted line of a pasted session)."""
    mask: list[bool] = []
    quote: str | None = None
    keep = False
    prompted = False
    for line in lines:
        mask.append(quote is not None and keep)
        for match in _TRIPLE.finditer(line):
            if quote is None:
                quote = match.group(1)
                before = line[: match.start()]
                bare = _PS2.sub("", _PS1.sub("", before, count=1), count=1)
                keep = not (bare != before and prompted) and bool(_STRING_PREFIX.match(bare.strip()))
                mask[-1] = keep
            elif quote == match.group(1):
                quote, keep = None, False
        prompted = prompted or bool(_PS1_AT.match(line))
    return mask
