"""CUDA tensors as a worker receives them (kernel/trial/torchcopy.py), on a real GPU (marked `cuda`:
skipped without one; scripts/gpu-check runs them). One fresh interpreter plays the kernel and packs, another
plays the worker and rebuilds, as the trial's processes do: each tensor back on its device with its bytes,
a view sharing its tensor's memory, a module and its optimizer state on the GPU, the kernel's unchanged."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, also without the conftests
from gpu_support import cuda_marks

pytestmark = cuda_marks()

ROOT = Path(__file__).resolve().parents[2]

KERNEL = """
import json, os, sys, torch
from crane_jupyterlab.kernel.trial import transfer
torch.manual_seed(0)
big = torch.randn(1 << 20, device="cuda")  # 4 MB
half = torch.randn(64, 64, device="cuda").half()
net = torch.nn.Linear(16, 4).cuda()
opt = torch.optim.Adam(net.parameters(), lr=0.1)
net(torch.ones(2, 16, device="cuda")).sum().backward()
opt.step()
ns = {"__name__": "__main__", "big": big, "tail": big[5:], "half": half, "net": net, "opt": opt,
      "host": torch.arange(10)}
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
info = transfer.pack(fd, "big, tail, half, net, opt, host", ns, guarded=True)
print(json.dumps({"package": info["package"], "bytes": info["inputs_bytes"],
                  "sums": {k: float(ns[k].float().sum()) for k in ("big", "tail", "half", "host")},
                  "weight": float(net.weight.detach().sum())}))
"""

WORKER = """
import json, os, sys, torch
from crane_jupyterlab.kernel.trial import transfer
ns = {}
fd = os.open(sys.argv[1], os.O_RDONLY)
transfer.rebuild(fd, ns, sys.argv[2])
found = {"devices": {k: ns[k].device.type for k in ("big", "tail", "half", "host")},
         "sums": {k: float(ns[k].float().sum()) for k in ("big", "tail", "half", "host")},
         "weight": float(ns["net"].weight.detach().sum()), "net_device": ns["net"].weight.device.type,
         "dtype": str(ns["half"].dtype)}
ns["big"][5] = 1e6  # through the tensor: the view sees it
found["view_shared"] = float(ns["tail"][0]) == 1e6
ns["net"](torch.ones(2, 16, device="cuda")).sum().backward()
ns["opt"].step()  # the optimizer steps the rebuilt module's parameters, on the GPU
found["opt_device"] = ns["opt"].state_dict()["state"][0]["exp_avg"].device.type
print(json.dumps(found))
"""


def python(code: str, *args: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", code, *args], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def test_cuda_tensors_come_back_on_their_device_sharing_views(tmp_path: Path) -> None:
    pack = str(tmp_path / "pack")
    kernel = python(KERNEL, pack)
    assert kernel["bytes"] < 4_300_000  # the storage once, not once per view
    worker = python(WORKER, pack, kernel["package"])
    assert worker["devices"] == {"big": "cuda", "tail": "cuda", "half": "cuda", "host": "cpu"}
    assert worker["sums"] == kernel["sums"] and worker["weight"] == kernel["weight"]
    assert worker["dtype"] == "torch.float16" and worker["net_device"] == "cuda"
    assert worker["view_shared"] and worker["opt_device"] == "cuda"
