"""The cell as the kernel will run it: IPython syntax (`%magic`, `!cmd`, `obj?`) turned into Python.

The one cell transform of the project: the deterministic checks (server side) and the probe (kernel side)
both read a cell through `python_source`.
"""

from __future__ import annotations

import sys

_TIMING_MAGICS = frozenset({"time", "timeit", "capture", "prun"})


def python_source(source: str) -> str:
    """The cell as Python: IPython syntax (`%magic`, `!cmd`, `obj?`) turned into calls the way the kernel
    does it (IPython's own transformer when loaded, else those lines become `pass`). A cell magic that
    wraps Python (`%%time`) keeps its body; any other cell magic (`%%bash`) has no Python to analyse."""
    if source.lstrip().startswith("%%"):
        first, _, body = source.lstrip().partition("\n")
        name = first[2:].split()[0] if first[2:].split() else ""
        if name not in _TIMING_MAGICS:
            return ""
        source = "\n" + body  # keep line numbers
    if not any(ch in source for ch in "%!?"):
        return source
    ipt = sys.modules.get("IPython.core.inputtransformer2")
    if ipt is not None:
        try:
            return str(ipt.TransformerManager().transform_cell(source))
        except Exception:
            pass
    lines = []
    for line in source.split("\n"):
        stripped = line.strip()
        if stripped.startswith(("%", "!")) or (stripped.endswith("?") and stripped[:-1].isidentifier()):
            line = line[: len(line) - len(line.lstrip())] + "pass"
        lines.append(line)
    return "\n".join(lines)
