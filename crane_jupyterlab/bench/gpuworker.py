"""The trial worker on CUDA: trials of a kernel that uses the GPU, run in a spawned worker with a CUDA
context of its own, while the kernel's GPU memory stays as it was.

    python -m crane_jupyterlab.bench.gpuworker --out DIR            # on a machine with an NVIDIA GPU
    python -m crane_jupyterlab.bench.gpuworker --out DIR --device cpu   # the same logic on the CPU

This process plays the kernel: it puts a model, its optimizer and tensors on the GPU (so torch has
initialised CUDA here: a fork could not run any trial), then runs trials through the payload's entry
points exactly as the server's requests do (`trial.start` with the namespace, `trial.result` polled):

- a device-side crash (cross-entropy targets out of range: a CUDA assert, which poisons the context of the
  process it happens in) and its fixed twin;
- a shape mismatch on the GPU and a cell that trains for a while and then crashes (a quick trial);
- a cell that overwrites the model's weights and the tensors in place.

Each trial's forecast of the GPU memory is printed (the kernel's allocation, plus the worker's peak above its
copies of the inputs, plus what the cut loops' iterations keep, against the device's free memory); on CUDA
the quick trial's forecast must have one, and none may say out of memory (every cell here fits).

Each trial's outcome must be the real one's (`expect`), and afterwards the kernel's tensors and weights
must be byte-for-byte the same, torch's allocated memory the same, and CUDA still usable here. Nothing is
installed or fetched: torch and this package. With `--device cpu` the kernel's CUDA is pretended
(`cuda_in_use` answers yes) and tensors stay on the CPU: the worker path and its packing on a thread are
exercised without a GPU. Then, per `--sizes` (MB), a cell reading one tensor of that size on the device:
request to verdict, packing and rebuild times, and their throughput (goal for CUDA: >= 2 GB/s).
Writes DIR/gpuworker.json and prints one line per trial and a summary; the exit
status is 0 only when every trial's outcome is the expected one and the kernel is unchanged.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any

SETUP = """
import torch
from torch import nn
import torch.nn.functional as F
torch.manual_seed(0)
device = DEVICE
class Classifier(nn.Module):  # a module class of the notebook's own, as real notebooks write them
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 4))
    def forward(self, inputs):
        return self.body(inputs)
model = Classifier().to(device)
opt = torch.optim.Adam(model.parameters(), lr=0.01)
x = torch.randn(512, 16, device=device)
labels = torch.randint(0, 4, (512,), device=device)
bad_labels = labels.clone()
bad_labels[7] = 9  # out of range for 4 classes
"""

# (name, cell, expected status, expected exception or None)
TRIALS = [
    ("device-side crash", "loss = F.cross_entropy(model(x), bad_labels)\nloss.item()", "crashed", None),
    ("its fixed twin", "loss = F.cross_entropy(model(x), labels)\nloss.item()", "finished", None),
    ("shape mismatch", "out = model(x[:, :12])", "crashed", "RuntimeError"),
    (
        "long training, then a crash",
        "for step in range(3000):\n    opt.zero_grad()\n    loss = F.cross_entropy(model(x), labels)\n"
        "    loss.backward()\n    opt.step()\nresult = model(x).argmax(1)[1000]",
        "crashed",
        "IndexError",
    ),
    (
        "overwrites in place",
        "with torch.no_grad():\n    for p in model.parameters():\n        p.zero_()\n    x.mul_(0)\n"
        "assert float(x.abs().sum()) == 0.0",
        "finished",
        None,
    ),
]


def main(argv: list[str] | None = None) -> int:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=formatter)
    parser.add_argument("--out", default="gpu-check-out", help="folder for gpuworker.json")
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    parser.add_argument("--budget", type=float, default=20.0, help="each trial's budget (seconds)")
    parser.add_argument(
        "--sizes", default="1,100,500", help="MB of the large-input trials, comma-separated ('' for none)"
    )
    args = parser.parse_args(argv)

    import torch

    from crane_jupyterlab.kernel.trial import control

    if args.device == "cuda" and not torch.cuda.is_available():
        print("gpuworker: no CUDA device here (use --device cpu)", file=sys.stderr)
        return 2
    if args.device == "cpu":
        control.cuda_in_use = lambda: "pretended (--device cpu)"
    ns: dict[str, Any] = {"__name__": "__main__", "DEVICE": args.device}
    exec(compile(SETUP, "<setup>", "exec"), ns)
    before = _fingerprint(ns, torch)
    rows: list[dict[str, Any]] = []
    ok = True
    for number, (name, cell, status, exception) in enumerate(TRIALS):
        if number:  # after the first (a cold start), a warm spare waits, as it does between a user's edits
            _wait_warm(control)
        t0 = time.perf_counter()
        outcome = _trial(control, cell, ns, args.budget)
        seconds = time.perf_counter() - t0
        same_exception = exception is None or outcome.get("exception") == exception
        good = outcome.get("status") == status and same_exception
        ahead = outcome.get("forecast") or {}
        if args.device == "cuda" and name.startswith("long training"):  # the quick trial
            good &= ahead.get("gpu_peak_mb") is not None and "gpu_extra_kb" in outcome
        good &= not ahead.get("out_of_memory")
        ok &= good
        worker = outcome.get("worker") or {}
        rows.append({"trial": name, "expected": [status, exception], "outcome": outcome, "good": good,
                     "seconds": round(seconds, 2)})  # fmt: skip
        print(
            f"{'ok ' if good else 'BAD'} {name}: {outcome.get('status')} {outcome.get('exception') or ''} "
            f"({seconds:.1f} s; spare {worker.get('spare')}, pack {worker.get('pack_ms')} ms, "
            f"rebuild {worker.get('rebuild_ms')} ms: {worker.get('rebuild_phases_ms')}; GPU forecast "
            f"{ahead.get('gpu_peak_mb')} of {ahead.get('gpu_available_mb')} MB, trial's extra "
            f"{outcome.get('gpu_extra_kb')} kB) "
            f"{'' if good else outcome.get('reason') or outcome.get('message')}",
            flush=True,
        )
    after = _fingerprint(ns, torch)
    sizes = [int(mb) for mb in args.sizes.split(",") if mb.strip()]
    large = _large_inputs(control, ns, torch, args.device, sizes, args.budget)
    ok &= all(r["good"] for r in large)
    rebuilt = [float(r["outcome"]["worker"]["rebuild_ms"]) for r in rows
               if (r["outcome"].get("worker") or {}).get("rebuild_ms") is not None]  # fmt: skip
    late = sorted({m for r in rows for m in (r["outcome"].get("worker") or {}).get("late_imports") or []})
    failed = sorted({m for r in rows for m in (r["outcome"].get("worker") or {}).get("import_failed") or []})
    still = _cuda_works(torch, args.device)
    unchanged = before == after
    ok &= unchanged and still
    summary = {
        "device": args.device,
        "gpu": torch.cuda.get_device_name(0) if args.device == "cuda" else None,
        "torch": torch.__version__,
        "python": sys.version.split()[0],
        "kernel_unchanged": unchanged,
        "before": before,
        "after": after,
        "kernel_cuda_still_works": still,
        "trials": rows,
        "rebuild_ms": _percentiles(rebuilt),
        "verdict_s_warm": _percentiles([float(r["seconds"]) for r in rows[1:]]),
        "late_imports": late,  # modules a job had to import that the warm spare had not
        "import_failed": failed,  # modules of the kernel the spare could not import
        "large_inputs": large,
        "passed": ok,
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "gpuworker.json").write_text(json.dumps(summary, indent=1, default=str))
    print(
        f"gpuworker: {'passed' if ok else 'FAILED'}: {sum(bool(r['good']) for r in rows)}/{len(rows)}"
        f" outcomes as expected; kernel tensors, weights and allocated memory unchanged: {unchanged};"
        f" kernel CUDA usable after the worker's device-side assert: {still}"
    )
    print(f"gpuworker: warm verdict {summary['verdict_s_warm']} s; rebuild {summary['rebuild_ms']} ms; "
          f"modules imported at a job: {late or 'none'}; "
          f"not importable in the spare: {failed or 'none'}")  # fmt: skip
    for row in large:
        print(f"gpuworker: {row['mb']} MB on {args.device}: {row['status']} in {row['seconds']} s; pack "
              f"{row['pack_ms']} ms, rebuild {row['rebuild_ms']} ms {row['phases_ms']}: "
              f"{row['gb_per_s']} GB/s")  # fmt: skip
    return 0 if ok else 1


# Rebuilt on the kernel's device, with its value, and its view sharing its memory.
LARGE_CELL = (
    "assert big.device.type == DEVICE and float(big[-1]) == 2.0\nbig[-1] = 3.0\nassert float(tail[-1]) == 3.0"
)


def _large_inputs(
    control: Any, ns: dict[str, Any], torch: Any, device: str, sizes: list[int], budget: float
) -> list[dict[str, Any]]:
    """A cell reading one float32 tensor of each size on `device` and a view of it (`LARGE_CELL`: the time
    is the copy's): request to verdict, the packing (in a thread of this process, as for a GPU kernel) and
    the worker's rebuild, and their throughput; the kernel's tensor must be unchanged after. The tensor is
    dropped after its trial."""
    rows = []
    for mb in sizes:
        ns["big"] = torch.full((mb * (1 << 20) // 4,), 2.0, device=device)
        ns["tail"] = ns["big"][1:]  # a view: in the worker it must share the tensor's memory, as here
        _wait_warm(control)
        t0 = time.perf_counter()
        outcome = _trial(control, LARGE_CELL, ns, budget)
        seconds = time.perf_counter() - t0
        kept = float(ns["big"][-1]) == 2.0  # the worker's write reached only its copy
        del ns["big"], ns["tail"]
        worker = outcome.get("worker") or {}
        moved_ms = float(worker.get("pack_ms") or 0) + float(worker.get("rebuild_ms") or 0)
        rows.append({
            "mb": mb, "status": outcome.get("status"), "good": outcome.get("status") == "finished" and kept,
            "kernel_unchanged": kept,
            "seconds": round(seconds, 2), "pack_ms": worker.get("pack_ms"),
            "rebuild_ms": worker.get("rebuild_ms"), "inputs_mb": worker.get("inputs_mb"),
            "phases_ms": worker.get("rebuild_phases_ms"),
            "gb_per_s": round(mb / 1024 / (moved_ms / 1000), 2) if moved_ms else None,
            "reason": outcome.get("reason") or outcome.get("message"),
        })  # fmt: skip
    if device == "cuda":
        torch.cuda.empty_cache()
    return rows


def _trial(control: Any, cell: str, ns: dict[str, Any], budget: float) -> dict[str, Any]:
    started = control.start(cell, {"budget_s": budget, "private_writes": True, "quick": True}, ns)
    if started.get("state") == "done":
        return dict(started["outcome"])
    deadline = time.monotonic() + budget + 180
    while time.monotonic() < deadline:
        state = control.result(started["token"])
        if state["state"] == "done":
            return dict(state["outcome"])
        time.sleep(0.05)
    control.cancel(started["token"])
    return {"status": "none", "reason": "no outcome in time"}


def _percentiles(values: list[float]) -> dict[str, float] | None:
    if not values:
        return None
    ordered = sorted(values)

    def pick(q: float) -> float:
        return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]

    return {"p50": round(pick(0.5), 3), "p95": round(pick(0.95), 3), "n": len(ordered)}


def _wait_warm(control: Any, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not control.spare(start=True).get("warm"):
        time.sleep(0.2)


def _fingerprint(ns: dict[str, Any], torch: Any) -> dict[str, Any]:
    """What must not change in the kernel: every tensor's bytes, the weights, torch's allocated memory."""
    digest = {}
    for name in ("x", "labels", "bad_labels"):
        digest[name] = hashlib.sha256(ns[name].detach().cpu().numpy().tobytes()).hexdigest()[:16]
    for key, value in ns["model"].state_dict().items():
        digest[f"model.{key}"] = hashlib.sha256(value.detach().cpu().numpy().tobytes()).hexdigest()[:16]
    if torch.cuda.is_initialized():
        digest["allocated_bytes"] = torch.cuda.memory_allocated()
    return digest


def _cuda_works(torch: Any, device: str) -> bool:
    try:
        a = torch.ones(64, 64, device=device)
        return bool(float((a @ a).sum()) == 64.0 * 64 * 64)
    except Exception:
        return False


if __name__ == "__main__":
    sys.exit(main())
