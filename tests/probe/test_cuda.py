"""The probe on real CUDA objects (marked `cuda`: skipped without a GPU; scripts/gpu-check runs them).

What a probe call must leave as it found it: torch.cuda.is_initialized(), a forked child's use of CUDA,
GPU memory, the GPU's queue (it never waits for the user's queued work). What it must still say: shape,
dtype and device of every tensor, with a spent budget and after a device-side assert, on one line each.
Scenarios that change the process's CUDA state for good (a first initialisation, an assert) run in a
fresh interpreter.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, also without the conftests
from gpu_support import cuda_marks

pytestmark = cuda_marks()

ROOT = Path(__file__).resolve().parents[2]


def fresh(body: str) -> Any:
    """Run `body` in a fresh interpreter with this checkout importable; it prints one JSON line last."""
    code = f"import json, os, sys\nsys.path.insert(0, {str(ROOT)!r})\n{body}"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


FORK = """
import torch
from crane_jupyterlab.kernel import probe
ns = {"torch": torch, "x": torch.zeros(3)}
before = torch.cuda.is_initialized()
if CONTROL:
    torch.cuda.is_available()
    fact = None
else:
    r = probe.run("y = x.cuda()", {}, ns)
    fact = {f["key"]: f["value"] for m in r["modules"] for f in m.get("facts", [])}.get("cuda_available")
after = torch.cuda.is_initialized()
pid = os.fork()
if pid == 0:
    try:
        torch.zeros(1, device="cuda").add_(1).item()
        os._exit(0)
    except BaseException:
        os._exit(3)
_, status = os.waitpid(pid, 0)
child = os.waitstatus_to_exitcode(status)
print(json.dumps({"before": before, "after": after, "fact": fact, "child": child}))
"""


def test_a_probe_call_leaves_cuda_uninitialised_and_forks_usable() -> None:
    out = fresh("CONTROL = False\n" + FORK)
    assert (out["before"], out["after"], out["child"]) == (False, False, 0)
    assert out["fact"] in (True, None)  # NVML's count, or no fact where NVML cannot be asked


def test_the_control_shows_the_fork_check_can_fail() -> None:
    """torch.cuda.is_available() (without PYTORCH_NVML_BASED_CUDA_CHECK) poisons the fork: the check above
    would see it."""
    import os

    if os.environ.get("PYTORCH_NVML_BASED_CUDA_CHECK") == "1":
        pytest.skip("is_available() asks NVML here and leaves no trace either")
    out = fresh("CONTROL = True\n" + FORK)
    assert out["after"] is False and out["child"] != 0


def test_a_probe_call_after_the_users_cuda_work_allocates_nothing() -> None:
    out = fresh(
        """
import torch
from crane_jupyterlab.kernel import probe
x = torch.randn(2000, 300, device="cuda")
m = torch.nn.Sequential(torch.nn.Linear(300, 10)).cuda()
torch.cuda.synchronize()
mem = torch.cuda.memory_allocated()
r = probe.run("m(x)", {}, {"x": x, "m": m, "torch": torch})
print(json.dumps({"init": torch.cuda.is_initialized(), "extra": torch.cuda.memory_allocated() - mem,
                  "error": r["error"]}))
"""
    )
    assert out == {"init": True, "extra": 0, "error": None}


def _facts(result: dict[str, Any], expr: str) -> dict[str, Any]:
    entry = next(e for e in result["objects"] if e["expr"] == expr)
    return {f["key"]: f["value"] for f in entry["facts"]}


def test_cuda_tensor_facts_and_values() -> None:
    import torch

    from crane_jupyterlab.kernel import probe

    x = torch.randn(1000, 100, device="cuda")
    b = (torch.arange(24, device="cuda", dtype=torch.float32) - 7).to(torch.bfloat16)
    p = torch.arange(60, device="cuda", dtype=torch.float32).reshape(3, 4, 5).permute(2, 0, 1)
    s = torch.randn(100, 100, device="cuda")[:, :10]
    big = torch.arange(10_000_000, device="cuda", dtype=torch.float32)
    big[::1000] = float("nan")
    torch.cuda.synchronize()
    mem = torch.cuda.memory_allocated()
    r = probe.run("x, b, p, s, big", {}, {"x": x, "b": b, "p": p, "s": s, "big": big})
    assert torch.cuda.memory_allocated() == mem  # nothing was allocated on the GPU, nothing left
    fx = _facts(r, "x")
    assert (fx["shape"], fx["dtype"], fx["device"]) == ([1000, 100], "float32", "cuda:0")
    assert fx["min"] == pytest.approx(x.min().item(), rel=1e-3) and "sampled" not in fx
    fb = _facts(r, "b")
    assert (fb["dtype"], fb["min"], fb["max"]) == ("bfloat16", -7.0, 16.0)
    assert (_facts(r, "p")["min"], _facts(r, "p")["max"]) == (0.0, 59.0)
    assert _facts(r, "s")["note"] == "stats skipped (non-contiguous GPU tensor)"
    fbig = _facts(r, "big")
    assert abs(fbig["nan"] / fbig["sampled"] * 1000 - 1) < 0.25


def test_a_busy_gpu_is_not_waited_for() -> None:
    import torch

    from crane_jupyterlab.kernel import probe

    x = torch.randn(100, device="cuda")
    a = torch.randn(8192, 8192, device="cuda")
    torch.cuda.synchronize()
    for _ in range(100):  # about a second of queued work
        a = a @ a / 8192
    r = probe.run("x", {}, {"x": x})
    still_busy = not torch.cuda.current_stream().query()
    torch.cuda.synchronize()
    fx = _facts(r, "x")
    assert fx["note"] == "stats skipped (GPU busy)" and fx["device"] == "cuda:0" and fx["shape"] == [100]
    assert still_busy  # the probe returned while the queue was still running: it did not wait


def test_after_a_device_side_assert_every_entry_keeps_its_structure_on_one_line() -> None:
    out = fresh(
        """
import torch
from crane_jupyterlab import runtime_text
from crane_jupyterlab.kernel import probe
x = torch.randn(64, 8, device="cuda")
model = torch.nn.Sequential(torch.nn.Linear(8, 3)).cuda()
try:
    torch.zeros(3, device="cuda")[torch.tensor([5], device="cuda")].item()
except Exception as exc:
    err = type(exc).__name__
r = probe.run("model(x)", {}, {"x": x, "model": model})
text = runtime_text.render(r)
facts = {e["expr"]: {f["key"]: f["value"] for f in e["facts"]} for e in r["objects"]}
print(json.dumps({"err": err, "facts": facts, "text": text, "errors": [e["error"] for e in r["objects"]],
                  "lines": len(r["objects"]) + (1 if r["modules"] else 0)}))
"""
    )
    assert out["err"] == "AcceleratorError"
    fx = out["facts"]["x"]
    assert (fx["shape"], fx["dtype"], fx["device"]) == ([64, 8], "float32", "cuda:0")
    assert fx["note"].startswith("stats skipped (AcceleratorError: CUDA error: device-side assert")
    assert out["facts"]["model"]["param_device"] == "cuda:0"
    assert all("\n" not in str(v) for f in out["facts"].values() for v in f.values())
    assert len(out["text"].splitlines()) == out["lines"]  # one line per object, none broken
    assert all(e is None or "\n" not in e for e in out["errors"])


def test_a_spent_budget_keeps_shape_dtype_and_device_of_cuda_objects(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    from crane_jupyterlab.kernel import probe
    from crane_jupyterlab.kernel.probe import facts

    monkeypatch.setattr(facts._Ctx, "over", lambda self: True)
    ns = {"x": torch.randn(32, 4, device="cuda").half(), "model": torch.nn.Linear(4, 2).cuda()}
    r = probe.run("model(x)", {}, ns)
    fx, fm = _facts(r, "x"), _facts(r, "model")
    assert (fx["shape"], fx["dtype"], fx["device"]) == ([32, 4], "float16", "cuda:0")
    assert (fm["param_device"], fm["param_dtype"], fm["in_features"]) == ("cuda:0", "float32", 4)
