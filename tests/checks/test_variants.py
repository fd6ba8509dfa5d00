"""Every rule on generated variants that were executed to confirm the truth (tests/checks/variants.py).

The normal run takes a small deterministic sample of every generator in one worker; the slow run
executes every variant of every generator and requires at least 20 crashing and 20 fine ones each.
"""

from __future__ import annotations

import pytest
from variants import Spec, Variant, all_specs, execute, expand, score

SPECS = all_specs()


def _sample(spec: Spec) -> list[Variant]:
    """Two crashing and two fine variants of a generator, on different flows."""
    chosen: list[Variant] = []
    for crash in (True, False):
        side = [v for v in expand(spec) if v.crash is crash]
        chosen.extend(side[:: max(1, len(side) // 2)][:2])
    return chosen


def _check(variants: list[Variant]) -> None:
    verdicts = score(variants, execute(variants))
    problems = [f"{vd.variant.name}: {vd.problem()}\n{vd.variant.cell}" for vd in verdicts if vd.problem()]
    assert not problems, "\n\n".join(problems)


def test_a_sample_of_every_generator() -> None:
    _check([v for spec in SPECS for v in _sample(spec)])


@pytest.mark.slow
@pytest.mark.parametrize("spec", SPECS, ids=[f"{s.generator}" for s in SPECS])
def test_every_variant_of_a_generator(spec: Spec) -> None:
    variants = expand(spec)
    assert sum(v.crash for v in variants) >= 20 and sum(not v.crash for v in variants) >= 20
    _check(variants)
