"""The JunoBench adapter: recorded runtime information -> the rules' view; and the split's precision."""

from __future__ import annotations

import json
from typing import Any

import pytest
from support import SHARED

from crane_jupyterlab.bench.junobench_adapter import bound_anywhere, from_junobench, module_aliases
from crane_jupyterlab.checks import check_view
from crane_jupyterlab.models import Finding

CASES = SHARED / "junobench" / "cases.jsonl"

FRAME = {
    "type": "pandas.core.frame.DataFrame",
    "shape": [10, 3],
    "has_nan": True,
    "per_column": {
        "Installs": {"example_values": ["10,000+", "500+"], "num_unique": 2, "type": "categorical"},
        "Rating": {"num_unique": 5, "type": "continuous", "value_range": [1.0, 5.0]},
        "Name": {"example_values": ["a", "b"], "num_unique": 10, "type": "categorical"},
    },
}


def juno_check(source: str, record: Any, executed: list[str]) -> list[Finding]:
    return check_view(source, from_junobench(record, source, executed))


def rules(source: str, record: dict[str, Any], executed: list[str] | None = None) -> list[str]:
    return [f.rule for f in juno_check(source, record, executed or [])]


def test_view_of_a_record() -> None:
    record = {
        "df": FRAME,
        "__method__df_drop": {"type": "<class 'method'>"},
        "pd": {"type": "<class 'module'>"},
    }
    view = from_junobench(record, "df.drop(['x'], axis=1)", ["import pandas as pd"])
    df = view.get("df")
    assert df is not None and df.is_frame and df.columns == ["Installs", "Rating", "Name"] and df.has_nan
    assert view.get("df.drop") is not None  # __method__df_drop -> df.drop
    assert view.modules["pd"].module == "pandas"
    column = view.get("df['Installs']")
    assert column is not None and column.examples == ["10,000+", "500+"]


def test_incomplete_columns_are_not_trusted() -> None:
    partial = dict(FRAME, shape=[10, 30])  # 3 of 30 columns recorded
    assert rules("df['Missing']", {"df": partial}) == []
    assert rules("df['Missing']", {"df": FRAME}) == ["missing-key"]


def test_conversion_of_recorded_strings() -> None:
    record = {"df": FRAME, "pd": {"type": "<class 'module'>"}}
    assert rules("df['Installs'] = df['Installs'].astype('int')", record) == ["bad-conversion"]
    assert rules("pd.to_numeric(df['Installs'])", record, ["import pandas as pd"]) == ["bad-conversion"]
    assert rules("pd.to_numeric(df['Installs'])", record, ["import pandas as pd", "pd = 3"]) == []


def test_undefined_names_need_the_executed_cells() -> None:
    record: dict[str, Any] = {"plt": {"type": "<class 'module'>"}}
    assert rules("plt.plot(history.history['loss'])", record, ["import matplotlib.pyplot as plt"]) == [
        "undefined-name"
    ]
    # bound somewhere in an executed cell (even in a branch or a function): maybe defined
    for cell in (
        "if ok:\n    history = fit()",
        "def f():\n    global history\n    history = 1",
        "for history in runs:\n    pass",
        "from keras import *",
        "%run setup.py",
        "history = (\n  broken",
    ):  # an unparsable cell binds every word it contains
        assert rules("print(history)", record, [cell]) == [], cell


def test_bound_anywhere_and_aliases() -> None:
    names, opaque = bound_anywhere(
        ["import numpy as np\nfrom a import b as c\nwith open(f) as fh:\n    pass"]
    )
    assert {"np", "c", "fh"} <= names and not opaque
    assert bound_anywhere(["exec(code)"])[1] and bound_anywhere(["from x import *"])[1]
    assert module_aliases(["import numpy as np", "from sklearn.svm import SVC"]) == {
        "np": "numpy",
        "SVC": "sklearn.svm.SVC",
    }


def test_records_without_information_are_silent() -> None:
    assert juno_check("df['x']", None, []) == []
    assert juno_check("df['x']", {"df": "not a dict"}, []) == []


@pytest.mark.skipif(not CASES.exists(), reason="the shared JunoBench split (../shared/junobench) is not here")
def test_no_false_crash_on_the_development_split() -> None:
    cases = [json.loads(line) for line in CASES.read_text().splitlines() if line.strip()]
    wrong = [
        f"{c['id']}/{c['version']}"
        for c in cases
        if not c["crash"] and juno_check(c["target_cell"], c["runtime_info_obj"], c["executed_cells"])
    ]
    found = sum(
        1
        for c in cases
        if c["crash"] and juno_check(c["target_cell"], c["runtime_info_obj"], c["executed_cells"])
    )
    assert wrong == []
    assert found >= 10  # recall is reported by the scorer; this guards against a rule silently dying
