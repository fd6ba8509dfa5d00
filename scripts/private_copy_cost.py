#!/usr/bin/env python3
"""What the private copy costs a trial (README, "Trial runs"): the wall time of a trial of `x = 1` with and
without `private_writes` (alternating, N each), and the mount step alone in a forked child
(`confine.enter_namespaces`, then `overlay.enter`). Linux with user namespaces only.

    PYTHONPATH=. python scripts/private_copy_cost.py [N]      # from the repository root, N = 30
"""

import json
import os
import statistics
import sys
import tempfile
import time

from crane_jupyterlab.kernel.trial import control as trial
from crane_jupyterlab.kernel.trial.sandbox import confine, overlay


def run_here(source, **options):
    started = trial.start(source, options, {})
    while True:
        state = trial.result(started["token"])
        if state["state"] == "done":
            return state["outcome"]
        time.sleep(0.002)


N = int(sys.argv[1]) if len(sys.argv) > 1 else 30
walls = {True: [], False: []}
for _ in range(N):
    for flag in (False, True):
        t = time.perf_counter()
        o = run_here("x = 1", private_writes=flag)
        assert o["status"] == "finished", o
        walls[flag].append((time.perf_counter() - t) * 1000)


def mount_cost(cow):
    r, w = os.pipe()
    scratch = tempfile.mkdtemp(prefix="crane-trial-cost-")
    pid = os.fork()
    if pid == 0:
        t0 = time.perf_counter()
        confine.enter_namespaces()
        t1 = time.perf_counter()
        dirs = overlay.enter(scratch, 2048)["dirs"] if cow else []
        t2 = time.perf_counter()
        os.write(w, json.dumps([(t1 - t0) * 1000, (t2 - t1) * 1000, len(dirs)]).encode())
        os._exit(0)
    os.close(w)
    data = json.loads(os.read(r, 1000))
    os.close(r)
    os.waitpid(pid, 0)
    os.rmdir(scratch)
    return data


steps = [mount_cost(True) for _ in range(N)]
med = statistics.median
print(
    json.dumps(
        {
            "trial_wall_ms_p50": {
                "refuse": round(med(walls[False]), 1),
                "private_copy": round(med(walls[True]), 1),
            },
            "namespaces_ms_p50": round(med(s[0] for s in steps), 2),
            "overlay_enter_ms_p50": round(med(s[1] for s in steps), 2),
            "overlay_enter_ms_max": round(max(s[1] for s in steps), 2),
            "layers": steps[0][2],
            "n": N,
        }
    )
)
