#!/usr/bin/env python3
"""Hidden-state variants of the run-from-the-top blind corpus (suites/notebooks/from-top-blind.json), written
before any measurement.

    python3 suites/notebooks/hidden_state_blind.py DEST

DEST is where scripts/notebook_corpus.py wrote from-top-blind.json.

The same three changes as hidden_state_dev.py, each made in a live kernel *after* running the notebook top to
bottom, without running anything again:

- deleted: a cell that defines names is deleted after it ran;
- moved:   a cell is moved above a cell whose names it reads;
- edited:  a cell is edited after it ran, renaming a name it defines (every whole-word occurrence in that
  cell).

The live kernel ("the original run top to bottom, then the change") still holds every name the original
defined. The truth is a real run of the variant from the top in a fresh kernel. `expect` is what we
predicted, blind, before measuring anything on these notebooks: the first cell of the variant that fails from
the top (its number among the variant's code cells, counted from 1) and the name its NameError lacks.

Variants are written beside their originals as STEM__hidden-KIND.ipynb by hidden_state_dev.py's own `make`
(cells addressed by their number among the original's code cells, each change checking the cell's text first).
Deterministic; no notebook content is kept in this file beyond the short snippets that identify a cell."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hidden_state_dev import make, variant_path, write

__all__ = ["VARIANTS", "make", "variant_path"]

VARIANTS = [
    {
        "original": "from-top-blind/dataflowr/Module16/16_batchnorm_simple.ipynb",
        "kind": "deleted",
        "cell": 14,
        "contains": "def create_model(with_batchnorm",
        "why": "the cell that defines create_model is deleted after it ran; the weight-scale experiment "
        "below calls it, after the first 12-epoch training",
        "expect": {"cell": 14, "exception": "NameError", "name": "create_model"},
    },
    {
        "original": "from-top-blind/krohn/SGD-from-scratch.ipynb",
        "kind": "deleted",
        "cell": 15,
        "contains": "def mse(my_yhat, my_y)",
        "why": "the cell that defines mse is deleted after it ran; the next cell computes the cost with it",
        "expect": {"cell": 15, "exception": "NameError", "name": "mse"},
    },
    {
        "original": "from-top-blind/dataflowr/Module9/Normalizing_flows_sol.ipynb",
        "kind": "moved",
        "cell": 13,
        "above": 12,
        "contains": "p.reshape(x1.shape)",
        "above_contains": "p = np.exp(flow.log_prob(",
        "why": "the density plot is moved above the cell that computes the density p on the grid, after the "
        "5,001-step training loop",
        "expect": {"cell": 12, "exception": "NameError", "name": "p"},
    },
    {
        "original": "from-top-blind/rhiever/Example Machine Learning Notebook.ipynb",
        "kind": "moved",
        "cell": 30,
        "above": 29,
        "contains": "grid_search.cv_results_['mean_test_score']",
        "above_contains": "grid_search = GridSearchCV(decision_tree_classifier,",
        "why": "the heatmap of the first grid search is moved above the cell that runs it (grid_search), "
        "after the pairplots and the 1,000 decision trees",
        "expect": {"cell": 29, "exception": "NameError", "name": "grid_search"},
    },
    {
        "original": "from-top-blind/micrograd/demo.ipynb",
        "kind": "edited",
        "cell": 6,
        "contains": "def loss(batch_size=None):",
        "rename": ["loss", "compute_loss"],
        "why": "the loss function is renamed after it ran; the 100-step training loop below still calls "
        "loss()",
        "expect": {"cell": 7, "exception": "NameError", "name": "loss"},
    },
    {
        "original": "from-top-blind/nnfs/nn-from-scratch.ipynb",
        "kind": "edited",
        "cell": 6,
        "contains": "epsilon = 0.01",
        "rename": ["epsilon", "learning_rate"],
        "why": "the hyperparameter cell is edited after it ran, epsilon renamed learning_rate; build_model "
        "(defined below) still reads epsilon when the next cells call it",
        "expect": {"cell": 10, "exception": "NameError", "name": "epsilon"},
    },
]


def main() -> int:
    return write(VARIANTS, __doc__)


if __name__ == "__main__":
    sys.exit(main())
