"""Building a crash-pair suite and writing its seeded dev/unseen split: the one copy that
suites/long/make.py and suites/longlib/make.py share (each passes its own seed)."""

from __future__ import annotations

import json
import random
from pathlib import Path


class Pairs:
    """The cases of a suite, a buggy and a fixed version per pair, in the live-suite format."""

    def __init__(self) -> None:
        self.cases: list[dict] = []

    def pair(self, id_, library, root, target, shared, buggy, fixed, exc, diag_b, diag_f, fixed_target=None):
        """`shared`: setup cells common to both; `buggy`/`fixed`: the last setup cell of each version."""
        for version, last, crash, t, diag in (
            ("buggy", buggy, True, target, diag_b),
            ("fixed", fixed, False, fixed_target or target, diag_f),
        ):
            self.cases.append(
                {
                    "id": id_,
                    "version": version,
                    "library": library,
                    "root_cause": root,
                    "data_dependent": fixed_target is None,
                    "executed_cells": [*shared, last] if last else list(shared),
                    "target_cell": t,
                    "crash": crash,
                    "exception": exc if crash else None,
                    "message": None,
                    "diagnosis": diag,
                    "decisive_facts": [],
                }
            )


def split(cases: list[dict], seed: str) -> dict[str, str]:
    """Pairs grouped by library, ids sorted, shuffled with random.Random(f"{seed}:{library}"); the first
    ceil(n/2) go to dev for libraries in even alphabetical position, floor(n/2) for odd ones."""
    libs: dict[str, list[str]] = {}
    for c in cases:
        if c["id"] not in libs.setdefault(c["library"], []):
            libs[c["library"]].append(c["id"])
    half = {}
    for n, lib in enumerate(sorted(libs)):
        ids = sorted(libs[lib])
        random.Random(f"{seed}:{lib}").shuffle(ids)
        n_dev = (len(ids) + (1 if n % 2 == 0 else 0)) // 2
        for i, pid in enumerate(ids):
            half[pid] = "dev" if i < n_dev else "unseen"
    return half


def write(here: Path, cases: list[dict], seed: str) -> dict[str, str]:
    """all.jsonl, dev.jsonl and unseen.jsonl beside the suite's make.py; returns the split."""
    half = split(cases, seed)
    for name in ("all", "dev", "unseen"):
        rows = [c for c in cases if name == "all" or half[c["id"]] == name]
        (here / f"{name}.jsonl").write_text("".join(json.dumps(c) + "\n" for c in rows), encoding="utf-8")
        print(name, len(rows) // 2, "pairs")
    return half
