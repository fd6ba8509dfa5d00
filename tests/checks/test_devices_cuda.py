"""The devices rule's variants executed on a real GPU, with `cuda` where test_devices uses `meta` (marked
`cuda`: skipped without a GPU; scripts/gpu-check runs them). Here every claim meets CUDA itself: the
exception a crashing variant raises must be the one its finding names, and every fine variant must run.
A device-side assert breaks the CUDA context of its process, so those variants run in fresh interpreters.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, also without the conftests
sys.path.insert(0, str(Path(__file__).resolve().parent))
from gpu_support import cuda_marks
from test_devices import (
    CASES,
    CUDA_ONLY,
    _check_crash,
    _check_fine,
    found,
    outcome,
    world,
)

from crane_jupyterlab.checks.rules import devices

pytestmark = cuda_marks()


@pytest.mark.parametrize("source", CASES[devices.RULE_DEVICE][0])
def test_device_crashes_on_cuda(source: str) -> None:
    _check_crash(devices.RULE_DEVICE, source, lambda: world("cuda"))


@pytest.mark.parametrize("source", CASES[devices.RULE_DEVICE][1])
def test_device_fine_on_cuda(source: str) -> None:
    _check_fine(devices.RULE_DEVICE, source.replace("'meta'", "'cuda'"), lambda: world("cuda"))


@pytest.mark.parametrize("source", CASES[devices.RULE_NUMPY][0])
def test_numpy_crashes_on_cuda(source: str) -> None:
    _check_crash(devices.RULE_NUMPY, source, lambda: world("cuda"))


@pytest.mark.parametrize("source", CASES[devices.RULE_NUMPY][1])
def test_numpy_fine_on_cuda(source: str) -> None:
    _check_fine(devices.RULE_NUMPY, source, lambda: world("cuda"))


@pytest.mark.parametrize(("source", "error"), CUDA_ONLY)
def test_cuda_only_paths(source: str, error: str) -> None:
    """Convolution, embedding, matmul and indexing across devices: checked on CPU only on rewritten facts."""
    findings = found(source, world("cuda"))
    assert [f.message.split(":", 1)[0] for f in findings] == [error], source
    assert outcome(source, world("cuda")) == error, source


@pytest.mark.parametrize("source", ["z = Xb[y]", "z = Xb @ Xb.T"])
def test_cuda_only_paths_allowed(source: str) -> None:
    assert found(source, world("cuda")) == [] and outcome(source, world("cuda")) is None


ASSERTS = [
    ("loss = crit(seq_b(Xb), y_bad_b)\nprint(loss.item())", True),
    ("loss = crit(seq_b(Xb), y_bad_b)\nloss.backward()\ntotal = loss.item()", True),
    ("for xb, yb in loader_bad:\n    xb, yb = xb.to(dev), yb.to(dev)\n    loss = crit(seq_b(xb), yb)\n"
     "    running = loss.item()", True),
    ("loss = F.cross_entropy(seq_b(Xb), y_bad_b)\nvalue = float(loss)", True),
    ("loss = crit(seq_b(Xb), y_bad_b)\ntorch.cuda.synchronize()", True),
    ("loss = crit(seq_b(Xb), y_bad_b % 3)\nprint(loss.item())", False),
    ("loss = crit(seq_b(Xb), yb)\nprint(loss.item())", False),
]  # fmt: skip

CHILD = """
import json, sys
sys.path[:0] = {paths!r}
from test_devices import world, found, outcome
source = {source!r}
ns = world("cuda")
findings = [(f.rule, f.message.split(":", 1)[0]) for f in found(source, ns)]
print(json.dumps({{"findings": findings, "raised": outcome(source, world("cuda"))}}))
"""


@pytest.mark.parametrize(("source", "crashes"), ASSERTS)
def test_label_asserts_on_cuda(source: str, crashes: bool) -> None:
    here = Path(__file__).resolve()
    paths = [str(here.parent), str(here.parents[1]), str(here.parents[2])]
    done = subprocess.run(
        [sys.executable, "-c", CHILD.format(paths=paths, source=source)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    if crashes:
        assert out["findings"] == [[devices.RULE_LABELS, "AcceleratorError"]], source
        assert out["raised"] == "AcceleratorError", source
    else:
        assert out["findings"] == [] and out["raised"] is None, source
