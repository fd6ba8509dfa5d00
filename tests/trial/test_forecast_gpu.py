"""The forecast's GPU half (kernel/trial/forecast.py, cudamemory.py): the kernel's CUDA allocation plus the
trial's peak above its inputs plus what each cut loop's iterations keep, times the iterations left, against
what the kernel may hold on the device; out of memory only where a projected growth exceeds it.

On the CPU the counters are played by a stand-in (`Pretend`, in cudamemory's `COUNTERS`), as
bench/gpuworker.py's `--device cpu` pretends the kernel's CUDA; the kernel-side reader is checked never to
initialise CUDA. `TestOnAGpu` does the real thing (marked `cuda`: skipped without a GPU; scripts/gpu-check
runs it, without the folder conftests).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, also without the conftests
from gpu_support import cuda_marks

from crane_jupyterlab.kernel.trial import cudamemory, forecast

ROOT = Path(__file__).resolve().parents[2]
MB = 1024  # kB


class Pretend(cudamemory.Counters):
    """A CUDA allocator's counters played on the CPU: `alloc(n)` is a block of n bytes, held until it is
    dropped; `total` bytes on the device, of which `reserved` in torch's cache."""

    def __init__(self, total: int, reserved: int = 0) -> None:
        self.total, self.reserved = total, reserved
        self.live = self.top = 0

    def alloc(self, n: int) -> Block:
        return Block(self, n)

    def active(self) -> bool:
        return True

    def allocated(self) -> int:
        return self.live

    def peak(self) -> int:
        return self.top

    def reset_peak(self) -> None:
        self.top = self.live

    def device(self) -> tuple[int, int, int]:
        held = max(self.reserved, self.live)
        return self.live, held, self.total - held


class Block:
    def __init__(self, device: Pretend, n: int) -> None:
        self.device, self.n = device, n
        device.live += n
        device.top = max(device.top, device.live)

    def __del__(self) -> None:
        self.device.live -= self.n


def cut(**loop: Any) -> dict[str, Any]:
    return {"line": 3, "kind": "for", "runs": 1, "cut": True, "stmt": 1, "seconds": 0.3, "first_s": 0.1,
            **loop}  # fmt: skip


def projected(loop: dict[str, Any], gpu: tuple[int, int] | None, extra_kb: int = 512 * MB) -> dict[str, Any]:
    done = {"status": "finished", "elapsed_ms": 400.0, "quick": {"loops": [loop]}, "gpu_extra_kb": extra_kb}
    ahead = forecast.build(done, 10 * MB, 1000 * MB, 64000 * MB, gpu)
    assert ahead is not None
    return ahead


# -- the projection ---------------------------------------------------------------------------------------


def test_the_gpu_peak_is_the_kernels_allocation_plus_the_trials_extra_plus_the_growth_left() -> None:
    # 3 of 500 iterations ran; each after the first kept 100 MB on the GPU; the kernel holds 2 GB and may
    # take 19 GB more
    loop = cut(iterations=3, total=500, gpu_grew_kb=250 * MB, gpu_steady_kb=200 * MB, gpu_peak_kb=300 * MB)
    tight = projected(loop, (2048 * MB, 19456 * MB))
    assert tight["gpu_peak_mb"] == pytest.approx(2048 + 512 + 497 * 100)
    assert tight["gpu_available_mb"] == 21504.0
    assert tight["out_of_memory"] and tight["peak_memory_mb"] < tight["memory_available_mb"], tight
    # the room past the kernel's and the trial's peak (21504 - 2048 - 512 MB) lasts 189 iterations more
    assert tight["runs_out_at"] == {"line": 3, "iteration": 192, "of": 500}


def test_a_cell_that_fits_on_the_gpu_is_never_out_of_memory() -> None:
    loop = cut(iterations=3, total=500, gpu_grew_kb=250 * MB, gpu_steady_kb=200 * MB)
    roomy = projected(loop, (2048 * MB, 80000 * MB))
    assert roomy["gpu_peak_mb"] == pytest.approx(2048 + 512 + 497 * 100)
    assert not roomy["out_of_memory"] and roomy["runs_out_at"] is None
    # just under what the kernel may hold: fits
    edge = projected(loop, (2048 * MB, 512 * MB + 497 * 100 * MB))
    assert edge["gpu_peak_mb"] == edge["gpu_available_mb"] and not edge["out_of_memory"]
    # A peak the trial saw whole (nothing cut) fitted beside the kernel's allocation, in the worker: never
    # called out of memory, even where the device has less free now than the trial's peak.
    whole = {"status": "finished", "elapsed_ms": 400.0, "quick": {"loops": []}, "gpu_extra_kb": 900 * MB}
    seen = forecast.build(whole, 0, 1000 * MB, 64000 * MB, (2048 * MB, 100 * MB))
    assert seen is not None and seen["gpu_peak_mb"] == 2948.0 and seen["gpu_available_mb"] == 2148.0
    assert not seen["out_of_memory"] and seen["runs_out_at"] is None


def test_where_both_run_out_the_earlier_is_said() -> None:
    # each iteration keeps 10 MB of RAM and 100 MB of GPU memory: the GPU's room goes first
    loop = cut(iterations=3, total=1000, steady_kb=20 * MB, grew_kb=25 * MB, gpu_steady_kb=200 * MB)
    done = {"status": "finished", "elapsed_ms": 400.0, "quick": {"loops": [loop]}, "gpu_extra_kb": 0}
    both = forecast.build(done, 0, 1000 * MB, 4000 * MB, (0, 8000 * MB))
    assert both is not None and both["out_of_memory"]
    assert both["runs_out_at"] == {"line": 3, "iteration": 83, "of": 1000}  # not the RAM's 403
    ram_only = forecast.build(done, 0, 1000 * MB, 4000 * MB, (0, 900_000 * MB))
    assert ram_only is not None and ram_only["runs_out_at"] == {"line": 3, "iteration": 403, "of": 1000}


def test_without_cuda_the_gpu_fields_stay_empty() -> None:
    loop = cut(iterations=3, total=500, steady_kb=2 * MB)
    done = {"status": "finished", "elapsed_ms": 400.0, "quick": {"loops": [loop]}}
    # the kernel has no CUDA
    no_kernel = forecast.build({**done, "gpu_extra_kb": 10 * MB}, 0, 1000 * MB, 4000 * MB, None)
    # the trial counted none (a fork: it never runs on the kernel's GPU)
    no_trial = forecast.build(done, 0, 1000 * MB, 4000 * MB, (2048 * MB, 100 * MB))
    for ahead in (no_kernel, no_trial):
        assert ahead is not None and (ahead["gpu_peak_mb"], ahead["gpu_available_mb"]) == (None, None)
        assert not ahead["out_of_memory"]
    for status in ("blocked", "unavailable", "out_of_memory"):  # no forecast at all, as without a GPU
        assert forecast.build({"status": status, "gpu_extra_kb": 1}, 0, 1, 1, (1, 1)) is None


def test_the_kernel_may_hold_the_devices_free_memory_and_its_cache_unused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    device = Pretend(total=24 << 30, reserved=6 << 30)
    monkeypatch.setattr(cudamemory, "COUNTERS", device)
    held = [device.alloc(4 << 30)]
    # 4 GB allocated of the 6 GB torch holds; 18 GB free on the device: 2 + 18 GB more
    assert forecast.gpu_kb() == (4 << 20, 20 << 20)
    assert held


# -- the counters in a trial ------------------------------------------------------------------------------


def test_nested_windows_each_keep_their_own_peak(monkeypatch: pytest.MonkeyPatch) -> None:
    device = Pretend(total=1 << 30)
    monkeypatch.setattr(cudamemory, "COUNTERS", device)
    trial = cudamemory.Trial()
    spike = device.alloc(50 << 20)
    del spike
    inner = cudamemory.Window()  # resets torch's one peak counter: the trial's 50 MB must survive it
    spike = device.alloc(10 << 20)
    del spike
    assert inner.close() == 10 << 20
    assert trial.extra_kb() == 50 * MB


ITERATION = (
    "    keep.append(gpu.alloc(1 << 20))\n"
    "    scratch = gpu.alloc(8 << 20)\n    del scratch\n    time.sleep(0.02)"
)


@pytest.mark.parametrize(
    "cell",
    [
        f"import time\nkeep = []\nfor i in range(400):\n{ITERATION}",
        f"import time\nkeep = []\ni = 0\nwhile i < 400:\n{ITERATION}\n    i += 1",
    ],
    ids=["for", "while"],
)
def test_a_quick_trial_counts_what_a_loops_iterations_keep_on_the_gpu(
    cell: str, kit: SimpleNamespace, os_layer: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # each of 400 iterations keeps 1 MB on the (pretended) GPU and uses 8 MB more for a moment; the trial
    # cuts the loop after its first ones. The forked trial inherits the stand-in, and the kernel's side
    # reads the same one: nothing allocated, `total` free.
    device = Pretend(total=100 << 20)
    monkeypatch.setattr(cudamemory, "COUNTERS", device)
    outcome = kit.run_here(cell, {"gpu": device}, quick=True, budget_s=1.0)
    assert outcome["status"] == "finished" and outcome["quick"]["cut"], outcome
    loop = next(entry for entry in outcome["quick"]["loops"] if entry["kind"] in ("for", "while"))
    n = loop["iterations"]
    assert 2 <= n < 400 and loop["cut"], loop
    assert loop["gpu_grew_kb"] == n * MB and loop["gpu_steady_kb"] == (n - 1) * MB, loop
    assert loop["gpu_peak_kb"] == 9 * MB, loop  # the one kept and the 8 MB of the moment, above its start
    assert outcome["gpu_extra_kb"] == n * MB + 8 * MB, outcome  # the last iteration's peak
    tight = outcome["forecast"]
    assert tight["gpu_peak_mb"] == pytest.approx(n + 8 + (400 - n), abs=0.1), tight
    assert tight["gpu_available_mb"] == 100.0 and tight["out_of_memory"], tight
    # 100 MB, less the trial's peak (n + 8), last 92 - n iterations more
    assert tight["runs_out_at"] == {"line": loop["line"], "iteration": 92, "of": 400}, tight
    # the same cell with 4 GB free fits
    device.total = 4 << 30
    roomy = kit.run_here(cell, {"gpu": device}, quick=True, budget_s=1.0)["forecast"]
    assert roomy["gpu_available_mb"] == 4096.0 and not roomy["out_of_memory"], roomy
    assert 400 <= roomy["gpu_peak_mb"] < 420, roomy


def test_a_trial_without_cuda_counts_nothing(kit: SimpleNamespace, os_layer: Any) -> None:
    outcome = kit.run_here("keep = []\nfor i in range(3):\n    keep.append(i)", {}, quick=True)
    assert outcome["status"] == "finished" and "gpu_extra_kb" not in outcome, outcome
    assert all("gpu_grew_kb" not in loop for loop in outcome["quick"]["loops"]), outcome
    assert outcome["forecast"]["gpu_peak_mb"] is None


# -- never initialising CUDA --------------------------------------------------------------------------------

READERS = """
import json, sys
sys.path.insert(0, ROOT)
from crane_jupyterlab.kernel.trial import cudamemory, forecast
def read():
    c = cudamemory.COUNTERS
    return [forecast.gpu_kb(), c.active(), c.allocated(), c.peak(), c.device(),
            cudamemory.Iterations.here(), cudamemory.Trial().extra_kb()]
"""


def fresh(body: str) -> Any:
    code = f"ROOT = {str(ROOT)!r}\n{READERS}\n{body}"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_readers_import_nothing_where_torch_is_not_loaded() -> None:
    out = fresh('found = read()\nprint(json.dumps({"found": found, "torch": "torch" in sys.modules}))')
    assert out == {"found": [None, False, 0, 0, None, None, None], "torch": False}


def test_the_readers_leave_cuda_uninitialised_where_torch_has_not_initialised_it() -> None:
    pytest.importorskip("torch")
    # Every torch.cuda function that could initialise CUDA (or needs it) is replaced with one that
    # records its call: none may be called, and CUDA stays uninitialised.
    out = fresh(
        """
import torch
called = []
for name in ("init", "_lazy_init", "memory_allocated", "max_memory_allocated", "reset_peak_memory_stats",
             "memory_reserved", "mem_get_info", "current_device", "device_count", "is_available",
             "synchronize", "set_device"):
    setattr(torch.cuda, name, lambda *a, _name=name, **k: called.append(_name))
found = read()
print(json.dumps({"found": found, "called": called, "init": torch.cuda.is_initialized()}))
"""
    )
    assert out == {"found": [None, False, 0, 0, None, None, None], "called": [], "init": False}


def test_the_kernels_device_is_the_one_it_holds_the_most_on(monkeypatch: pytest.MonkeyPatch) -> None:
    # torch as a kernel on two GPUs sees it (scripted): 1 GB on device 1, nothing on device 0
    per_device = {0: (0, 0, 70 << 30), 1: (1 << 30, 3 << 30, 40 << 30)}
    cuda = SimpleNamespace(
        is_initialized=lambda: True,
        device_count=lambda: 2,
        current_device=lambda: 0,
        memory_allocated=lambda i=None: per_device[i][0],
        memory_reserved=lambda i=None: per_device[i][1],
        mem_get_info=lambda i=None: (per_device[i][2], 80 << 30),
    )
    monkeypatch.setitem(sys.modules, "torch", SimpleNamespace(cuda=cuda))
    assert forecast.gpu_kb() == (1 << 20, (40 << 20) + (2 << 20))


# -- on a real GPU ----------------------------------------------------------------------------------------

KERNEL = """
import json, sys, time
sys.path.insert(0, ROOT)
import torch
from crane_jupyterlab.kernel.trial import control, forecast
before = torch.cuda.is_initialized()
unread = forecast.gpu_kb()  # a kernel that has not initialised CUDA: nothing read, nothing initialised
still = torch.cuda.is_initialized()
held = torch.ones(256 << 20, dtype=torch.uint8, device="cuda")  # the kernel's own 256 MB
total = torch.cuda.get_device_properties(0).total_memory
def trial(per, n=200):
    # a loop keeping `per` bytes on the GPU each iteration, cut after its first ones
    cell = (f"keep = []\\nfor i in range({n}):\\n    keep.append(torch.empty({per}, dtype=torch.uint8, "
            "device='cuda'))\\n    time.sleep(0.1)")
    ns = {"__name__": "__main__", "torch": torch, "time": time, "held": held}
    started = control.start(cell, {"budget_s": 3.0, "private_writes": True, "quick": True}, ns)
    deadline = time.monotonic() + 240
    while started.get("state") != "done" and time.monotonic() < deadline:
        time.sleep(0.1)
        started = control.result(started["token"])
    return started.get("outcome") or {}
free, _ = torch.cuda.mem_get_info()
print(json.dumps({"before": before, "unread": unread, "still": still, "total": total, "free": free,
                  "kernel_kb": forecast.gpu_kb(), "allocated": torch.cuda.memory_allocated(),
                  "fits": trial(total // 1000), "too_big": trial(total // 100)}))
"""


class TestOnAGpu:
    pytestmark = cuda_marks()

    def test_a_loop_appending_cuda_tensors_is_forecast_against_the_devices_free_memory(self) -> None:
        done = subprocess.run(
            [sys.executable, "-c", f"ROOT = {str(ROOT)!r}\n{KERNEL}"],
            capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        out = json.loads(done.stdout.strip().splitlines()[-1])
        assert (out["before"], out["unread"], out["still"]) == (False, None, False)
        kernel_kb, more_kb = out["kernel_kb"]
        assert kernel_kb == out["allocated"] // 1024 and more_kb >= out["free"] // 1024 * 0.9
        for name, per_iteration, oom in (
            ("fits", out["total"] // 1000, False),
            ("too_big", out["total"] // 100, True),
        ):
            outcome = out[name]
            assert outcome.get("worker") and outcome["status"] == "finished", outcome
            loop = outcome["quick"]["loops"][0]
            assert loop["cut"] and 2 <= loop["iterations"] < 200, loop
            # what each iteration kept, as torch counts it (its allocator rounds up to 2 MB blocks)
            per = loop["gpu_steady_kb"] / (loop["iterations"] - 1)
            assert per == pytest.approx(per_iteration / 1024, rel=0.05), loop
            assert outcome["gpu_extra_kb"] >= loop["iterations"] * per_iteration // 1024 * 0.95, outcome
            ahead = outcome["forecast"]
            whole_mb = 200 * per_iteration / (1 << 20)
            assert ahead["gpu_peak_mb"] == pytest.approx(kernel_kb / 1024 + whole_mb, rel=0.05), ahead
            assert ahead["out_of_memory"] is oom, ahead
            if oom:  # twice the device's memory: runs out before the end, past the iterations that ran
                at = ahead["runs_out_at"]
                assert loop["iterations"] < at["iteration"] < 200 and at["of"] == 200, ahead
