"""JunoBench runtime information: parsed back exactly, every fact tagged S/R/V, filtered by category."""

from __future__ import annotations

import json
from typing import Any

import pytest
from support import SHARED

from crane_jupyterlab.bench import runtime_facts as rf
from crane_jupyterlab.bench.junocases import make_request

CASES = SHARED / "junobench" / "cases.jsonl"
needs_data = pytest.mark.skipif(
    not CASES.is_file(), reason=f"JunoBench data not found at {CASES} (shared/ is not in the repository)"
)

# A dump as the extractor prints it, with the reprs that are not Python literals.
DUMP = """{'__method__df_drop': {'type': "<class 'method'>"},
 'df': {'dtypes': ['float64', 'object'],
        'execution_cell_source': {'cellno': 3, 'lineno': 1},
        'has_nan': True,
        'per_column': {'age': {'dtype': 'float64',
                               'num_unique': 40,
                               'type': 'continuous',
                               'value_range': (1.0, 80.0)},
                       'city': {'num_unique': 2,
                                'type': 'categorical',
                                'unique_values': ['Oslo', 'Rome']}},
        'shape': (100, 2),
        'type': "<class 'pandas.core.frame.DataFrame'>"},
 'loader': {'batch_size': 8,
            'dataset': {'batch_shapes': {'batch[0]': torch.Size([8, 3]),
                                         'batch[1]': torch.Size([8])},
                        'sample_shapes': defaultdict(<class 'set'>,
                                                     {'input': {torch.Size([3])}})},
            'type': "<class 'torch.utils.data.dataloader.DataLoader'>"},
 'model': {'class_name': 'SVC',
           'fitted_attributes': {'n_features_in_': 2, 'n_outputs_': None},
           'is_fitted': True,
           'type': "<class 'sklearn.svm._classes.SVC'>"},
 'params': {'length': 1,
            'preview': [{'key': 'C',
                         'key_type': "<class 'str'>",
                         'value_repr': '1.0',
                         'value_type': "<class 'float'>"}],
            'type': "<class 'dict'>"},
 'scale': {'type': "<class 'float'>", 'value': nan},
 'trainer': {'callbacks': [<keras.src.callbacks.EarlyStopping object at 0x7f00>]}}"""


def categories_of(runtime: dict[str, Any]) -> dict[tuple[str, ...], str]:
    return {(f.name, *f.path): f.category for f in rf.facts(runtime)}


def test_dump_parses_and_prints_back_byte_for_byte() -> None:
    runtime = rf.parse_runtime_info(DUMP)
    assert rf.render(runtime) == DUMP
    assert runtime["df"]["shape"] == (100, 2)
    assert repr(runtime["loader"]["dataset"]["batch_shapes"]["batch[0]"]) == "torch.Size([8, 3])"
    assert isinstance(runtime["scale"]["value"], rf.Opaque)
    assert runtime["trainer"]["callbacks"][0] == rf.Opaque(
        "<keras.src.callbacks.EarlyStopping object at 0x7f00>"
    )


def test_not_a_dump_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="does not parse"):
        rf.parse_runtime_info("{'a': ")
    with pytest.raises(ValueError, match="not a dict"):
        rf.parse_runtime_info("[1, 2]")


def test_every_fact_gets_its_category() -> None:
    tags = categories_of(rf.parse_runtime_info(DUMP))
    expected = {
        ("__method__df_drop", "type"): "R",
        ("df", "dtypes"): "R",
        ("df", "has_nan"): "V",
        ("df", "per_column", "age"): "S",  # the column list
        ("df", "per_column", "age", "dtype"): "R",
        ("df", "per_column", "age", "num_unique"): "V",
        ("df", "per_column", "age", "type"): "V",  # a column's value kind
        ("df", "per_column", "age", "value_range"): "V",
        ("df", "per_column", "city", "unique_values"): "V",
        ("df", "shape"): "S",
        ("df", "type"): "R",
        ("loader", "batch_size"): "S",
        ("loader", "dataset", "batch_shapes", "batch[0]"): "S",
        ("loader", "dataset", "sample_shapes"): "S",
        ("model", "class_name"): "R",
        ("model", "fitted_attributes", "n_features_in_"): "S",
        ("model", "is_fitted"): "V",
        ("params", "length"): "S",
        ("params", "preview", "0", "key"): "S",
        ("params", "preview", "0", "key_type"): "R",
        ("params", "preview", "0", "value_repr"): "V",
        ("params", "preview", "0", "value_type"): "R",
        ("scale", "value"): "V",
    }
    for path, category in expected.items():
        assert tags[path] == category, path
    assert not any("execution_cell_source" in path for path in tags)  # provenance is no fact
    unknown = [f for f in rf.facts(rf.parse_runtime_info(DUMP)) if not f.known]
    assert [(f.name, f.path) for f in unknown] == [("trainer", ("callbacks",))]


def test_filter_keeps_only_the_chosen_categories() -> None:
    runtime = rf.parse_runtime_info(DUMP)
    only_s = rf.filter_runtime(runtime, "S")
    assert only_s["df"]["shape"] == (100, 2)
    assert only_s["df"]["per_column"] == {"age": {}, "city": {}}  # the column list, no statistics
    assert "has_nan" not in only_s["df"] and "type" not in only_s["df"]
    assert only_s["df"]["execution_cell_source"] == {"cellno": 3, "lineno": 1}
    assert only_s["__method__df_drop"] == {}  # the name stays; its only fact (R) goes
    assert only_s["params"]["preview"] == [{"key": "C"}]

    only_v = rf.filter_runtime(runtime, "V")
    assert only_v["df"]["per_column"]["city"] == {
        "num_unique": 2,
        "type": "categorical",
        "unique_values": ["Oslo", "Rome"],
    }
    assert "shape" not in only_v["df"] and "dtype" not in only_v["df"]["per_column"]["age"]
    assert only_v["model"] == {"is_fitted": True}

    only_r = rf.filter_runtime(runtime, "R")
    assert only_r["model"] == {"class_name": "SVC", "type": "<class 'sklearn.svm._classes.SVC'>"}
    assert only_r["df"]["per_column"] == {"age": {"dtype": "float64"}}

    assert rf.filter_runtime(runtime, "RVS") == runtime
    nothing = rf.filter_runtime(runtime, "")
    assert set(nothing) == set(runtime) and rf.facts(nothing) == []


def test_counts_and_categories_argument() -> None:
    tally = rf.count([rf.parse_runtime_info(DUMP), None, {}])
    assert sum(tally.values()) == len(rf.facts(rf.parse_runtime_info(DUMP)))
    assert set(tally) == {"S", "R", "V"}
    assert rf.check_categories("VS") == "SV"
    with pytest.raises(ValueError, match="subset of S, R, V"):
        rf.check_categories("SX")


@needs_data
def test_every_junobench_case_round_trips_and_every_fact_is_named() -> None:
    cases = [json.loads(line) for line in CASES.read_text(encoding="utf-8").splitlines() if line.strip()]
    for case in cases:
        runtime = rf.case_runtime(case)
        assert runtime is not None
        assert rf.render(runtime) == case["runtime_info"], case["id"]
        unknown = [f for f in rf.facts(runtime) if not f.known]
        assert unknown == [], (case["id"], unknown[:3])
    tally = rf.count(rf.case_runtime(case) for case in cases)
    assert all(tally[c] > 100 for c in "SRV")


@needs_data
def test_requests_carry_the_filtered_facts() -> None:
    case = next(
        json.loads(line)
        for line in CASES.read_text(encoding="utf-8").splitlines()
        if '"per_column"' in line and '"runtime_info_obj": {' in line
    )
    full = make_request(case, "+RT")
    assert full.runtime_text == case["runtime_info"] and full.runtime == case["runtime_info_obj"]
    structure = make_request(case, "+RT", "S")
    assert structure.runtime_text != case["runtime_info"]
    assert "'has_nan'" not in (structure.runtime_text or "") and "'shape'" in (structure.runtime_text or "")
    assert structure.runtime is not None
    assert all("has_nan" not in record for record in structure.runtime.values())
    assert make_request(case, "-RT", "S").runtime_text is None
