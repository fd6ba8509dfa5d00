"""The kernel payload: code that runs INSIDE the user's kernel, sent there as source by
`crane_jupyterlab.server.payload`. Two families and what both use:

- `probe/`: describes what the target cell will use (entry point `probe.run`);
- `trial/`: runs the target cell in a sandbox before the user does (entry points `trial.start`,
  `trial.result`, `trial.cancel`);
- `envelope.py` installs the payload in the kernel and carries each call's result back as JSON;
  `cell.py` is the one cell transform (IPython syntax -> Python), which the checks use too.

Nothing here runs in the server except in tests. `server.payload` reads the modules named in `MANIFEST`,
sends their sources to the kernel in one silent request, and installs them there as submodules of a
private package in `sys.modules` (never the user namespace), in `MANIFEST` order, so that the relative
imports between them work as they do here. At import only the standard library is loaded; numpy,
pandas, torch, tensorflow, keras, sklearn, scipy, PIL and matplotlib are looked up in `sys.modules` and
never imported. The code must run on the oldest Python a kernel may have (`OLDEST_PYTHON`), which can be
older than the server's. The result of each entry point: docs/architecture.md.
"""

from __future__ import annotations

# The oldest Python a kernel may run for the payload to work (ruff and a test check it).
OLDEST_PYTHON = (3, 9)

# Modules sent to the kernel, in the order they are executed there: each after the modules it imports
# (a package's `__init__` after its modules). tests/probe/test_manifest.py holds it against the tree.
MANIFEST = (
    # what both families use
    "envelope",
    "cell",
    # the trial: its sandbox, the trial process's side, then the kernel's side and the entry points
    "trial/sandbox/seccomp",
    "trial/sandbox/confine",
    "trial/sandbox/overlay",
    "trial/sandbox/inherited",
    "trial/sandbox/supervisor",
    "trial/sandbox/hooks",
    "trial/sandbox/__init__",
    "trial/outcome",
    "trial/cudamemory",
    "trial/libcalls",
    "trial/loops",
    "trial/kerasfit",
    "trial/quick",
    "trial/tfwork",
    "trial/shell_commands",
    "trial/threads",
    "trial/execute",
    "trial/chain",
    "trial/state",
    "trial/unpacking",
    "trial/kerascopy",
    "trial/torchcopy",
    "trial/transfer",
    "trial/child",
    "trial/stuck",
    "trial/forecast",
    "trial/watch",
    "trial/fork",
    "trial/spawned",
    "trial/worker",
    "trial/top",
    "trial/control",
    "trial/__init__",
    # the probe: reading objects safely, reading the cell, the summarizers, then the entry point
    "probe/safe",
    "probe/facts",
    "probe/access",
    "probe/binds",
    "probe/signatures",
    "probe/scan",
    "probe/calls",
    "probe/imports",
    "probe/styles",
    "probe/docs",
    "probe/libraries",
    "probe/summarize/objects",
    "probe/summarize/core",
    "probe/summarize/builtins",
    "probe/summarize/numpy",
    "probe/summarize/pandas",
    "probe/summarize/torch",
    "probe/summarize/keras",
    "probe/summarize/sklearn",
    "probe/summarize/others",
    "probe/summarize/__init__",
    "probe/refs",
    "probe/lineage",
    "probe/describe",
    "probe/__init__",
)
