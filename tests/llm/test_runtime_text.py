"""The runtime-text renderer: one line per object, S/R/V filtering, undefined names, versions."""

from __future__ import annotations

from typing import Any

import pytest

from crane_jupyterlab.kernel import probe
from crane_jupyterlab.runtime_text import render


def fact(cat: str, key: str, value: Any) -> dict[str, Any]:
    return {"cat": cat, "key": key, "value": value}


def entry(expr: str, type_: str, *facts: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "expr": expr,
        "type": type_,
        "facts": list(facts),
        "children": [],
        "missing": False,
        "error": None,
    } | extra


FRAME = entry(
    "orders",
    "pandas.DataFrame",
    fact("S", "shape", [300, 2]),
    fact("S", "columns", ["customer_id", " amount"]),
    fact("R", "dtypes", {"int64": 1, "float64": 1}),
    children=[
        entry(
            "orders['customer_id']",
            "pandas.Series",
            fact("R", "dtype", "int64"),
            fact("V", "nan", 0),
            fact("V", "min", 1),
            fact("V", "max", 60),
            fact("V", "unique", 60),
            fact("V", "kind", "many-valued"),
            named=True,
        ),
        entry(
            "orders[' amount']",
            "pandas.Series",
            fact("R", "dtype", "float64"),
            fact("V", "nan", 3),
            fact("V", "min", 2.1),
            fact("V", "max", 310.5),
            fact("V", "kind", "continuous"),
        ),
        entry("orders['segment']", "missing column", fact("S", "close", ["Segment"]), missing=True),
    ],
)

RESULT: dict[str, Any] = {
    "probe_version": 1,
    "syntax_error": None,
    "undefined": ["clean_text"],
    "modules": [
        {"name": "np", "module": "numpy", "version": "2.4.6"},
        {"name": "torch", "module": "torch", "version": "2.13.0", "facts": [fact("V", "grad_enabled", True)]},
    ],
    "objects": [
        FRAME,
        entry("X", "torch.Tensor", fact("S", "shape", [64, 1, 28, 28]), fact("R", "dtype", "float64")),
        entry("model.predict_classes", "keras.Sequential", fact("S", "close", ["predict"]), missing=True),
        entry("features", "list", fact("S", "len", 2), fact("V", "items", ["temp", "wind"])),
    ],
    "docs": [],
    "history": [],
    "budget_exhausted": False,
    "error": None,
}


def test_full_rendering_is_one_line_per_object() -> None:
    text = render(RESULT)
    assert text.splitlines() == [
        "undefined: clean_text (NameError if read)",
        "libraries: numpy 2.4.6, torch 2.13.0 (grad enabled)",
        "orders: DataFrame (300, 2); columns: customer_id int64 nan 0 [1..60] 60 unique, "
        "' amount' float64 nan 3 [2.1..310.5], segment MISSING (close: 'Segment')",
        "X: Tensor (64, 1, 28, 28) float64",
        "model.predict_classes: MISSING (no such attribute/key on Sequential); close: predict",
        "features: list = [temp, wind]",
    ]


def test_rendering_is_deterministic() -> None:
    assert render(RESULT) == render(RESULT)


@pytest.mark.parametrize(
    ("categories", "present", "absent"),
    [
        (
            "S",
            ["(300, 2)", "(64, 1, 28, 28)", "MISSING", "undefined"],
            ["int64", "float64", "[1..60]", "nan 3"],
        ),
        ("R", ["int64", "float64", "2.13.0"], ["(300, 2)", "[1..60]", "MISSING", "undefined", "grad"]),
        ("V", ["[1..60]", "nan 3", "grad enabled", "temp"], ["(300, 2)", "int64", "MISSING", "2.4.6"]),
        ("", ["orders: DataFrame", "X: Tensor"], ["(300, 2)", "int64", "[1..60]", "MISSING", "undefined"]),
    ],
)
def test_disabled_categories_drop_their_facts(categories: str, present: list[str], absent: list[str]) -> None:
    text = render(RESULT, categories)
    for token in present:
        assert token in text, (categories, token, text)
    for token in absent:
        assert token not in text, (categories, token, text)


def test_syntax_error_renders_alone() -> None:
    text = render({"syntax_error": {"line": 2, "col": 5, "msg": "invalid syntax"}, "objects": [FRAME]})
    assert text == "syntax error: line 2 col 5: invalid syntax"


def test_wide_frame_lists_names_dtypes_and_nan_columns_only() -> None:
    cols = [f"c{i}" for i in range(50)]
    wide = entry(
        "df",
        "pandas.DataFrame",
        fact("S", "shape", [10, 50]),
        fact("S", "columns", cols),
        fact("R", "dtypes", {"float64": 50}),
        fact("V", "nan_columns", {"c7": 2}),
        children=[entry(f"df['{c}']", "pandas.Series", fact("R", "dtype", "float64")) for c in cols[:20]],
    )
    text = render({"objects": [wide]})
    assert "c39 (+10 more)" in text and "float64 x50" in text and "nan: c7 2" in text
    assert "c40" not in text


def test_bad_input_is_a_clear_error() -> None:
    with pytest.raises(TypeError, match="probe's result dict"):
        render("not a result")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="subset of 'SRV'"):
        render(RESULT, "SX")


def test_tolerates_partial_results() -> None:
    assert render({}) == ""
    assert render({"objects": [{"expr": "x"}]}) == "x: ?"


def test_renders_a_real_probe_result_compactly() -> None:
    pd = pytest.importorskip("pandas")
    orders = pd.DataFrame({"order_id": range(1, 301), "customer_id": [i % 60 + 1 for i in range(300)]})
    customers = pd.DataFrame({"customer_id": [str(i) for i in range(1, 61)], "segment": ["a", "b"] * 30})
    ns = {"orders": orders, "customers": customers, "pd": pd}
    text = render(probe.run('m = orders.merge(customers, on="customer_id")\nclean_text(m)', {}, ns))
    lines = text.splitlines()
    assert lines[0] == "undefined: clean_text (NameError if read)"
    assert lines[1].startswith("libraries: pandas ")
    assert lines[2].startswith("orders: DataFrame (300, 2); columns: order_id int64 [1..300]")
    assert "customer_id int64 nan 0 [1..60] 60 unique" in lines[2]
    assert lines[3].startswith("customers: DataFrame (60, 2); columns: customer_id str nan 0 60 unique")
    assert len(text) / 4 < 150


def test_named_index_levels_are_shown_and_default_ones_are_not() -> None:
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"PassengerId": [1, 2], "Age": [22.0, 38.0]})
    text = render(probe.run("df['PassengerId']", {}, {"df": frame.set_index("PassengerId")}))
    assert "df: DataFrame (2, 1)" in text and "index: PassengerId" in text
    assert "df['PassengerId']: MISSING" in text or "PassengerId MISSING" in text
    assert "index:" not in render(probe.run("df['Age']", {}, {"df": frame}))
