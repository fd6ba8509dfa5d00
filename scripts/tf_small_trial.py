#!/usr/bin/env python3
"""A small TensorFlow cell's trial from request to verdict, in this process playing the kernel (the goal: a
small TensorFlow cell's verdict under 0.5 s).

    python scripts/tf_small_trial.py [REPS]
    PYTHONPATH=/path/to/other/checkout python scripts/tf_small_trial.py   # the same at another commit

A Keras model is trained here for one epoch (TensorFlow's runtime is then live, so the trial of a cell
that calls the model goes to the spawned worker), then each repetition waits for a warm spare and times
`trial.start` of `p = model.predict(x[:64], verbose=0)` to its verdict. Prints which package was imported,
p50/p95 seconds and, per repetition, the status and the worker's pack, rebuild and cell times (ms).
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from typing import Any

SETUP = """
import numpy as np, keras
x = np.random.rand(2000, 16).astype("float32")
y = (x[:, :4].sum(1) > 0).astype("float32")
model = keras.Sequential([keras.Input((16,)), keras.layers.Dense(64, activation="relu"),
                          keras.layers.Dense(1, activation="sigmoid")])
model.compile("adam", "binary_crossentropy", metrics=["accuracy"])
model.fit(x, y, epochs=1, verbose=0)
"""
CELL = "p = model.predict(x[:64], verbose=0)"


def main() -> int:
    import crane_jupyterlab
    from crane_jupyterlab.kernel.trial import control

    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    ns: dict[str, Any] = {"__name__": "__main__"}
    exec(SETUP, ns)
    times, parts = [], []
    for _ in range(reps):
        deadline = time.monotonic() + 60
        while not control.spare(start=True).get("warm") and time.monotonic() < deadline:
            time.sleep(0.1)
        t0 = time.perf_counter()
        started = control.start(CELL, {"private_writes": True, "quick": True}, ns)
        while (state := control.result(started["token"]))["state"] != "done":
            time.sleep(0.005)
        times.append(time.perf_counter() - t0)
        outcome = state["outcome"]
        worker = outcome.get("worker") or {}
        parts.append(
            [outcome["status"], worker.get("pack_ms"), worker.get("rebuild_ms"), outcome.get("elapsed_ms")]
        )
    ordered = sorted(times)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    print(crane_jupyterlab.__file__)
    print(json.dumps({"p50_s": round(statistics.median(ordered), 3), "p95_s": round(p95, 3),
                      "status_pack_rebuild_cell_ms": parts}))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
