"""Quick trials (kernel/trial/quick.py): long loops cut after their first iterations in the forked child, and
how a crash relates to the cut; a full trial that runs out of time says how far it got."""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any

import pytest

from crane_jupyterlab.kernel.trial import forecast, kerasfit, loops, quick

pytestmark = pytest.mark.usefixtures("os_layer")

# A loop of 40 "epochs" of ~0.15 s each: 6 s whole, far past a 2 s budget.
TRAIN = """import time
history = []
for epoch in range(EPOCHS):
    t = time.perf_counter()
    while time.perf_counter() - t < 0.15:
        pass
    history.append(epoch)
"""


def quick_run(kit: SimpleNamespace, source: str, ns: dict[str, Any], **options: Any) -> dict[str, Any]:
    outcome: dict[str, Any] = kit.run_here(source, ns, quick=True, budget_s=2.0, **options)
    return outcome


def test_a_crash_after_a_long_loop_on_values_the_loop_does_not_touch_is_certain(kit: SimpleNamespace) -> None:
    ns: dict[str, Any] = {"EPOCHS": 40, "settings": {"lr": 0.1}}
    outcome = quick_run(kit, TRAIN + "print(settings['batch_size'])", ns)
    assert (outcome["status"], outcome["exception"], outcome["line"]) == ("crashed", "KeyError", 8)
    assert outcome["quick"]["cut"] and outcome["quick"]["crash"] == "certain"
    first = outcome["quick"]["loops"][0]
    assert (first["line"], first["iterations"], first["cut"], first["total"]) == (3, 2, True, 40)
    assert outcome["elapsed_ms"] < 1500


def test_a_crash_on_what_the_loop_built_depends_on_the_cut(kit: SimpleNamespace) -> None:
    ns: dict[str, Any] = {"EPOCHS": 40}
    lengths = quick_run(
        kit, TRAIN + "import numpy as np\nnp.stack([np.arange(len(history)), np.arange(40)])", ns
    )
    assert lengths["status"] == "crashed" and lengths["quick"]["crash"] == "depends"
    # The cell's own check of the loop's result fails on any shortened run: passed over, and what
    # follows runs; a crash after it depends on the cut (the real run may stop at the assert).
    relies = quick_run(kit, TRAIN + "assert len(history) == EPOCHS\nsettings['lr']", {**ns, "settings": {}})
    assert relies["exception"] == "KeyError" and relies["quick"]["crash"] == "depends"
    assert relies["quick"]["skipped_asserts"] == [8]
    # An assert on what the loops did not touch stays an assert, and its failure is certain.
    plain = quick_run(kit, TRAIN + "assert EPOCHS < 10, 'too many'", ns)
    assert (plain["exception"], plain["message"], plain["line"]) == ("AssertionError", "too many", 8)
    assert plain["quick"]["crash"] == "certain"
    # An index past what the loop built: a shortened run fails by itself, no evidence.
    past = quick_run(kit, TRAIN + "print(history[EPOCHS - 1])", ns)
    assert past["exception"] == "IndexError" and past["quick"]["crash"] == "shortened"


def test_what_an_outer_loop_builds_from_a_cut_inner_loop_is_touched_by_the_cut(kit: SimpleNamespace) -> None:
    source = (
        "import time\npeaks = []\nfor trial in range(3):\n    peak = 0\n    for step in range(10**6):\n"
        "        t = time.perf_counter()\n        while time.perf_counter() - t < 0.01:\n            pass\n"
        "        peak = max(peak, step)\n    peaks.append(peak)\nreport = {'peaks': peaks, 'tags': tags}\n"
        "import json\njson.dumps(report)"
    )
    outcome = quick_run(kit, source, {"tags": {"a"}})
    assert outcome["exception"] == "TypeError" and outcome["quick"]["crash"] == "depends"


def test_a_crash_in_the_first_iterations_is_certain(kit: SimpleNamespace) -> None:
    ns: dict[str, Any] = {"EPOCHS": 40, "rates": [0.1]}
    outcome = quick_run(
        kit, TRAIN.replace("    history.append(epoch)", "    history.append(rates[epoch])"), ns
    )
    assert (outcome["exception"], outcome["quick"]["crash"], outcome["quick"]["cut"]) == (
        "IndexError",
        "certain",
        False,
    )


def test_a_late_crash_is_not_reached_and_a_shortened_run_is_not_no_crash(kit: SimpleNamespace) -> None:
    ns: dict[str, Any] = {"EPOCHS": 40, "rates": [0.1] * 30}
    outcome = quick_run(
        kit, TRAIN.replace("    history.append(epoch)", "    history.append(rates[epoch])"), ns
    )
    assert outcome["status"] == "finished" and outcome["quick"]["cut"]


def test_cheap_loops_run_whole_and_functions_of_the_cell_are_cut(kit: SimpleNamespace) -> None:
    source = (
        "cols = [c.upper() for c in names]\nfor c in cols:\n    pass\n"
        "def train(n):\n    out = []\n    for i in range(n):\n        t = time.perf_counter()\n"
        "        while time.perf_counter() - t < 0.1:\n            pass\n"
        "        out.append(i)\n    return out\n"
        "import time\nh = train(100)\ncols[len(h)]"
    )
    outcome = quick_run(kit, source, {"names": list("abcdef")})
    # The cheap loops ran all 6; train's loop was cut at 2, so cols[2] exists: no crash, but shortened.
    assert outcome["status"] == "finished" and outcome["quick"]["cut"]
    loops = {(loop["line"], loop["kind"]): loop for loop in outcome["quick"]["loops"]}
    assert loops[(1, "comprehension")]["iterations"] == 6 and not loops[(1, "comprehension")]["cut"]
    assert loops[(2, "for")]["iterations"] == 6
    assert loops[(6, "for")]["iterations"] == 2 and loops[(6, "for")]["cut"]


def test_a_while_loop_is_cut(kit: SimpleNamespace) -> None:
    source = "import time\nn = 0\nwhile n < 10**9:\n    time.sleep(0.01)\n    n += 1\nprint(undefined_name)"
    outcome = quick_run(kit, source, {})
    assert outcome["exception"] == "NameError" and outcome["quick"]["crash"] == "certain"
    assert outcome["quick"]["loops"][0]["cut"]


def test_a_while_loop_that_counts_to_a_bound_knows_its_length(kit: SimpleNamespace) -> None:
    # `i += 1` against `limit`: the run's length is the iterations the counter needs to reach it
    source = "import time\ni = 3\nwhile i < limit and err > 0:\n    time.sleep(0.01)\n    i += 1"
    loop = quick_run(kit, source, {"limit": 4003, "err": 1.0})["quick"]["loops"][0]
    assert loop["cut"] and loop["total"] == 4000, loop
    # a counter that steps down by a float, against a bound on the left
    down = quick_run(kit, "import time\nt = 20.0\nwhile 0.0 <= t:\n    time.sleep(0.01)\n    t -= 0.005", {})
    assert down["quick"]["loops"][0]["total"] == 4001
    # a counter that doubles, or a bound that is a call of the notebook's: length unknown
    doubles = quick_run(kit, "import time\ni = 1\nwhile i < 10**30:\n    time.sleep(0.3)\n    i *= 2", {})
    assert doubles["quick"]["loops"][0]["total"] is None
    called = quick_run(
        kit, "import time\ni = 0\nwhile i < f():\n    time.sleep(0.3)\n    i += 1", {"f": lambda: 10**6}
    )
    assert called["quick"]["loops"][0]["total"] is None


def test_a_counted_while_loop_that_fits_the_budget_runs_whole(kit: SimpleNamespace) -> None:
    # 1.2 s: past the half of the budget after which a loop of unknown length is cut
    outcome = quick_run(kit, "import time\ni = 0\nwhile i < 30:\n    time.sleep(0.04)\n    i += 1", {})
    loop = outcome["quick"]["loops"][0]
    assert (outcome["status"], loop["cut"], loop["iterations"], loop["total"]) == ("finished", False, 30, 30)


def test_a_loop_whose_iterations_grow_is_projected_as_growing(monkeypatch: pytest.MonkeyPatch) -> None:
    # 1,000 of 7,000 iterations in 1 s with 10 s left: at their average rate the rest takes 6 s and
    # fits; but the last 500 took three times as long as the first 500 (an inner `range(i)`), and
    # growing so the rest takes about 48 s: cut.
    now = 1000.0
    monkeypatch.setattr(loops, "time", SimpleNamespace(monotonic=lambda: now))
    runtime = loops.Runtime(loops.Plan(), k=2, long_s=0.5)
    runtime.deadline = now + 10.0
    steady = (now - 0.5, 500)
    growing = (now - 0.75, 500)
    assert not runtime.long(now - 1.0, 1000, 7000, 0.0, steady)
    assert not runtime.long(now - 1.0, 1000, 7000, 0.0, None)
    assert runtime.long(now - 1.0, 1000, 7000, 0.0, growing)
    # a loop slowing a little (noise, not growth) keeps its average rate
    assert not runtime.long(now - 1.0, 1000, 7000, 0.0, (now - 0.55, 500))


def test_reading_memory_is_off_a_loop_s_clock_and_a_while_loop_spaces_its_reads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # malloc's counters are slow to read in a heap of many freed blocks (`mallinfo2` walks them): 20 ms
    reads: list[float] = []

    def slow_malloc_kb() -> int:
        reads.append(time.monotonic())
        time.sleep(0.02)
        return 0

    monkeypatch.setattr(loops, "malloc_kb", slow_malloc_kb)
    rewritten = quick.rewrite("i = 0\nwhile i < 3000:\n    i += 1\nfor j in range(3000):\n    pass", "<cell>")
    assert rewritten is not None
    tree, plan = rewritten
    runtime = quick.Runtime(plan, k=2, long_s=60.0)
    exec(compile(tree, "<cell>", "exec"), {quick.NAME: runtime})
    counted, each = runtime.report()["loops"]
    assert counted["iterations"] == each["iterations"] == 3000
    # 3,000 iterations of nothing take a few ms; each loop read its memory at least twice (20 ms each)
    assert counted["seconds"] < 0.015 and each["seconds"] < 0.015, (counted, each)
    # every 16th iteration would have been 187 reads (3.7 s); spaced by their cost, the first ones only
    assert len(reads) <= 6, len(reads)


def test_a_run_that_fits_is_handed_to_c_iterators_and_still_counted_exactly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # after 64 checked iterations the rest of each run fits the budget many times over: it passes through
    # C iterators only, and is counted at its end, its `break` or its crash; a loop with a loop inside
    # (whose length may grow with it) stays checked, its inner runs are handed over. A clock that moves
    # 1 us a reading: no iteration runs slower than the ones before it by chance.
    ticks = iter(range(1, 1 << 40))
    monkeypatch.setattr(
        loops, "time", SimpleNamespace(monotonic=lambda: next(ticks) * 1e-6, perf_counter=time.perf_counter)
    )
    code = "for i in range(400):\n    for j in range(i):\n        pass\n"
    code += "total = 0\nfor i in range(50_000):\n    total += i\nhits = []\nfor j in range(50_000):\n"
    code += "    if j == 40_000:\n        break\n    hits.append(j)\nfor m in range(50_000):\n"
    code += "    if m == 30_000:\n        raise ValueError(m)"
    rewritten = quick.rewrite(code, "<cell>")
    assert rewritten is not None
    runtime = quick.Runtime(rewritten[1], k=2, long_s=60.0)
    ns: dict[str, Any] = {quick.NAME: runtime}
    with pytest.raises(ValueError):
        exec(compile(rewritten[0], "<cell>", "exec"), ns)
    assert ns["total"] == sum(range(50_000)) and len(ns["hits"]) == 40_000
    outer, inner, whole, broken, crashed = runtime.report()["loops"]
    assert outer["iterations"] == 400 and "handed" not in outer
    assert inner["iterations"] == 399 * 400 // 2 and inner["handed"] == sum(i - 64 for i in range(65, 400))
    assert (whole["iterations"], whole["handed"], whole["cut"]) == (50_000, 50_000 - 64, False)
    assert (broken["iterations"], broken["handed"]) == (40_001, 40_001 - 64)
    assert (crashed["iterations"], crashed["handed"]) == (30_001, 30_001 - 64)
    assert all(loop["seconds"] > 0 for loop in (whole, broken, crashed))


def test_a_generator_suspended_in_a_while_loop_resumes_under_the_next_runtime() -> None:
    # a chain's step: the generator an earlier step started goes on in a later one, whose runtime did not
    # see its while loop's run start
    first = quick.rewrite(
        "def gen():\n    i = 0\n    while i < 5:\n        yield i\n        i += 1\ng = gen()\nhead = next(g)",
        "<a>",
    )
    later = quick.rewrite("rest = list(g)", "<b>")
    assert first is not None and later is not None
    earlier = quick.Runtime(first[1], k=2)
    ns: dict[str, Any] = {quick.NAME: earlier}
    exec(compile(first[0], "<a>", "exec"), ns)
    ns[quick.NAME] = runtime = quick.Runtime(later[1], k=2)
    runtime.inherit(earlier)
    exec(compile(later[0], "<b>", "exec"), ns)
    assert (ns["head"], ns["rest"]) == (0, [1, 2, 3, 4])
    assert [loop["iterations"] for loop in runtime.report()["loops"]] == [4]


def test_a_full_trial_that_times_out_says_how_far_it_got(kit: SimpleNamespace) -> None:
    outcome = kit.run_here(TRAIN, {"EPOCHS": 40}, budget_s=1.0)
    assert outcome["status"] == "timed_out"
    progress = outcome["progress"]
    epochs = progress["loops"][0]
    assert epochs["line"] == 3 and epochs["total"] == 40 and 2 <= epochs["iterations"] < 40
    assert progress["line"] in (3, 4, 5, 6, 7)


def test_the_rewrite_keeps_the_cell_s_meaning() -> None:
    code = (
        "xs = [i * i for i in range(5)]\ntotal = 0\nwhile total < 3:\n    total += 1\nelse:\n    done = True"
    )
    rewritten = quick.rewrite(code, "<cell>")
    assert rewritten is not None
    tree, plan = rewritten
    ns: dict[str, Any] = {}
    ns[quick.NAME] = quick.Runtime(plan, k=1, long_s=60.0)
    exec(compile(tree, "<cell>", "exec"), ns)
    assert ns["xs"] == [0, 1, 4, 9, 16] and ns["total"] == 3 and ns["done"] is True
    assert quick.rewrite("def (:", "<cell>") is None


# -- long library calls (kernel/trial/libcalls.py) ---------------------------------------------------------

SLOW_ROW = """import time
def score(row):
    t = time.perf_counter()
    while time.perf_counter() - t < 0.0002:
        pass
    return row['a'] * 2
"""


def test_the_rewrite_wraps_known_long_library_calls_only_in_a_quick_trial() -> None:
    pd = pytest.importorskip("pandas")
    code = "s = frame['a'].map(lambda v: v * 2)\nt = frame.apply(lambda r: r['a'], axis=1)\nu = len(s)"
    rewritten = quick.rewrite(code, "<cell>", calls=True)
    assert rewritten is not None and ".call(" in __import__("ast").unparse(rewritten[0])
    tree, plan = rewritten
    ns: dict[str, Any] = {"frame": pd.DataFrame({"a": range(5)})}
    ns[quick.NAME] = quick.Runtime(plan, k=1, long_s=60.0)
    exec(compile(tree, "<cell>", "exec"), ns)
    assert ns["s"].tolist() == [0, 2, 4, 6, 8] and ns["t"].tolist() == [0, 1, 2, 3, 4] and ns["u"] == 5
    assert not ns[quick.NAME].report()["cut"]  # short calls run whole, as they are
    counting = quick.rewrite(code, "<cell>")  # a full trial only counts loops: the calls stay as written
    assert counting is not None and ".call(" not in __import__("ast").unparse(counting[0])


def test_a_long_apply_runs_on_its_first_rows_and_keeps_the_real_index(kit: SimpleNamespace) -> None:
    pd = pytest.importorskip("pandas")
    ns: dict[str, Any] = {"df": pd.DataFrame({"a": range(200_000)}), "settings": {}}
    # A crash after it on what it did not touch: certain.
    cell = SLOW_ROW + "df['b'] = df.apply(score, axis=1)\nsettings['lr']"
    outcome = quick_run(kit, cell, ns)
    assert (outcome["exception"], outcome["line"], outcome["quick"]["crash"]) == ("KeyError", 8, "certain")
    rows = next(loop for loop in outcome["quick"]["loops"] if loop["kind"] == "rows")
    assert rows["cut"] and rows["total"] == 200_000 and 2 <= rows["iterations"] < 200_000
    assert outcome["elapsed_ms"] < 1800
    # The result has the real length and index (its rows repeated past the sample): the column goes in.
    fine = quick_run(
        kit, SLOW_ROW + "df['b'] = df.apply(score, axis=1).to_numpy()\nassert len(df) == 200_000", ns
    )
    assert fine["status"] == "finished" and fine["quick"]["cut"]  # shortened, never "no crash"
    # A crash on what it computed: at most "may crash".
    reads = quick_run(kit, SLOW_ROW + "b = df['a'].map(lambda v: score({'a': v}))\nb > 'x'", ns)
    assert reads["exception"] == "TypeError" and reads["quick"]["crash"] == "depends"


def test_a_long_transform_of_a_grouped_column_runs_on_its_first_groups(kit: SimpleNamespace) -> None:
    pd = pytest.importorskip("pandas")
    import numpy as np

    users = np.random.default_rng(3).integers(0, 20_000, 100_000).astype(float)
    users[::97] = np.nan  # in no group
    frame = pd.DataFrame({"user": users, "a": np.arange(100_000.0)})
    slow = SLOW_ROW.replace("row['a'] * 2", "row - row.mean()")
    # The rows of the groups that ran hold the real transform's values (the first two at least).
    cell = slow + (
        "df['z'] = df.groupby('user')['a'].transform(score)\n"
        "real = df['a'] - df.groupby('user')['a'].transform('mean')\n"
        "number = df.groupby('user').ngroup()\n"
        "assert np.isclose(df['z'], real)[(number >= 0) & (number < 2)].all()\n"
        "assert len(df['z']) == 100_000 and df['z'].dtype == 'float64'"
    )
    outcome = quick_run(kit, cell, {"df": frame, "np": np})
    assert outcome["status"] == "finished", outcome
    rows = next(loop for loop in outcome["quick"]["loops"] if loop["kind"] == "rows")
    groups = frame.groupby("user").ngroups
    assert rows["cut"] and rows["total"] == groups and 2 <= rows["iterations"] < groups
    ahead = outcome["forecast"]
    assert ahead["basis"] == "projected" and ahead["seconds"] > groups * 0.0002


def test_what_a_cut_row_wise_call_keeps_per_row_is_projected_to_all_its_rows(kit: SimpleNamespace) -> None:
    pd = pytest.importorskip("pandas")
    import numpy as np

    # every row's result kept: 8 kB a row, 1.6 GB over 200,000 rows
    cell = SLOW_ROW + "kept = df['a'].map(lambda v: np.full(1000, float(score({'a': v}))))"
    outcome = quick_run(kit, cell, {"df": pd.DataFrame({"a": range(200_000)}), "np": np})
    rows = next(loop for loop in outcome["quick"]["loops"] if loop["kind"] == "rows")
    assert rows["cut"] and rows["iterations"] < 100_000, rows
    per = outcome["forecast"]["projected_from"][0]["memory_kb_per_iteration"]
    assert 6 < per < 12, outcome["forecast"]
    grows = outcome["forecast"]["peak_memory_mb"] - (forecast.resident_kb() or 0) / 1024
    assert 1200 < grows < 2400, outcome["forecast"]


def test_a_fit_whose_time_grows_slower_than_its_rows_is_timed_again_on_a_larger_sample() -> None:
    from crane_jupyterlab.kernel.trial import libcalls

    class Est:
        def __init__(self, warm: bool = False) -> None:
            self.warm = warm

        def get_params(self) -> dict[str, Any]:
            return {"warm_start": self.warm}

    rt = SimpleNamespace(left=lambda now: 8.0)
    # 4 times the rows, 1.5 times the time (a fixed cost per tree): a larger sample, up to half the rows
    assert libcalls._larger(rt, Est(), "fit", 100_000, [(400, 0.2), (1600, 0.3)]) == 50_000
    # sized, at that growth (here the square root of the rows), to take a quarter of what is left
    sized = libcalls._larger(rt, Est(), "fit", 10**7, [(400, 0.1), (1600, 0.2)])
    assert sized == pytest.approx(160_000, rel=0.01)
    # about linear or steeper, a fit that goes on from its state, a larger sample that is not 4x: none
    assert libcalls._larger(rt, Est(), "fit", 100_000, [(400, 0.1), (1600, 0.4)]) is None
    assert libcalls._larger(rt, Est(warm=True), "fit", 100_000, [(400, 0.2), (1600, 0.3)]) is None
    assert libcalls._larger(rt, Est(), "partial_fit", 100_000, [(400, 0.2), (1600, 0.3)]) is None
    assert libcalls._larger(rt, Est(), "fit", 10_000, [(400, 0.2), (1600, 0.3)]) is None
    # projected from the two largest sizes: their own exponent, the high end at most linear
    loop = loops.Loop(2, "fit")
    libcalls._project(loop, 100_000, (400, 0.2), (1600, 0.3), (25_600, 0.6))
    assert loop.whole_s == pytest.approx(0.6 * (100_000 / 25_600) ** 0.25, rel=0.01)
    assert loop.whole_high_s == pytest.approx(0.6 * (100_000 / 25_600) ** 0.75, rel=0.01)
    # two sizes: kept within 1 and 2, as a small sample's fixed costs hide the growth
    libcalls._project(loop, 100_000, (400, 0.2), (1600, 0.3))
    assert loop.whole_s == pytest.approx(0.3 * 100_000 / 1600, rel=0.01)


def test_a_crash_inside_the_function_on_a_first_row_is_certain(kit: SimpleNamespace) -> None:
    pd = pytest.importorskip("pandas")
    ns: dict[str, Any] = {"df": pd.DataFrame({"a": [1] * 50 + [None] + [1] * 200_000}, dtype=object)}
    cell = SLOW_ROW + "df['b'] = df.apply(score, axis=1)"
    outcome = quick_run(kit, cell, ns)
    assert (outcome["exception"], outcome["quick"]["crash"]) == ("TypeError", "certain")


def test_a_long_grid_search_is_fitted_on_a_sample_with_the_real_columns(kit: SimpleNamespace) -> None:
    pytest.importorskip("sklearn")
    import numpy as np
    from sklearn.model_selection import GridSearchCV
    from sklearn.svm import SVC

    rng = np.random.default_rng(0)
    X = rng.normal(size=(20_000, 6))
    y = (X[:, 0] + rng.normal(size=20_000) > 0).astype(int)
    ns: dict[str, Any] = {"X": X, "y": y, "X_test": X[:50, 1:], "GridSearchCV": GridSearchCV, "SVC": SVC}
    fit = "grid = GridSearchCV(SVC(), {'C': [0.1, 1, 10]}, cv=3)\ngrid.fit(X, y)\n"
    outcome = quick_run(kit, fit + "pred = grid.predict(X_test)", ns)
    # X_test has a column too few: the columns are the real ones whatever rows the fit saw.
    assert (outcome["exception"], outcome["line"]) == ("ValueError", 3), outcome
    assert "expecting 6 features" in outcome["message"] and outcome["quick"]["crash"] == "certain"
    fitted = next(loop for loop in outcome["quick"]["loops"] if loop["kind"] == "fit")
    assert fitted["cut"] and fitted["total"] == 20_000 and fitted["iterations"] < 20_000
    # What the sample decides (its classes, its scores) is at most "may crash".
    classes = quick_run(kit, fit + "grid.predict_proba(X)[:, 2]", ns)
    assert classes["status"] == "crashed" and classes["quick"]["crash"] == "depends"
    fine = quick_run(kit, fit + "pred = grid.predict(X[:50])\nassert grid.n_features_in_ == 6", ns)
    assert fine["status"] == "finished" and fine["quick"]["cut"]


def test_a_sampled_predictions_size_meeting_the_full_targets_is_no_crash(kit: SimpleNamespace) -> None:
    pytest.importorskip("sklearn")
    import numpy as np
    from sklearn.model_selection import cross_val_predict
    from sklearn.svm import SVR

    rng = np.random.default_rng(0)
    X = rng.normal(size=(20_000, 6))
    y = X[:, 0] * 2 + rng.normal(size=20_000)
    ns: dict[str, Any] = {"X": X, "y": y, "SVR": SVR, "cross_val_predict": cross_val_predict}
    fit = "predicted = cross_val_predict(SVR(), X, y, cv=3)\n"
    # A public notebook's residual plot: the sample's predictions against all the targets ("shapes
    # (20000,) (2054,)"), which the full run, predicting every row (cross_val_predict's contract), never
    # meets.
    outcome = quick_run(kit, fit + "resid = y - predicted", ns)
    fitted = next(loop for loop in outcome["quick"]["loops"] if loop["kind"] == "fit")
    assert fitted["cut"] and str(fitted["iterations"]) in outcome["message"], outcome
    assert (outcome["exception"], outcome["quick"]["crash"]) == ("ValueError", "shortened")
    # A mismatch the sample's size meets without the full size is still "may crash" (the rule itself, on
    # the sizes that trial saw: a second trial's sample depends on the machine's speed).
    runtime = quick.Runtime.__new__(quick.Runtime)
    cut = quick.Loop(1, "fit")
    cut.cut, cut.iterations, cut.total = True, fitted["iterations"], fitted["total"]
    runtime.loops, runtime.fits = {0: cut}, []
    n = fitted["iterations"]
    assert runtime._sized_by_the_cut(f"shapes (20000,) ({n},)")
    assert not runtime._sized_by_the_cut(f"shapes (100,) ({n},)")


def test_a_long_minimize_stops_after_its_first_iterations(kit: SimpleNamespace) -> None:
    pytest.importorskip("scipy")
    from scipy.optimize import minimize

    cell = (
        "import time\ndef loss(p):\n    time.sleep(0.02)\n    return float(((p - 3) ** 2).sum())\n"
        "res = minimize(loss, [0.0, 0.0], method='Nelder-Mead', options={'xatol': 1e-12, 'fatol': 1e-14})\n"
        "dict(zip(names, res.x, strict=True))"
    )
    outcome = quick_run(kit, cell, {"minimize": minimize, "names": ["a"]})
    assert outcome["exception"] == "ValueError" and outcome["quick"]["crash"] == "depends"
    cut = next(loop for loop in outcome["quick"]["loops"] if loop["kind"] == "minimize")
    assert cut["cut"] and outcome["elapsed_ms"] < 1800


def test_a_keras_fit_wrapped_as_a_library_call_keeps_its_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """quick.keras_fit finds the cell's line of `model.fit` through libcalls' wrapper (a cut fit's
    statement is what the dataflow starts from)."""
    import sys
    import types

    class Callback:
        pass

    class Model:
        def fit(self, *args: Any, **kwargs: Any) -> str:
            return "fitted"

    fake = types.ModuleType("keras")
    fake.Model, fake.callbacks = Model, types.SimpleNamespace(Callback=Callback)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "keras", fake)
    monkeypatch.setattr(Model, "fit", Model.fit)  # keras_fit patches it: restored after the test
    rewritten = quick.rewrite("x = 1\nh = model.fit(x, epochs=5)", "<cell>", calls=True)
    assert rewritten is not None
    tree, plan = rewritten
    runtime = quick.Runtime(plan, k=2)
    runtime.filename = "<cell>"
    kerasfit.keras_fit(runtime)
    ns: dict[str, Any] = {"model": Model(), quick.NAME: runtime}
    exec(compile(tree, "<cell>", "exec"), ns)
    assert ns["h"] == "fitted" and [f.line for f in runtime.fits] == [2]


def test_an_enumerate_or_zip_loop_knows_its_length_and_projects_its_time(kit: SimpleNamespace) -> None:
    """`enumerate(data)` and `zip(a, b)` have no length of their own: the loop's length is their
    arguments' (the shortest), so it is cut by projection, not after half the budget, and the time it
    would take whole is projected from its measured rate."""
    source = TRAIN.replace("range(EPOCHS)", "enumerate(zip(rows, labels))").replace("(epoch)", "(epoch[0])")
    outcome = quick_run(kit, source, {"rows": list(range(40)), "labels": list(range(50))})
    assert outcome["status"] == "finished" and outcome["quick"]["cut"], outcome
    loop = next(loop for loop in outcome["quick"]["loops"] if loop["line"] == 3)
    assert (loop["iterations"], loop["total"], loop["cut"]) == (2, 40, True), loop
    # 40 iterations of ~0.15 s: the projection from two of them, within a loaded machine's noise
    assert 0.25 <= loop["seconds"] < 1.5 and 5.0 <= loop["full_s"] <= 30.0, loop
    assert outcome["elapsed_ms"] < 1500


def test_a_loop_that_runs_whole_reports_its_measured_seconds(kit: SimpleNamespace) -> None:
    outcome = quick_run(kit, "import time\nfor i in range(3):\n    time.sleep(0.05)", {})
    loop = outcome["quick"]["loops"][0]
    assert not loop["cut"] and loop["full_s"] == pytest.approx(loop["seconds"], abs=1e-3)
    assert loop["seconds"] >= 0.14


def test_a_notebook_that_shadows_enumerate_gets_no_length_from_it() -> None:
    rewritten = quick.rewrite("for i, x in enumerate(data):\n    pass", "<cell>", calls=True)
    assert rewritten is not None
    tree, plan = rewritten
    runtime = quick.Runtime(plan, k=2)

    def enumerate(xs: Any) -> Any:  # the notebook's own, a generator: no builtin length to trust
        yield from ((i, x) for i, x in builtins_enumerate(xs))

    import builtins

    builtins_enumerate = builtins.enumerate
    ns: dict[str, Any] = {"data": [1, 2, 3], "enumerate": enumerate, quick.NAME: runtime}
    exec(compile(tree, "<cell>", "exec"), ns)
    assert [loop.total for loop in runtime.loops.values()] == [None]


def test_a_frames_iterrows_loop_knows_its_length(kit: SimpleNamespace) -> None:
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"a": range(40)})
    source = TRAIN.replace("range(EPOCHS)", "frame.iterrows()").replace("(epoch)", "(epoch[0])")
    outcome = quick_run(kit, source, {"frame": frame})
    loop = next(loop for loop in outcome["quick"]["loops"] if loop["line"] == 3)
    assert (loop["iterations"], loop["total"], loop["cut"]) == (2, 40, True), loop
    tuples = quick_run(kit, source.replace("iterrows()", "itertuples()"), {"frame": frame})
    assert next(loop for loop in tuples["quick"]["loops"] if loop["line"] == 3)["total"] == 40
    counted = quick_run(
        kit, source.replace("frame.iterrows()", "enumerate(frame.iterrows())"), {"frame": frame}
    )
    assert next(loop for loop in counted["quick"]["loops"] if loop["line"] == 3)["total"] == 40
    # a generator of the notebook's own has no length to borrow
    own = quick_run(kit, source.replace("frame.iterrows()", "((i, i) for i in range(40))"), {})
    assert next(loop for loop in own["quick"]["loops"] if loop["line"] == 3)["total"] is None
