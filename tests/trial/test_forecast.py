"""The forecast (kernel/trial/forecast.py): a cell's time whole and the kernel's memory peak, from what its
trial measured; out of memory only where the projected peak exceeds what the kernel may have."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from crane_jupyterlab.kernel.trial import forecast

MB = 1024


def cut(**loop: Any) -> dict[str, Any]:
    return {"line": 2, "kind": "for", "runs": 1, "cut": True, "stmt": 1, **loop}


def test_a_trial_that_ran_the_cell_whole_observed_its_time() -> None:
    done = {"status": "finished", "elapsed_ms": 1234.0, "quick": {"k": 2, "cut": False, "loops": []}}
    ahead = forecast.build(done, 10 * MB, 500 * MB, 8000 * MB)
    assert ahead is not None and ahead["basis"] == "observed" and ahead["seconds"] == 1.23
    assert (ahead["peak_memory_mb"], ahead["memory_available_mb"], ahead["out_of_memory"]) == (
        510.0,
        8500.0,
        False,
    )


def test_torch_s_share_of_a_trial_on_one_thread_is_scaled_to_the_kernel_s_threads() -> None:
    done = {"status": "finished", "elapsed_ms": 8000.0, "quick": {"loops": []}}
    ahead = forecast.build({**done, "threads": {"kernel": 4, "share": 0.5}}, 0)
    assert ahead is not None and ahead["basis"] == "projected"
    assert ahead["seconds"] == pytest.approx(8 * (0.5 + 0.5 / 4**forecast.SCALING), abs=0.01)
    assert (ahead["seconds_low"], ahead["seconds_high"]) == (5.0, 8.0)  # at best 4 times, at worst as is
    assert ahead["threads"] == {"trial": 1, "kernel": 4, "share": 0.5}
    # a projection too, and a lower bound stays one: scaled by the best case
    loop = cut(iterations=2, total=100, seconds=0.3, first_s=0.2)
    two = {"kernel": 2, "share": 1.0}
    projected = forecast.build({**done, "quick": {"loops": [loop]}, "threads": two}, 0)
    plain = forecast.build({**done, "quick": {"loops": [loop]}}, 0)
    assert projected is not None and plain is not None
    assert projected["seconds"] == pytest.approx(plain["seconds"] / 2**forecast.SCALING, rel=0.01)
    endless = cut(iterations=3, total=None, seconds=0.3)
    bound = forecast.build({**done, "quick": {"loops": [endless]}, "threads": two}, 0)
    assert bound is not None and bound["at_least"] and bound["seconds"] == 4.0
    # nothing to scale: one thread in the kernel, or torch took next to none of the time
    for threads in ({"kernel": 1, "share": 0.9}, {"kernel": 8, "share": 0.01}, "x"):
        same = forecast.build({**done, "threads": threads}, 0)
        assert same is not None and same["basis"] == "observed" and same["seconds"] == 8.0


def test_a_trial_samples_torch_s_compute_where_the_kernel_has_more_threads(kit: SimpleNamespace) -> None:
    torch = pytest.importorskip("torch")
    if torch.get_num_threads() < 2:
        pytest.skip("this machine runs torch on one thread: a trial's share is not scaled")
    from torch import nn

    net = nn.Sequential(nn.Linear(256, 512), nn.ReLU())
    ns = {"torch": torch, "net": net, "data": torch.randn(60_000, 256)}
    cell = "with torch.no_grad():\n    for i in range(0, len(data), 500):\n        net(data[i:i + 500])"
    outcome = kit.run_here(cell, ns, budget_s=10.0)
    assert outcome["status"] == "finished" and outcome["threads"]["kernel"] == torch.get_num_threads()
    assert outcome["threads"]["share"] > 0.5, outcome["threads"]
    assert outcome["forecast"]["threads"] is not None and outcome["forecast"]["basis"] == "projected"
    # a line of the user's that names a tensor or torch is torch's compute too
    W = torch.randn(1024, 1024)
    line = "for step in range(12):\n    h = torch.tanh(torch.randn(1024, 1024) @ W)"
    mine = kit.run_here(line, {**ns, "W": W})
    assert mine["status"] == "finished" and mine["threads"]["share"] > 0.5, mine.get("threads")
    # Python's own work is not torch's, nor is what numpy's loops released
    python = kit.run_here("s = 0\nfor i in range(2_000_000):\n    s += i", ns, budget_s=10.0)
    assert python["status"] == "finished" and "threads" not in python, python.get("threads")
    import numpy as np

    numpy = "x = np.random.rand(2_000_000)\nfor _ in range(40):\n    x = np.sqrt(x * 1.0001 + 0.5)"
    released = kit.run_here(numpy, {**ns, "np": np}, budget_s=10.0)
    assert released["status"] == "finished" and "threads" not in released, released.get("threads")


def test_a_cut_loop_is_projected_at_its_steady_rate_with_a_range() -> None:
    # 2 of 100 iterations in 0.3 s, the first (a warm-up) 0.2 s: 0.1 s each after it
    loop = cut(iterations=2, total=100, seconds=0.3, first_s=0.2)
    ahead = forecast.build({"status": "finished", "elapsed_ms": 500.0, "quick": {"loops": [loop]}}, 0)
    assert ahead is not None and ahead["basis"] == "projected" and not ahead["at_least"]
    # 0.5 s measured + 98 iterations left at 0.1 s
    assert ahead["seconds"] == pytest.approx(0.5 + 9.8, abs=0.05)
    assert ahead["seconds_low"] < ahead["seconds"] < ahead["seconds_high"]
    assert ahead["seconds_high"] >= 0.5 + 0.15 * 98  # at the rate with the warm-up, and a margin
    assert ahead["projected_from"][0]["seconds_per_iteration"] == pytest.approx(0.1)


def test_an_outer_loop_whose_inner_loop_grows_or_shrinks_is_projected_by_its_inner_iterations() -> None:
    # for i in range(100): for j in range(i): ...  cut after 4 outer iterations (inner lengths 0, 1, 2, 3)
    outer = cut(iterations=4, total=100, seconds=0.4, first_s=0.1)
    inner = {"line": 3, "kind": "for", "runs": 4, "cut": False, "stmt": 1, "iterations": 6, "total": 3,
             "shortest": 0, "first_len": 0, "last_len": 3, "seconds": 0.39}  # fmt: skip
    done = {"status": "finished", "elapsed_ms": 400.0}
    flat = forecast.build({**done, "quick": {"loops": [outer]}}, 0)
    grows = forecast.build({**done, "quick": {"loops": [outer, inner]}}, 0)
    assert flat is not None and grows is not None
    # 4950 inner iterations whole against the 6 that ran: about 825 times the measured 0.4 s
    assert (
        grows["seconds"] == pytest.approx(0.4 * 4950 / 6, rel=0.01)
        and grows["seconds"] > 10 * flat["seconds"]
    )
    # for i in range(100): for j in range(i, 100): the first outer iterations are the longest (100, 99,
    # 98, 97): the whole is about half of what a linear projection says, not its square
    shrink = {**inner, "shortest": 97, "total": 100, "first_len": 100, "last_len": 97, "iterations": 394}
    shrinks = forecast.build({**done, "quick": {"loops": [outer, shrink]}}, 0)
    assert shrinks is not None
    assert (
        shrinks["seconds"] == pytest.approx(0.4 * 5050 / 394, rel=0.01)
        and shrinks["seconds"] < flat["seconds"]
    )


def test_what_counting_cost_the_trial_is_taken_off_a_loop_s_time() -> None:
    # an outer loop cut after 1,000 of 100,000 iterations, its inner loop of 8 run 1,000 times, in 0.5 s;
    # the trial's counting: 1 us a run's start and end, 0.2 us an iteration among its first 64, 0.05 us after
    cost = {"for": [1e-6, 2e-7, 5e-8]}
    outer = cut(iterations=1000, total=100_000, seconds=0.5)
    inner = {"line": 3, "kind": "for", "runs": 1000, "cut": False, "stmt": 1, "iterations": 8000, "total": 8,
             "seconds": 0.45}  # fmt: skip
    done = {"status": "finished", "elapsed_ms": 500.0}
    counted = forecast.build({**done, "quick": {"loops": [outer, inner]}}, 0)
    own = forecast.build({**done, "quick": {"loops": [outer, inner], "overhead": cost}}, 0)
    assert counted is not None and own is not None
    # the outer loop's 0.5 s less its own counting (1 us + 64 x 0.2 us + 936 x 0.05 us) and its inner
    # loop's, mostly starts (1,000 x 1 us + 8,000 x 0.2 us): 0.4975 s, a 0.5 % part of the whole; the
    # trial's own 0.5 s as much less
    spent = (1e-6 + 64 * 2e-7 + 936 * 5e-8) + (1000 * 1e-6 + 8000 * 2e-7)
    assert own["seconds"] == pytest.approx((0.5 - spent) + (0.5 - spent) / 1000 * 99_000, rel=0.002)
    assert counted["seconds"] - own["seconds"] == pytest.approx(spent * 100, rel=0.02)


def test_a_cell_that_ran_whole_is_observed_less_what_counting_cost() -> None:
    # 3,000,000 iterations run whole in 1.7 s, counting 0.15 us each after the first 64: 0.45 s of it
    cost = {"for": [1e-6, 2e-7, 1.5e-7]}
    loop = {"line": 2, "kind": "for", "runs": 1, "cut": False, "stmt": 1, "iterations": 3_000_000,
            "total": 3_000_000, "seconds": 1.65}  # fmt: skip
    done = {"status": "finished", "elapsed_ms": 1700.0}
    ahead = forecast.build({**done, "quick": {"loops": [loop], "overhead": cost}}, 0)
    assert ahead is not None and ahead["basis"] == "observed"
    assert ahead["seconds"] == ahead["seconds_low"] == ahead["seconds_high"] == pytest.approx(1.25, abs=0.01)
    # a row-wise call's projection whole is less what counting each of its rows would cost
    rows = cut(kind="rows", iterations=5000, total=100_000, seconds=0.3, whole_s=6.0, whole_high_s=6.0)
    priced = {"for": [0.0, 0.0, 0.0], "rows": [0.0, 3e-7, 2e-7]}
    applied = forecast.build({**done, "quick": {"loops": [rows], "overhead": priced}}, 0)
    spent = 64 * 3e-7 + (5000 - 64) * 2e-7
    whole = 6.0 - (64 * 3e-7 + (100_000 - 64) * 2e-7)
    assert applied is not None
    assert applied["seconds"] == pytest.approx((1.7 - spent) + whole - (0.3 - spent), abs=0.01)


def test_a_sampled_library_call_is_projected_from_its_timed_sizes() -> None:
    fit = cut(kind="fit", iterations=1600, total=20000, seconds=0.5, whole_s=12.0, whole_high_s=12.0)
    ahead = forecast.build({"status": "finished", "elapsed_ms": 800.0, "quick": {"loops": [fit]}}, 0)
    assert ahead is not None and not ahead["at_least"] and ahead["seconds"] == pytest.approx(0.8 + 11.5)
    rows = cut(kind="rows", iterations=5000, total=100_000, seconds=0.3)  # a row-wise apply: linear
    applied = forecast.build({"status": "finished", "elapsed_ms": 400.0, "quick": {"loops": [rows]}}, 0)
    assert applied is not None and applied["seconds"] == pytest.approx(0.4 + 0.3 / 5000 * 95_000, rel=0.01)


def test_a_call_sampled_in_each_run_of_a_loop_that_ran_whole_is_projected_for_each_sampled_run() -> None:
    # a loop over 6 values of C ran whole; its cross-validation ran on a sample in 4 of them: each of
    # those 4 is taken as the last (whole 2.0 s where its samples took 0.5 s); the other 2 ran whole
    call = {"line": 3, "kind": "fit", "cut": True, "runs": 6, "sampled": 4, "iterations": 9000,
            "total": 40000, "seconds": 0.5, "whole_s": 2.0, "whole_high_s": 3.0, "stmt": 1}  # fmt: skip
    ahead = forecast.build({"status": "finished", "elapsed_ms": 4000.0, "quick": {"loops": [call]}}, 0)
    assert ahead is not None and ahead["seconds"] == pytest.approx(4.0 + 4 * 1.5)
    assert ahead["seconds_high"] == pytest.approx(4.0 + 4 * 2.5 * forecast.MARGIN)


def test_a_sampled_call_inside_a_cut_loop_is_projected_by_its_time_whole_not_its_rows() -> None:
    # for k in range(2, 30): KMeans(k).fit(X): 2 of 28 iterations ran in 0.56 s (the first 0.28 s), each
    # fit on a sample in 0.05 s that projects to 0.15 s on all 30,000 rows
    outer = cut(iterations=2, total=28, seconds=0.56, first_s=0.28)
    fit = cut(line=3, kind="fit", runs=2, iterations=6250, total=30000, seconds=0.05, whole_s=0.15,
              whole_high_s=0.2)  # fmt: skip
    ahead = forecast.build({"status": "finished", "elapsed_ms": 600.0, "quick": {"loops": [outer, fit]}}, 0)
    assert ahead is not None and not ahead["at_least"]
    # each iteration whole: 0.28 - 0.05 + 0.15 = 0.38 s; the 2 that ran gain 0.2 s, the 26 left take 9.88
    assert ahead["seconds"] == pytest.approx(0.6 + 0.2 + 26 * 0.38, rel=0.01)
    assert ahead["seconds_low"] < ahead["seconds"] < ahead["seconds_high"]


def test_nested_cut_loops_scale_by_both_lengths() -> None:
    outer = cut(iterations=2, total=10, seconds=1.0, first_s=0.5)
    inner = cut(line=3, runs=2, iterations=4, total=50, seconds=0.9, first_s=0.2)
    ahead = forecast.build(
        {"status": "finished", "elapsed_ms": 1000.0, "quick": {"loops": [outer, inner]}}, 0
    )
    assert ahead is not None
    # whole: 10 outer iterations of 50 inner ones, at about 1.0 s per 2x2 measured: ~125 s, not ~6 s
    assert 60 < ahead["seconds"] < 300, ahead


def test_a_cut_loop_of_unknown_length_gives_a_lower_bound() -> None:
    loop = cut(kind="while", iterations=3, total=None, seconds=0.6)
    ahead = forecast.build({"status": "finished", "elapsed_ms": 700.0, "quick": {"loops": [loop]}}, 0)
    assert ahead is not None and ahead["at_least"] and ahead["seconds_high"] is None
    assert ahead["seconds"] == 0.7


def test_a_stopped_minimize_gives_a_lower_bound() -> None:
    loop = cut(kind="minimize", iterations=5, total=None, seconds=0.0)
    ahead = forecast.build({"status": "finished", "elapsed_ms": 900.0, "quick": {"loops": [loop]}}, 0)
    assert ahead is not None and ahead["at_least"]


def test_out_of_memory_is_said_with_where_it_runs_out_and_never_for_a_cell_that_fits() -> None:
    # each iteration after the first keeps 10 MB; 1000 iterations; the kernel holds 1 GB now
    loop = cut(iterations=3, total=1000, seconds=0.3, first_s=0.1, grew_kb=25 * MB, steady_kb=20 * MB)
    done = {"status": "finished", "elapsed_ms": 400.0, "quick": {"loops": [loop]}}
    tight = forecast.build(done, 30 * MB, 1000 * MB, 4000 * MB)
    assert tight is not None and tight["out_of_memory"], tight
    assert tight["peak_memory_mb"] == pytest.approx(1000 + 30 + 997 * 10, rel=0.01)
    assert tight["memory_available_mb"] == 5000.0
    # the room (5000 - 1000 - 30 MB) lasts about 397 iterations past the 3 that ran
    assert tight["runs_out_at"] == {"line": 2, "iteration": 400, "of": 1000}
    roomy = forecast.build(done, 30 * MB, 1000 * MB, 64000 * MB)
    assert roomy is not None and not roomy["out_of_memory"] and roomy["runs_out_at"] is None


def test_a_trial_that_decided_nothing_has_no_forecast() -> None:
    for status in ("blocked", "unavailable", "out_of_memory"):
        assert forecast.build({"status": status, "reason": "x"}, 0, 100, 100) is None
    timed = forecast.build({"status": "timed_out", "progress": {"elapsed_ms": 5000.0}}, 0)
    assert timed is not None and timed["at_least"] and timed["seconds"] == 5.0


@pytest.mark.parametrize(
    ("membership", "files", "room"),
    [
        ("0::/user.slice/job\n",
         {"user.slice/job/memory.max": "1073741824", "user.slice/job/memory.current": "268435456"}, 768 * MB),
        ("0::/job\n", {"job/memory.max": "max", "job/memory.current": "1"}, None),
        ("12:memory:/docker/abc\n3:cpu:/x\n",
         {"memory/docker/abc/memory.limit_in_bytes": "2147483648",
          "memory/docker/abc/memory.usage_in_bytes": "1073741824"}, 1024 * MB),
        ("12:memory:/\n",
         {"memory/memory.limit_in_bytes": "9223372036854771712", "memory/memory.usage_in_bytes": "5"}, None),
    ],
)  # fmt: skip
def test_the_cgroups_limit_v1_and_v2(
    tmp_path: Path, membership: str, files: dict[str, str], room: int | None
) -> None:
    (tmp_path / "cgroup").write_text(membership)
    for name, text in files.items():
        path = tmp_path / "fs" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + "\n")
    assert forecast._cgroup_room(str(tmp_path / "fs"), str(tmp_path / "cgroup")) == room


def test_this_machine_says_what_is_available() -> None:
    here = forecast.available_kb()
    resident = forecast.resident_kb()
    assert here is not None and here > 0 and resident is not None and resident > 0


def test_a_quick_trial_measures_what_a_growing_loop_adds(kit: SimpleNamespace, os_layer: Any) -> None:
    # 1 MB kept per iteration, 400 iterations of 20 ms: cut after its first ones; the forecast projects
    # about 8 s and about 400 MB more than the trial held
    cell = "import time\nkeep = []\nfor i in range(400):\n"
    cell += "    keep.append(bytearray(1 << 20))\n    time.sleep(0.02)"
    # this process peaked higher before, and freed memory it keeps resident (as a kernel that once held
    # more): the iterations reuse those pages, so the resident memory does not grow; the growth is seen
    spike = bytearray(600 << 20)
    spike[:: 1 << 12] = b"x" * len(spike[:: 1 << 12])
    del spike  # glibc now serves 1 MB blocks from its heap, not from their own mappings
    pool = [bytearray(1 << 20) for _ in range(200)]
    del pool  # their pages stay resident below the heap's trim threshold
    outcome = kit.run_here(cell, {}, quick=True, budget_s=1.0)
    ahead = outcome["forecast"]
    assert outcome["quick"]["cut"] and ahead["basis"] == "projected", outcome
    assert 4.0 < ahead["seconds"] < 30.0, ahead
    per = ahead["projected_from"][0]["memory_kb_per_iteration"]
    assert 0.5 * MB < per < 2 * MB, outcome
    assert ahead["peak_memory_mb"] > 300 and not ahead["out_of_memory"], ahead
    # the same in a spawned worker (a TensorFlow kernel's cells run there)
    spawned = kit.run_here(cell, {}, quick=True, budget_s=1.0, worker="always")
    assert spawned["worker"] is not None, spawned
    per = spawned["forecast"]["projected_from"][0]["memory_kb_per_iteration"]
    assert 0.5 * MB < per < 2 * MB, spawned


def test_a_cell_that_grows_to_its_end_between_memory_checks_is_seen_at_its_peak(kit: SimpleNamespace) -> None:
    # 200 MB kept, in much less than the watcher's 0.25 s between its checks: the peak is at the end
    cell = "keep = [bytearray(1 << 20) for _ in range(200)]\nfor b in keep:\n    b[::4096] = b'x' * 256"
    outcome = kit.run_here(cell, {}, budget_s=5.0)
    ahead = outcome["forecast"]
    assert outcome["status"] == "finished" and ahead["basis"] == "observed", outcome
    grew = ahead["peak_memory_mb"] - (forecast.resident_kb() or 0) / 1024
    assert 180 < grew < 260, ahead
