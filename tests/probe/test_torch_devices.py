"""The probe on torch objects where the device matters, on the CPU: devices without data (meta), dtypes
numpy cannot view, permuted memory, the time budget, unbiased samples, and facts of model structure.

What needs a GPU (CUDA tensors, a busy stream, a device-side assert, fork safety) is in test_cuda.py.
"""

from __future__ import annotations

import types
from typing import Any

import pytest
from probe_results import child, entry, facts, run

from crane_jupyterlab import runtime_text
from crane_jupyterlab.kernel import probe
from crane_jupyterlab.kernel.probe import facts as fact_module
from crane_jupyterlab.kernel.probe import libraries
from crane_jupyterlab.kernel.probe.summarize import core
from crane_jupyterlab.kernel.probe.summarize import numpy as np_summary

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")
nn = torch.nn


def test_meta_tensors_and_modules_keep_their_structure() -> None:
    x = torch.empty(8, 3, 32, 32, device="meta", dtype=torch.float16)
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU()).to("meta")
    r = run("model(x)", {"x": x, "model": model})
    fx = facts(entry(r, "x"))
    assert (fx["shape"], fx["dtype"], fx["device"]) == ([8, 3, 32, 32], "float16", "meta")
    assert "nan" not in fx and "note" not in fx  # no data, nothing to say about values
    fm = facts(entry(r, "model"))
    assert (fm["param_device"], fm["param_dtype"], fm["containers"], fm["custom_modules"]) == (
        "meta",
        "float32",
        ["Sequential"],
        [],
    )
    assert all(e["error"] is None for e in r["objects"])


def test_bfloat16_values_are_read_through_their_bits() -> None:
    t = torch.tensor([1.5, -2.25, float("nan"), 1024.0], dtype=torch.bfloat16)
    f = facts(entry(run("t", {"t": t}), "t"))
    assert (f["dtype"], f["nan"], f["min"], f["max"]) == ("bfloat16", 1, -2.25, 1024.0)


def test_permuted_tensor_is_read_in_memory_order() -> None:
    t = torch.arange(24, dtype=torch.float32).reshape(2, 3, 4).permute(2, 0, 1)
    f = facts(entry(run("t", {"t": t}), "t"))
    assert f["contiguous"] is False and (f["min"], f["max"]) == (0.0, 23.0)


@pytest.mark.parametrize("period", [2, 7, 500, 1000, 1024, 4096])
def test_sample_of_periodic_data_is_unbiased(period: int) -> None:
    """A NaN every `period`-th element: the sampled share is close to 1/period (every-500th-element
    sampling read half of the elements as NaN for period 1000)."""
    a = np.arange(4_000_000, dtype=np.float32)
    a[::period] = np.nan
    for obj in (a, torch.from_numpy(a)):
        f = facts(entry(run("a", {"a": obj}), "a"))
        share = f["nan"] / f["sampled"]
        assert abs(share * period - 1) < 0.25, (period, share * period)


def test_sample_reaches_structure_longer_than_a_run() -> None:
    """Blocks of 5,000 NaNs every 500,000 elements: the random quarter of the sample finds them even
    when no run falls into a block."""
    a = np.zeros(10_000_000, dtype=np.float32)
    for start in range(0, a.size, 500_000):
        a[start : start + 5_000] = np.nan
    f = facts(entry(run("a", {"a": a}), "a"))
    assert f["nan"] > 0


def test_sample_plan_is_stratified_and_reproducible() -> None:
    runs, spread = np_summary.sample_plan(10_000_000)
    again = np_summary.sample_plan(10_000_000)
    assert runs == again[0] and (spread == again[1]).all()
    stride = 10_000_000 / np_summary.RUNS
    assert all(int(i * stride) <= lo < (i + 1) * stride for i, (lo, _) in enumerate(runs))
    assert sum(hi - lo for lo, hi in runs) + spread.size <= fact_module.ARRAY_SAMPLE


def test_sampling_leaves_the_global_random_state_alone() -> None:
    np.random.seed(3)
    expected = np.random.random()
    np.random.seed(3)
    run("a", {"a": np.zeros(1_000_000)})
    assert np.random.random() == expected


def test_spent_budget_keeps_shape_dtype_device_and_layers(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the budget gone from the start, every tensor and module still says what it is and where."""
    monkeypatch.setattr(fact_module._Ctx, "over", lambda self: True)
    ns: dict[str, Any] = {
        "x": torch.randn(16, 10),
        "h": torch.empty(4, 7, device="meta", dtype=torch.bfloat16),
        "model": nn.Sequential(nn.Linear(10, 6), nn.ReLU(), nn.Linear(6, 2)).double(),
        "emb": nn.Embedding(100, 8),
        "y": torch.arange(16) % 3,
    }
    r = run("model(x)\nemb(y)\nh", ns)
    fx = facts(entry(r, "x"))
    assert (fx["shape"], fx["dtype"], fx["device"], fx["note"]) == (
        [16, 10],
        "float32",
        "cpu",
        "stats skipped (time budget)",
    )
    assert "max" not in fx and "max" not in facts(entry(r, "y"))
    fm = facts(entry(r, "model"))
    assert (fm["param_dtype"], fm["param_device"], fm["n_params"]) == ("float64", "cpu", 80)
    assert facts(child(entry(r, "model"), "model[0]"))["in_features"] == 10
    assert facts(entry(r, "emb"))["num_embeddings"] == 100
    assert facts(entry(r, "h"))["device"] == "meta"
    assert all(e["error"] is None for e in r["objects"])
    assert "value statistics of later objects skipped" in runtime_text.render({**r, "budget_exhausted": True})


def test_model_structure_facts_say_whose_forward_runs() -> None:
    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x: Any) -> Any:
            return self.fc(x)

    plain = nn.Sequential(nn.Linear(4, 4), nn.Sequential(nn.ReLU(), nn.Linear(4, 2)))
    mixed = nn.Sequential(Block(), nn.Linear(4, 2))
    hooked = nn.Sequential(nn.Linear(4, 2))
    hooked[0].register_forward_pre_hook(lambda module, args: None)
    replaced = nn.Linear(3, 1)
    replaced.register_forward_hook(lambda module, args, out: out * 0)
    r = run(
        "plain\nmixed\nhooked\nleaf\nreplaced",
        {"plain": plain, "mixed": mixed, "hooked": hooked, "leaf": nn.Linear(3, 1), "replaced": replaced},
    )
    fp = facts(entry(r, "plain"))
    assert fp["custom_modules"] == [] and fp["containers"] == ["Sequential"] and "forward_pre_hooks" not in fp
    assert facts(entry(r, "mixed"))["custom_modules"] == ["Block"]
    assert facts(entry(r, "hooked"))["forward_pre_hooks"] == 1
    assert "forward_hooks" not in fp and "forward_hooks" not in facts(entry(r, "hooked"))
    assert facts(entry(r, "replaced"))["forward_hooks"] == 1  # it may replace the output
    assert "custom_modules" not in facts(entry(r, "leaf"))  # a torch leaf: torch's own forward


def test_several_parameter_devices_are_listed_per_layer() -> None:
    model = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 2, device="meta"))
    r = run("model", {"model": model})
    m = entry(r, "model")
    assert facts(m)["param_device"] == ["cpu", "meta"]
    assert facts(child(m, "model[1]"))["weight_device"] == "meta"
    text = runtime_text.render(r)
    assert "params float32 [cpu, meta]" in text and "1 Linear(4→2) on meta" in text


def test_loss_settings_and_devices() -> None:
    ns = {"crit": nn.CrossEntropyLoss(ignore_index=3, label_smoothing=0.1), "dev": torch.device("cuda", 1)}
    r = run("crit\ndev", ns)
    fc = facts(entry(r, "crit"))
    assert (fc["ignore_index"], fc["reduction"], fc["label_smoothing"]) == (3, "mean", 0.1)
    assert facts(entry(r, "dev"))["device"] == "cuda:1"


def test_loader_says_which_sampler_it_uses() -> None:
    from torch.utils.data import DataLoader, TensorDataset, WeightedRandomSampler

    ds = TensorDataset(torch.zeros(10, 2), torch.zeros(10))
    plain = DataLoader(ds, batch_size=4, shuffle=True)
    weighted = DataLoader(ds, batch_size=4, sampler=WeightedRandomSampler([1.0] * 10, 10))
    r = run("plain\nweighted", {"plain": plain, "weighted": weighted})
    assert facts(entry(r, "plain"))["sampler"] == "RandomSampler"
    assert facts(entry(r, "weighted"))["sampler"] == "WeightedRandomSampler"


# ----- one device notation, one line per error -------------------------------------------------------


def _facts(**values: Any) -> list[dict[str, Any]]:
    cats = {"shape": "S", "n_params": "S"}
    return [{"cat": cats.get(k, "R"), "key": k, "value": v} for k, v in values.items()]


def test_devices_are_written_alike_for_tensors_and_modules() -> None:
    x = _facts(shape=[4, 3], dtype="float32", device="cuda:0")
    model = _facts(**{"class": "Sequential"}, param_dtype="float32", param_device="cuda:0", n_params=15)
    result = {
        "objects": [
            {"expr": "x", "type": "torch.Tensor", "facts": x},
            {"expr": "model", "type": "torch.nn.modules.container.Sequential", "facts": model},
        ]
    }
    text = runtime_text.render(result)
    assert "x: Tensor (4, 3) float32 cuda:0" in text
    assert "params float32 cuda:0" in text and "'cuda:0'" not in text


def test_a_multi_line_summarizer_error_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    class Broken:
        pass

    def explode(obj: Any, e: dict[str, Any], ctx: Any, hints: Any) -> None:
        e["facts"].append({"cat": "S", "key": "shape", "value": [3]})
        raise RuntimeError("CUDA error: device-side assert triggered\nCUDA kernel errors might be ...\n")

    monkeypatch.setattr(core, "_REGISTRY", [(lambda o: isinstance(o, Broken), explode), *core._REGISTRY])
    r = run("b", {"b": Broken()})
    e = entry(r, "b")
    assert e["error"] == "RuntimeError: CUDA error: device-side assert triggered"
    assert facts(e)["shape"] == [3]  # what the summarizer wrote before it failed stays
    text = runtime_text.render({"objects": [{**e, "error": "first\nsecond"}]})
    assert "\n" not in text and "first ..." in text


# ----- cuda_available without a trace ------------------------------------------------------------------


def _fake_torch(**cuda: Any) -> types.ModuleType:
    fake = types.ModuleType("torch")
    fake.cuda = types.ModuleType("torch.cuda")  # type: ignore[attr-defined]
    fake.version = types.SimpleNamespace(hip=None)  # type: ignore[attr-defined]
    for name, value in cuda.items():
        setattr(fake.cuda, name, value)  # type: ignore[attr-defined]
    return fake


def _poisons() -> Any:
    raise AssertionError("would initialise CUDA / poison fork")


def test_cuda_available_never_asks_the_cuda_runtime(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(libraries, "_NVML_CACHE", {})
    common = {"is_available": _poisons, "init": _poisons, "_lazy_init": _poisons}
    cpu_build = _fake_torch(_is_compiled=lambda: False, **common)
    assert libraries._cuda_available(cpu_build) is False
    used = _fake_torch(
        _is_compiled=lambda: True, is_initialized=lambda: True, device_count=lambda: 2, **common
    )
    assert libraries._cuda_available(used) is True
    calls: list[int] = []
    fresh = _fake_torch(
        _is_compiled=lambda: True,
        is_initialized=lambda: False,
        device_count=_poisons,  # falls back to cudaGetDeviceCount when NVML fails
        _device_count_nvml=lambda: calls.append(1) or 1,
        **common,
    )
    assert libraries._cuda_available(fresh) is True
    assert libraries._cuda_available(fresh) is True and calls == [1]  # NVML is asked once
    monkeypatch.setattr(libraries, "_NVML_CACHE", {})
    broken = _fake_torch(
        _is_compiled=lambda: True, is_initialized=lambda: False, _device_count_nvml=lambda: -1, **common
    )
    assert libraries._cuda_available(broken) is None  # unknown, and then no fact at all


def test_this_torch_build_says_whether_it_has_cuda() -> None:
    mod = {m["module"]: m for m in run("torch.zeros(1)", {"torch": torch})["modules"]}["torch"]
    found = {f["key"]: f["value"] for f in mod["facts"]}
    assert found["autocast"] is False
    if torch.version.cuda is None:
        assert found["cuda_available"] is False
    with torch.autocast("cpu"):
        again = probe.run("torch.zeros(1)", {}, {"torch": torch})
    assert {f["key"]: f["value"] for f in again["modules"][0]["facts"]}["autocast"] is True
