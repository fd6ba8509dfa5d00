"""What a run from the top says of a crash its quick run could not claim (a loop was cut above it)."""

from __future__ import annotations

from crane_jupyterlab.server.fromtop import _rerun_words


def test_a_hedge_a_full_run_answered_says_so() -> None:
    words = _rerun_words({"cell": 6, "ran": True, "answered": True, "need_s": 4.2, "left_s": 280.0})
    assert "cell 7 of the code cells" in words and "run again with nothing cut" in words


def test_a_hedge_that_does_not_fit_names_the_full_run_it_needs() -> None:
    words = _rerun_words({"cell": 2, "ran": False, "need_s": 900.4, "left_s": 100.0})
    assert "cell 3 of the code cells takes about 900 s" in words and "run the notebook in full" in words
    unknown = _rerun_words({"cell": 2, "ran": False, "need_s": None, "left_s": 100.0})
    assert "an unknown time" in unknown
    timed_out = _rerun_words({"cell": 0, "ran": True, "answered": False, "need_s": 50.0, "left_s": 60.0})
    assert "did not end within the budget" in timed_out


def test_no_hedge_adds_nothing() -> None:
    assert _rerun_words(None) == ""
