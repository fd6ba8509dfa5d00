#!/usr/bin/env python3
"""The dev/holdout split of the crane crash suite: by pair, stratified by library, with a fixed seed.

    python suites/crane/split.py write ALL.jsonl   # (re)write dev.jsonl and holdout.jsonl beside this file
    python suites/crane/split.py check             # the two files follow the rule (reads ids and libraries)

The rule, decided before any check was written against the suite:
  1. Group the pairs (a pair = the buggy and fixed case of one id) by `library`.
  2. In each library, sort the ids, then shuffle them with `random.Random(f"{SEED}:{library}")`.
  3. The first half goes to dev, the rest to holdout. When a library has an odd number of pairs, the
     extra pair goes to dev for the 1st, 3rd, 5th, ... such library in alphabetical order and to holdout
     for the 2nd, 4th, ..., so the halves stay the same size.
Both versions of a pair always land in the same half. `check` recomputes the assignment from the files'
ids and libraries only (it never looks at cells or outcomes) and fails on any difference.
"""

from __future__ import annotations

import json
import random
import sys
from collections import defaultdict
from pathlib import Path

SEED = 20260523
HERE = Path(__file__).resolve().parent
DEV, HOLDOUT = HERE / "dev.jsonl", HERE / "holdout.jsonl"


def assign(libraries: dict[str, str]) -> dict[str, str]:
    """{pair id: "dev" | "holdout"} from {pair id: library}."""
    by_library: dict[str, list[str]] = defaultdict(list)
    for pair_id, library in libraries.items():
        by_library[library].append(pair_id)
    half: dict[str, str] = {}
    odd_seen = 0
    for library in sorted(by_library):
        ids = sorted(by_library[library])
        random.Random(f"{SEED}:{library}").shuffle(ids)
        n_dev = len(ids) // 2
        if len(ids) % 2:
            n_dev += 1 if odd_seen % 2 == 0 else 0
            odd_seen += 1
        for n, pair_id in enumerate(ids):
            half[pair_id] = "dev" if n < n_dev else "holdout"
    return half


def _read(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _libraries(cases: list[dict[str, object]]) -> dict[str, str]:
    libraries: dict[str, str] = {}
    for case in cases:
        pair_id, library = str(case["id"]), str(case["library"])
        if libraries.setdefault(pair_id, library) != library:
            raise ValueError(f"{pair_id}: its two versions name different libraries")
    return libraries


def write(all_cases: Path) -> None:
    cases = _read(all_cases)
    half = assign(_libraries(cases))
    order = {"buggy": 0, "fixed": 1}
    cases.sort(key=lambda c: (str(c["id"]), order[str(c["version"])]))
    for name, path in (("dev", DEV), ("holdout", HOLDOUT)):
        rows = [json.dumps(c, ensure_ascii=False) + "\n" for c in cases if half[str(c["id"])] == name]
        path.write_text("".join(rows), encoding="utf-8")
        print(f"{path.name}: {len(rows)} cases")


def check() -> list[str]:
    """Problems with the split as written; empty when it follows the rule."""
    dev, holdout = _read(DEV), _read(HOLDOUT)
    problems = []
    found = {str(c["id"]): "dev" for c in dev}
    for case in holdout:
        if found.get(str(case["id"])) == "dev":
            problems.append(f"{case['id']}: in both halves")
        found[str(case["id"])] = "holdout"
    expected = assign(_libraries(dev + holdout))
    problems += [
        f"{i}: in {found[i]}, the rule puts it in {expected[i]}" for i in found if found[i] != expected[i]
    ]
    for name, cases in (("dev", dev), ("holdout", holdout)):
        versions: dict[str, list[str]] = defaultdict(list)
        for case in cases:
            versions[str(case["id"])].append(str(case["version"]))
        problems += [
            f"{name}: {i} has versions {v}" for i, v in versions.items() if sorted(v) != ["buggy", "fixed"]
        ]
    return problems


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[1] == "write":
        write(Path(argv[2]))
        return 0
    if len(argv) == 2 and argv[1] == "check":
        problems = check()
        for problem in problems:
            print(problem)
        print("split follows the rule" if not problems else f"{len(problems)} problems")
        return 1 if problems else 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
