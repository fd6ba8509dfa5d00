#!/usr/bin/env python3
"""Writes the chain suite: edits of an early cell of a real notebook, each with the split it
belongs to.

    python suites/chain/make.py [--corpus DIR]     # (re)write cases.jsonl beside this file

A case names a notebook of `notebooks.json` (its `dest` in a corpus that scripts/notebook_corpus.py
materialised), the position of an early code cell in it (markdown cells count, as in `crane-bench
notebooks`) and an edit of that cell as (old substring -> new substring): the old text occurs exactly
once in the cell. No notebook content is kept beyond those substrings. With --corpus the edits are
checked against the materialised notebooks (the cell is a code cell, the old text occurs once in it).

`guess` is what the author expected, written before anything ran: "breaks" (a cell below should then
crash) or "runs". It is not the truth: `crane-bench chain` runs the edited notebook for real.

The split (by case, stratified by library, with suites/pairs.py's rule and the seed below): in each
library the sorted ids are shuffled with random.Random(f"{SEED}:{library}"); the first ceil(n/2) go to
dev for libraries in even alphabetical position, floor(n/2) for odd ones; the rest are unseen.
"""

# ruff: noqa: E501 - the edits are data, one line each
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from pairs import split  # noqa: E402 - beside the suites, not a package

SEED = "20261127-chain"

# Short names of the notebooks (their `dest` in notebooks.json).
NB = {
    "ck1": "chain/cookbook/ch1-reading-csv.ipynb",
    "ck4": "chain/cookbook/ch4-groupby-weekday.ipynb",
    "ck6": "chain/cookbook/ch6-string-operations.ipynb",
    "ck8": "chain/cookbook/ch8-timestamps.ipynb",
    "pt1": "chain/pytorchdl/01_pytorch_workflow.ipynb",
    "pt2": "chain/pytorchdl/02_pytorch_classification.ipynb",
    "at4": "chain/atcold/04-spiral_classification.ipynb",
    "at5": "chain/atcold/05-regression.ipynb",
    "zwf": "chain/ztm/section-2/scikit-learn-workflow-example.ipynb",
    "zpd": "chain/ztm/section-2/pandas-exercises-solutions.ipynb",
}

# (id, library, notebook, cell, kind, old, new, guess)
# fmt: off
EDITS = [
    # jvns/pandas-cookbook
    ("ck1_columns_lowercased", "pandas", "ck1", 6, "columns renamed", "fixed_df[:3]", "fixed_df = fixed_df.rename(columns=str.lower)\nfixed_df[:3]", "breaks"),
    ("ck1_no_date_index", "pandas", "ck1", 6, "parameter changed", ", index_col='Date')", ")", "runs"),
    ("ck4_weekdays_only", "pandas", "ck4", 6, "rows filtered", "bikes[['Berri 1']].copy()", "bikes[['Berri 1']][bikes.index.weekday < 5].copy()", "breaks"),
    ("ck4_second_counter", "pandas", "ck4", 6, "column added", "bikes[['Berri 1']]", "bikes[['Berri 1', 'Maisonneuve 1']]", "runs"),
    ("ck4_frame_renamed", "pandas", "ck4", 6, "variable renamed", "berri_bikes =", "berri =", "breaks"),
    ("ck4_weekday_names", "pandas", "ck4", 15, "dtype changed", "berri_bikes.index.weekday", "berri_bikes.index.day_name()", "runs"),
    ("ck6_no_time_index", "pandas", "ck6", 2, "parameter changed", ", index_col='Date/Time'", "", "breaks"),
    ("ck6_snow_any_case", "pandas", "ck6", 5, "parameter changed", "str.contains('Snow')", "str.contains('snow', case=False)", "runs"),
    ("ck8_package_column", "pandas", "ck8", 3, "column renamed", "'package-name'", "'package'", "breaks"),
    ("ck8_times_as_float", "pandas", "ck8", 7, "dtype changed", "popcon['atime'].astype(int)", "popcon['atime'].astype(float)", "runs"),
    ("ck8_recent_only", "pandas", "ck8", 15, "rows filtered", "'1970-01-01'", "'2008-01-01'", "runs"),
    # mrdbourke/zero-to-mastery-ml, pandas exercises
    ("zpd_fewer_colours", "pandas", "zpd", 2, "rows filtered", '["Blue", "Red", "White"]', '["Blue", "Red"]', "runs"),
    ("zpd_odometer_renamed", "pandas", "zpd", 6, "column renamed", 'pd.read_csv("../data/car-sales.csv")', 'pd.read_csv("../data/car-sales.csv").rename(columns={"Odometer (KM)": "Odometer"})', "breaks"),
    ("zpd_price_literal", "pandas", "zpd", 31, "parameter changed", "regex=True", "regex=False", "breaks"),
    ("zpd_make_upper", "pandas", "zpd", 38, "parameter changed", ".str.lower()", ".str.upper()", "runs"),
    ("zpd_missing_lowercased", "pandas", "zpd", 41, "columns renamed", 'pd.read_csv("../data/car-sales-missing-data.csv")', 'pd.read_csv("../data/car-sales-missing-data.csv").rename(columns=str.lower)', "breaks"),
    # mrdbourke/zero-to-mastery-ml, scikit-learn workflow
    ("zwf_chol_dropped", "sklearn", "zwf", 5, "feature dropped", 'heart_disease.drop("target", axis=1)', 'heart_disease.drop(["target", "chol"], axis=1)', "runs"),
    ("zwf_seeded_split", "sklearn", "zwf", 6, "parameter changed", "train_test_split(X, y)", "train_test_split(X, y, random_state=42)", "runs"),
    ("zwf_fewer_trees", "sklearn", "zwf", 8, "parameter changed", "RandomForestClassifier()", "RandomForestClassifier(n_estimators=50)", "runs"),
    ("zwf_model_renamed", "sklearn", "zwf", 8, "variable renamed", "model = RandomForestClassifier()", "clf = RandomForestClassifier()", "breaks"),
    # mrdbourke/pytorch-deep-learning
    ("pt1_coarser_step", "torch", "pt1", 8, "parameter changed", "step = 0.02", "step = 0.05", "runs"),
    ("pt1_flat_inputs", "torch", "pt1", 8, "shape changed", ".unsqueeze(dim=1)", "", "runs"),
    ("pt1_smaller_lr", "torch", "pt1", 35, "parameter changed", "lr=0.01", "lr=0.001", "runs"),
    ("pt1_flat_inputs_v2", "torch", "pt1", 67, "shape changed", ".unsqueeze(dim=1)", "", "breaks"),
    ("pt1_two_outputs", "torch", "pt1", 73, "layer made wider", "out_features=1)", "out_features=2)", "breaks"),
    ("pt2_fewer_samples", "torch", "pt2", 6, "parameter changed", "n_samples = 1000", "n_samples = 300", "runs"),
    ("pt2_integer_labels", "torch", "pt2", 22, "dtype changed", "y = torch.from_numpy(y).type(torch.float)", "y = torch.from_numpy(y).type(torch.long)", "breaks"),
    ("pt2_hidden_wider_once", "torch", "pt2", 31, "layer made wider", "nn.Linear(in_features=2, out_features=5)", "nn.Linear(in_features=2, out_features=16)", "breaks"),
    ("pt2_hidden_wider_both", "torch", "pt2", 58, "layer made wider", "out_features=10)\n        self.layer_2 = nn.Linear(in_features=10,", "out_features=32)\n        self.layer_2 = nn.Linear(in_features=32,", "runs"),
    # Atcold/pytorch-Deep-Learning
    ("at4_wider_hidden", "torch", "at4", 5, "layer made wider", "H = 100", "H = 256", "runs"),
    ("at4_float_labels", "torch", "at4", 6, "dtype changed", "y = torch.zeros(N * C, dtype=torch.long)", "y = torch.zeros(N * C, dtype=torch.float)", "breaks"),
    ("at4_larger_lr", "torch", "at4", 9, "parameter changed", "learning_rate = 1e-3", "learning_rate = 1e-2", "runs"),
    ("at5_flat_inputs", "torch", "at5", 6, "shape changed", "X = torch.unsqueeze(torch.linspace(-1, 1, 100), dim=1)", "X = torch.linspace(-1, 1, 100)", "breaks"),
    ("at5_two_dimensions", "torch", "at5", 5, "parameter changed", "D = 1  # dimensions", "D = 2  # dimensions", "breaks"),
    ("at5_lr_renamed", "torch", "at5", 10, "variable renamed", "learning_rate = 1e-3", "lr = 1e-3", "breaks"),
    ("at5_fewer_networks", "torch", "at5", 16, "parameter changed", "n_networks = 10", "n_networks = 4", "runs"),
]
# fmt: on


def cases() -> list[dict]:
    out = []
    for id_, library, nb, cell, kind, old, new, guess in EDITS:
        out.append({"id": id_, "library": library, "notebook": NB[nb], "cell": cell, "kind": kind,
                    "edit": {"old": old, "new": new}, "guess": guess})  # fmt: skip
    ids = [c["id"] for c in out]
    assert len(ids) == len(set(ids)), "duplicate ids"
    return out


def check(rows: list[dict], corpus: Path) -> list[str]:
    """Problems with the edits against the materialised notebooks (empty: none)."""
    problems = []
    for row in rows:
        nb = json.loads((corpus / row["notebook"]).read_text(encoding="utf-8"))
        cell = nb["cells"][row["cell"]]
        source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
        if cell.get("cell_type") != "code":
            problems.append(f"{row['id']}: cell {row['cell']} is not a code cell")
        elif source.count(row["edit"]["old"]) != 1:
            problems.append(f"{row['id']}: the old text occurs {source.count(row['edit']['old'])} times")
    return problems


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument(
        "--corpus", type=Path, help="a corpus materialised from notebooks.json, to check the edits"
    )
    args = p.parse_args()
    rows = cases()
    if args.corpus is not None:
        problems = check(rows, args.corpus)
        if problems:
            print("\n".join(problems), file=sys.stderr)
            return 1
    half = split(rows, SEED)
    for row in rows:
        row["split"] = half[row["id"]]
    (HERE / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    for name in ("dev", "unseen"):
        print(name, sum(1 for r in rows if r["split"] == name), "cases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
