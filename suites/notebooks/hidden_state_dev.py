#!/usr/bin/env python3
"""Hidden-state variants of the run-from-the-top development corpus (suites/notebooks/from-top-dev.json),
written before any measurement.

    python3 suites/notebooks/hidden_state_dev.py DEST

DEST is where scripts/notebook_corpus.py wrote from-top-dev.json.

Each variant is one of the originals with one change a user makes in a live kernel *after* running the
notebook top to bottom, without running anything again:

- deleted: a cell that defines names is deleted after it ran;
- moved:   a cell is moved above a cell whose names it reads;
- edited:  a cell is edited after it ran, renaming a name it defines (every whole-word occurrence in that
  cell).

The live kernel is "the original run top to bottom, then the change": it still holds every name the original
defined, so the notebook looks fine there. The truth is a real run of the variant from the top in a fresh
kernel. `expect` is what we predicted, blind, before measuring: the first cell of the variant that fails from
the top (its number among the variant's code cells, counted from 1) and the name its NameError lacks (a name
the original defines, so the live kernel has it).

A variant is written beside its original (same folder, so relative data paths hold) as
STEM__hidden-KIND.ipynb. Cells are addressed by their number among the original's code cells (counted from 1),
and each change checks the cell's text first, so a different notebook fails loudly instead of being changed
somewhere else. Deterministic: the same originals give byte-identical variants. No notebook content is kept in
this file beyond the short snippets that identify a cell."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

VARIANTS = [
    {
        "original": "from-top-dev/homemade/notebooks/linear_regression/non_linear_regression_demo.ipynb",
        "kind": "deleted",
        "cell": 5,
        "contains": "linear_regression.train(",
        "why": "the training cell (num_iterations, linear_regression, theta, cost_history) is deleted after "
        "it ran",
        "expect": {"cell": 5, "exception": "NameError", "name": "num_iterations"},
    },
    {
        "original": "from-top-dev/homemade/notebooks/logistic_regression/"
        "logistic_regression_with_non_linear_boundary_demo.ipynb",
        "kind": "deleted",
        "cell": 5,
        "contains": "x_train = data[[x_axis, y_axis]]",
        "why": "the cell that shapes x_train and y_train is deleted after it ran; the training cell reads "
        "them",
        "expect": {"cell": 5, "exception": "NameError", "name": "x_train"},
    },
    {
        "original": "from-top-dev/dlclass/01_keras/Intro Keras.ipynb",
        "kind": "moved",
        "cell": 23,
        "above": 22,
        "contains": "pd.DataFrame(history.history)",
        "above_contains": "history = model.fit(",
        "why": "the cell that tabulates the training history is moved above the cell that trains (its input)",
        "expect": {"cell": 22, "exception": "NameError", "name": "history"},
    },
    {
        "original": "from-top-dev/sklmooc/notebooks/feature_selection_introduction.ipynb",
        "kind": "moved",
        "cell": 7,
        "above": 6,
        "contains": 'cv_results["fit_time"]',
        "above_contains": "cv_results = pd.concat(",
        "why": "the fit-time plot is moved above the cell that builds cv_results, after both "
        "cross-validations",
        "expect": {"cell": 6, "exception": "NameError", "name": "cv_results"},
    },
    {
        "original": "from-top-dev/makemore/makemore_part3_bn.ipynb",
        "kind": "edited",
        "cell": 12,
        "contains": "class BatchNorm1d",
        "rename": ["layers", "net_layers"],
        "why": "the deeper net's cell is edited after it ran, its list of layers renamed; the training loop "
        "below still reads layers, after the first 200,000-step loop",
        "expect": {"cell": 13, "exception": "NameError", "name": "layers"},
    },
    {
        "original": "from-top-dev/jdw/ML-Exercise7.ipynb",
        "kind": "edited",
        "cell": 6,
        "contains": "def run_k_means(",
        "rename": ["run_k_means", "run_kmeans"],
        "why": "the k-means function is renamed after it ran; the next cell still calls run_k_means",
        "expect": {"cell": 7, "exception": "NameError", "name": "run_k_means"},
    },
]


def variant_path(dest: Path, spec: dict) -> Path:
    original = dest / spec["original"]
    return original.with_name(f"{original.stem}__hidden-{spec['kind']}.ipynb")


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def _code_positions(doc: dict) -> list[int]:
    return [i for i, cell in enumerate(doc["cells"]) if cell.get("cell_type") == "code"]


def make(doc: dict, spec: dict) -> dict:
    doc = json.loads(json.dumps(doc))  # a deep copy
    code = _code_positions(doc)
    at = code[spec["cell"] - 1]
    if spec["contains"] not in _source(doc["cells"][at]):
        raise ValueError(f"{spec['original']}: code cell {spec['cell']} lacks {spec['contains']!r}")
    if spec["kind"] == "deleted":
        del doc["cells"][at]
    elif spec["kind"] == "moved":
        to = code[spec["above"] - 1]
        if spec["above_contains"] not in _source(doc["cells"][to]):
            raise ValueError(
                f"{spec['original']}: code cell {spec['above']} lacks {spec['above_contains']!r}"
            )
        cell = doc["cells"].pop(at)
        doc["cells"].insert(to if to < at else to - 1, cell)
    elif spec["kind"] == "edited":
        old, new = spec["rename"]
        text = _source(doc["cells"][at])
        edited = re.sub(rf"\b{re.escape(old)}\b", new, text)
        if edited == text:
            raise ValueError(f"{spec['original']}: code cell {spec['cell']} has no {old!r}")
        doc["cells"][at]["source"] = edited.splitlines(keepends=True)
    else:
        raise ValueError(f"unknown kind {spec['kind']!r}")
    return doc


def main() -> int:
    return write(VARIANTS, __doc__)


def write(variants: list[dict], description: str | None) -> int:
    """The command line of a variants module: write each of `variants` beside its original under DEST."""
    p = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dest", type=Path)
    args = p.parse_args()
    for spec in variants:
        doc = json.loads((args.dest / spec["original"]).read_text(encoding="utf-8"))
        out = variant_path(args.dest, spec)
        out.write_text(json.dumps(make(doc, spec), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"{spec['kind']:8s} {out.relative_to(args.dest)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
