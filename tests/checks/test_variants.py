"""Every rule on generated variants that were executed to confirm the truth (tests/checks/variants.py).

The normal run takes a small deterministic sample of every generator in one worker; the slow run
executes every variant of every generator and requires at least 20 crashing and 20 fine ones each.
"""

from __future__ import annotations

from typing import Any

import pytest
from variants import Spec, Variant, all_specs, execute, expand, family, score

SPECS = all_specs()


def _sample(spec: Spec) -> list[Variant]:
    """Two crashing and two fine variants of a generator, on different flows."""
    chosen: list[Variant] = []
    for crash in (True, False):
        side = [v for v in expand(spec) if v.crash is crash]
        chosen.extend(side[:: max(1, len(side) // 2)][:2])
    return chosen


def _check(variants: list[Variant], **how: Any) -> None:
    verdicts = score(variants, execute(variants, **how))
    problems = [f"{vd.variant.name}: {vd.problem()}\n{vd.variant.cell}" for vd in verdicts if vd.problem()]
    assert not problems, "\n\n".join(problems)


def test_a_sample_of_every_generator() -> None:
    # one worker per library (its import paid once, not once per generator), two at a time
    _check([v for spec in SPECS for v in _sample(spec)], by=family, jobs=2)


@pytest.fixture(scope="module")
def executed(request: pytest.FixtureRequest) -> None:
    """Every variant of the generators this run selected, executed once up front (cached), one worker per
    library, two at a time; each generator's test then scores its own."""
    chosen = [item.callspec.params["spec"] for item in request.session.items
              if getattr(item, "originalname", "") == "test_every_variant_of_a_generator"]  # fmt: skip
    execute([v for spec in chosen for v in expand(spec)], by=family, jobs=2)


@pytest.mark.slow
@pytest.mark.parametrize("spec", SPECS, ids=[f"{s.generator}" for s in SPECS])
def test_every_variant_of_a_generator(spec: Spec, executed: None) -> None:
    variants = expand(spec)
    assert sum(v.crash for v in variants) >= 20 and sum(not v.crash for v in variants) >= 20
    _check(variants)
