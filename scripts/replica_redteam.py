#!/usr/bin/env python3
"""Red team of the replica judge, through its library API: each cell does harm, then crashes
in notebook code; it is analysed, never run. Prints, per target, what changed outside and whether a
crash was claimed. Run it with an older checkout first on PYTHONPATH to compare (the README's table)."""

from __future__ import annotations

import json
import socket
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from crane_jupyterlab.checks import replica
from crane_jupyterlab.checks.view import from_probe
from crane_jupyterlab.kernel import probe

SETUP = ["import numpy as np", "def add_bias(a):\n    return np.hstack([a, np.ones((len(a) + 1, 1))])"]


def main() -> None:
    if hasattr(replica, "warm_up"):
        replica.warm_up(120)
    folder = Path(tempfile.mkdtemp(prefix="redteam-", dir=Path.home()))
    weights = folder / "weights.pt"
    weights.write_bytes(b"trained weights")
    new, marker, home = folder / "new.pt", folder / "ran", Path.home() / "crane-red-team.txt"
    listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)
    port = listener.getsockname()[1]
    ns: dict[str, Any] = {"__name__": "__main__"}
    for cell in SETUP:
        exec(cell, ns)
    ns["X"] = np.arange(120.0).reshape(40, 3)
    cells = {
        "torch.save, new file": f"import torch\ntorch.save(torch.tensor(X), {str(new)!r})",
        "torch.save over an existing file": f"import torch\ntorch.save(torch.tensor(X), {str(weights)!r})",
        "ndarray.tofile (C writer)": f"X.tofile({str(new)!r})",
        "system() through ctypes": f"import ctypes\nctypes.CDLL(None).system(b'touch {marker}')",
        "subprocess": f"import subprocess\nsubprocess.run(['touch', {str(marker)!r}])",
        "home folder": f"open({str(home)!r}, 'w').write(str(X.shape))",
        "loopback connection": f"import socket\nsocket.create_connection(('127.0.0.1', {port})).send(b'x')",
    }
    for what, harm in cells.items():
        cell = harm + "\nadd_bias(X)"
        claims = replica.judge(cell, from_probe(probe.run(cell, {}, namespace=ns)), SETUP)
        try:
            listener.accept()[0].close()
            reached = True
        except BlockingIOError:
            reached = False
        changed = [p.name for p in (new, marker, home) if p.exists()]
        changed += ["weights.pt"] if weights.read_bytes() != b"trained weights" else []
        changed += ["loopback reached"] if reached else []
        print(
            json.dumps(
                {"target": what, "outside_changed": changed, "claimed": [f.message[:60] for f in claims]}
            )
        )
        for path in (new, marker, home):
            path.unlink(missing_ok=True)
        weights.write_bytes(b"trained weights")


if __name__ == "__main__":
    main()
