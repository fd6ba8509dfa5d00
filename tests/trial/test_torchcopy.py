"""Torch tensors as a worker receives them (kernel/trial/torchcopy.py through transfer.py), packed and
rebuilt in this process: each storage's bytes once and out of band, views sharing memory as in the kernel,
every kind of tensor equal to the kernel's, and the worker's writes reaching neither the pack nor it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from crane_jupyterlab.kernel.trial import transfer

torch = pytest.importorskip("torch")


def pack_and_rebuild(cell: str, ns: dict[str, Any], times: int = 1) -> tuple[list[dict[str, Any]], dict]:
    fd = os.memfd_create("test-pack")
    try:
        info = transfer.pack(fd, cell, {"__name__": "__main__", **ns})
        rebuilt = []
        for _ in range(times):
            fresh: dict[str, Any] = {"__name__": "__main__"}
            transfer.rebuild(fd, fresh, info["package"])
            rebuilt.append(fresh)
    finally:
        os.close(fd)
    return rebuilt, info


def test_a_storage_goes_once_out_of_band_and_its_views_share_it_in_the_worker() -> None:
    big = torch.arange(1_000_000, dtype=torch.float32)  # 4 MB
    ns = {"big": big, "tail": big[10:], "grid": big.view(1000, 1000).t(), "alias": big}
    [fresh], info = pack_and_rebuild("big, tail, grid, alias", ns)
    # Torch's own pickling wrote the storage in band, once per view (16 MB here, and 4x slower per byte).
    assert info["inputs_bytes"] < 4_000_000 + 200_000
    for name, value in ns.items():
        assert torch.equal(fresh[name], value) and fresh[name].stride() == value.stride(), name
    assert fresh["alias"] is fresh["big"]
    fresh["big"][10] = -1.0  # the views see a write through any of them, as in the kernel
    assert fresh["tail"][0] == -1.0 and fresh["grid"][10, 0] == -1.0
    assert big[10] == 10.0  # the kernel's tensor is untouched


def test_empty_tensors_each_keep_a_storage_of_their_own() -> None:
    ns = {"a": torch.empty(0), "b": torch.empty(0)}
    [fresh], _ = pack_and_rebuild("a, b", ns)
    fresh["a"].resize_(4)  # grows a's storage only, as in the kernel
    assert fresh["b"].untyped_storage().nbytes() == 0


def test_the_workers_writes_reach_neither_the_pack_nor_the_kernel() -> None:
    weights = torch.ones(4096)
    first, second = pack_and_rebuild("weights.zero_()", {"weights": weights}, times=2)[0]
    first["weights"].zero_()
    assert float(second["weights"].sum()) == 4096.0
    assert float(weights.sum()) == 4096.0


@pytest.mark.parametrize(
    "make",
    [
        lambda: torch.randn(3, 5, dtype=torch.bfloat16),
        lambda: torch.tensor([True, False, True]),
        lambda: torch.randn(4, dtype=torch.complex64),
        lambda: torch.arange(12, dtype=torch.int64).reshape(3, 4)[:, 1::2],
        lambda: torch.randn(2, 3).to(torch.float8_e4m3fn),  # torch's v3 dtypes: an untyped storage
        lambda: torch.empty(0, 7),
        lambda: torch.randn(3, 3).to_sparse(),
        lambda: torch.quantize_per_tensor(torch.randn(6), 0.1, 3, torch.quint8),
        lambda: torch.from_numpy(__import__("numpy").arange(6.0)),
        lambda: torch.randn(2, 2, device="meta"),
    ],
    ids=["bfloat16", "bool", "complex", "strided", "float8", "empty", "sparse", "quantized", "numpy", "meta"],
)
def test_every_kind_of_tensor_comes_back_equal(make: Any) -> None:
    value = make()
    [fresh], _ = pack_and_rebuild("value", {"value": value})
    got = fresh["value"]
    kind = (value.dtype, value.shape, value.layout, value.device)
    assert (got.dtype, got.shape, got.layout, got.device) == kind
    if value.device.type == "meta":
        return
    if value.is_quantized:
        got, value = got.dequantize(), value.dequantize()
    elif value.is_sparse:
        got, value = got.to_dense(), value.to_dense()
    elif value.dtype == torch.float8_e4m3fn:
        got, value = got.float(), value.float()
    assert torch.equal(got, value)


def test_a_module_and_its_optimizer_keep_their_parameters_shared() -> None:
    net = torch.nn.Linear(8, 2)
    opt = torch.optim.Adam(net.parameters(), lr=0.1)
    net(torch.ones(3, 8)).sum().backward()
    opt.step()
    [fresh], _ = pack_and_rebuild("net, opt", {"net": net, "opt": opt})
    params = list(fresh["net"].parameters())
    assert all(p.requires_grad for p in params)
    assert torch.equal(params[0], net.weight)
    state = fresh["opt"].state_dict()["state"]
    assert torch.equal(state[0]["exp_avg"], opt.state_dict()["state"][0]["exp_avg"])
    # The optimizer steps the module's own parameters in the worker, as in the kernel.
    fresh["net"](torch.ones(3, 8)).sum().backward()
    before = params[0].detach().clone()
    fresh["opt"].step()
    assert not torch.equal(params[0], before)


def test_a_kernel_that_packed_tensors_collects_its_garbage_and_exits_cleanly(tmp_path: Path) -> None:
    """A GPU kernel packs on one of its own threads and lives on: what the pack exported must be released
    in whatever order the garbage collector clears it (views over freed memory crashed the process)."""
    code = (
        "import gc, os, sys, torch\n"
        "from crane_jupyterlab.kernel.trial import transfer\n"
        "big = torch.randn(1 << 16)\n"
        "net = torch.nn.Linear(4, 2)\n"
        "opt = torch.optim.Adam(net.parameters())\n"
        "net(torch.ones(2, 4)).sum().backward()\n"
        "opt.step()\n"
        "ns = {'__name__': '__main__', 'big': big, 'tail': big[3:], 'net': net, 'opt': opt}\n"
        "for _ in range(3):\n"
        "    fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)\n"
        "    transfer.pack(fd, 'big, tail, net, opt', ns, guarded=True)\n"
        "    os.close(fd)\n"
        "    gc.collect()\n"
        "del ns, big\n"
        "gc.collect()\n"
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "pack")], cwd=root, capture_output=True, text=True
    )
    assert done.returncode == 0 and "BufferError" not in done.stderr, done.stderr[-2000:]


def test_packing_leaves_the_kernels_tensors_as_they_were() -> None:
    """Nothing of the kernel's changes: its storages stay resizable (`Tensor.numpy()`, a way to hand a
    storage's bytes to the pickle, marks a storage as never resizable again)."""
    data = torch.arange(1000.0)
    [fresh], _ = pack_and_rebuild("data", {"data": data})
    assert torch.equal(fresh["data"], data)
    data.resize_(2000)  # raised "Trying to resize storage that is not resizable" after a pack through numpy
    assert data.shape == (2000,)
