"""kerasfit.fixed_key: a KeyError on a Keras History's `history` dict is the full run's too (its keys come
from compile, not from how many epochs a cut fit ran), except where validation has not been logged yet."""

from __future__ import annotations

from typing import Any

import pytest

from crane_jupyterlab.kernel.trial.kerasfit import fixed_key


@pytest.fixture
def logged() -> Any:
    keras = pytest.importorskip("keras")
    history = keras.callbacks.History()
    history.history = {"loss": [0.9, 0.7]}
    return history


def test_a_metric_compile_did_not_name_is_a_fixed_key(logged: Any) -> None:
    ns = {"history": logged}
    assert fixed_key("'accuracy'", "plt.plot(history.history['accuracy'])", ns)
    ns["h"] = logged.history  # the same dict by another name
    assert fixed_key("'accuracy'", "acc = h['accuracy']", ns)


def test_where_the_cut_may_matter_it_is_not(logged: Any) -> None:
    ns = {"history": logged, "other": {"loss": [1.0]}}
    # no validation logged yet: with validation_freq a full run may validate at a later epoch
    assert not fixed_key("'val_loss'", "history.history['val_loss']", ns)
    logged.history["val_accuracy"] = [0.5, 0.6]
    assert fixed_key("'val_loss'", "history.history['val_loss']", ns)
    assert not fixed_key("'accuracy'", "other['accuracy']", ns)  # a dict of the notebook's own
    assert not fixed_key("'accuracy'", "history.history[key]", ns)  # a key the line computes
    logged.history = {}
    assert not fixed_key("'accuracy'", "history.history['accuracy']", ns)  # no epoch logged
    assert not fixed_key("'accuracy'", "history.history['accuracy'", ns)  # a line that does not parse
