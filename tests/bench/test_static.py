"""The static-analyzer baseline: the module a case becomes, +RT annotations, the reading, real runs."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from crane_jupyterlab.bench.cli import main
from crane_jupyterlab.bench.static import (
    Diagnostic,
    StaticAnalyzerBackend,
    StaticVerdict,
    analyzer_available,
    annotation_type,
    build_module,
    crash_diagnostics,
    parse_pylint,
    parse_pyright,
    runtime_annotations,
)
from crane_jupyterlab.models import PredictionRequest


def request(target: str, cells: list[str] | None = None, runtime: str | None = None) -> PredictionRequest:
    return PredictionRequest(
        case_id="t/reproduced",
        executed_cells=cells or [],
        target_cell=target,
        runtime_text=runtime,
        runtime_format="junobench",
    )


def test_annotation_types() -> None:
    assert annotation_type("<class 'pandas.core.frame.DataFrame'>") == "pandas.core.frame.DataFrame"
    assert annotation_type("numpy.ndarray") == "numpy.ndarray"
    assert annotation_type("<class 'list'>") == "list"
    assert annotation_type("<class 'builtins.dict'>") == "dict"
    for skipped in (
        "<class 'module'>",
        "<class 'function'>",
        "<class 'type'>",
        "<class 'NoneType'>",
        "<class 'abc.ABCMeta'>",
        "<class '__main__.Net'>",
        "<enum 'Color'>",
        "not_a_builtin",
        None,
        3,
    ):
        assert annotation_type(skipped) is None, skipped


def test_runtime_annotations_import_privately_and_skip_what_cannot_be_declared() -> None:
    runtime = {
        "df": {"type": "<class 'pandas.core.frame.DataFrame'>", "shape": (3, 2)},
        "s": {"type": "pandas.core.series.Series"},
        "y": {"type": "<class 'pandas.core.frame.DataFrame'>"},
        "n": {"type": "<class 'int'>", "value": 3},
        "pd": {"type": "<class 'module'>"},
        "__method__df_drop": {"type": "<class 'method'>"},
        "net": {"type": "<class '__main__.Net'>"},
        "class": {"type": "<class 'int'>"},
    }
    assert runtime_annotations(runtime) == [
        "import pandas.core.frame as _crane_rt_0",
        "import pandas.core.series as _crane_rt_1",
        "df: _crane_rt_0.DataFrame",
        "s: _crane_rt_1.Series",
        "y: _crane_rt_0.DataFrame",
        "n: int",
    ]
    assert runtime_annotations(None) == []


def test_module_layout_and_target_lines() -> None:
    runtime = "{'x': {'type': \"<class 'list'>\"}}"
    case = request(
        "y = x.upper()\nprint(y)", ["%matplotlib inline\nimport json", "x = json.loads('[]')"], runtime
    )
    plain = build_module(case, with_runtime=False)
    lines = plain.text.splitlines()
    assert lines[plain.target_first - 1] == "y = x.upper()"
    assert lines[plain.target_last - 1] == "print(y)"
    assert "get_ipython().run_line_magic('matplotlib', 'inline')" in plain.text  # the kernel's reading
    assert plain.annotations == [] and "x: list" not in plain.text
    typed = build_module(case, with_runtime=True)
    assert typed.annotations == ["x: list"]
    typed_lines = typed.text.splitlines()
    assert typed_lines.index("x: list") < typed.target_first - 1
    assert typed_lines[typed.target_first - 1] == "y = x.upper()"


def test_the_reading_counts_errors_on_target_lines_only() -> None:
    module = build_module(request("a\nb\nc", ["x = 1"]), with_runtime=False)
    first = module.target_first

    def diag(line: int, code: str, severity: str = "error") -> Diagnostic:
        return Diagnostic(line, 1, severity, code, "m")

    found = [
        diag(first, "reportUndefinedVariable"),  # counts
        diag(first + 2, "reportAttributeAccessIssue"),  # counts
        diag(first - 1, "reportUndefinedVariable"),  # an executed cell: ignored
        diag(first + 3, "reportUndefinedVariable"),  # past the target: ignored
        diag(first, "reportMissingImports"),  # the analyzer's environment
        diag(first, "reportAssignmentType"),  # never raised at run time
        diag(first + 1, "reportOptionalMemberAccess", "warning"),  # not an error
    ]
    assert crash_diagnostics("pyright", module, found) == found[:2]
    pylint = [
        diag(first, "undefined-variable"),
        diag(first, "import-error"),
        diag(first, "function-redefined"),
    ]
    assert crash_diagnostics("pylint", module, pylint) == pylint[:1]


def test_reports_are_parsed_per_file(tmp_path: Path) -> None:
    files = {"0": tmp_path / "case_0000.py", "1": tmp_path / "case_0001.py"}
    pyright = {
        "generalDiagnostics": [
            {
                "file": str(files["1"]),
                "severity": "error",
                "message": '"z" is not defined',
                "range": {"start": {"line": 4, "character": 2}},
                "rule": "reportUndefinedVariable",
            },
            {"file": "/elsewhere.py", "severity": "error", "message": "x", "range": {"start": {"line": 0}}},
        ]
    }
    found = parse_pyright(json.dumps(pyright), files)
    assert found["0"] == [] and found["1"] == [
        Diagnostic(5, 3, "error", "reportUndefinedVariable", '"z" is not defined')
    ]
    pylint = [
        {
            "path": str(files["0"]),
            "line": 7,
            "column": 0,
            "type": "error",
            "symbol": "no-member",
            "message": "m",
        }
    ]
    assert parse_pylint(json.dumps(pylint), files)["0"] == [Diagnostic(7, 1, "error", "no-member", "m")]
    assert parse_pylint("", files) == {"0": [], "1": []}


def run_batch(tool: str, requests: list[PredictionRequest], runtime: bool) -> list[StaticVerdict]:
    backend = StaticAnalyzerBackend(tool, runtime=runtime)  # type: ignore[arg-type]
    results = asyncio.run(backend.predict_many(requests))
    assert all(isinstance(r, StaticVerdict) for r in results), results
    return results  # type: ignore[return-value]


needs_pyright = pytest.mark.skipif(
    not analyzer_available("pyright"), reason="pyright (and node) not installed"
)
needs_pylint = pytest.mark.skipif(not analyzer_available("pylint"), reason="pylint not installed")


@needs_pyright
def test_pyright_reads_crashes_in_the_target_only_and_uses_runtime_types() -> None:
    cells = ["import json\nbroken = undefined_in_an_executed_cell", "x = json.loads('[1]')"]
    runtime = "{'x': {'type': \"<class 'list'>\"}}"
    cases = [
        request("print(missing_name)", cells),  # NameError
        request("print(x)", cells),  # runs
        request("x.upper()", cells, runtime),  # x is Any without runtime types; a list with them
    ]
    plain = run_batch("pyright", cases, runtime=False)
    assert [v.detection for v in plain] == [True, False, False]
    assert "line 1 of the target cell [reportUndefinedVariable]" in plain[0].reasoning
    assert plain[0].diagnostics[0]["line"] == 1 and plain[0].model.startswith("pyright ")
    assert plain[1].ignored >= 1  # the executed cell's error was seen and not counted
    typed = run_batch("pyright", cases[2:], runtime=True)
    assert typed[0].detection and typed[0].annotations == 1
    assert '"upper"' in typed[0].reasoning


@needs_pylint
def test_pylint_reads_crashes_in_the_target_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = tmp_path / "cases.jsonl"
    rows: list[dict[str, Any]] = [
        {
            "id": "t_1",
            "version": version,
            "crash": version == "reproduced",
            "group": "other",
            "root_cause": "NB specific",
            "executed_cells": ["import math", "value = math.sqrt(4)"],
            "target_cell": target,
            "runtime_info": "{'value': {'type': \"<class 'float'>\", 'value': 2.0}}",
        }
        for version, target in (("reproduced", "print(valu)"), ("fixed", "print(value)"))
    ]
    cases.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "out.jsonl"
    code = main(
        ["junobench", "--cases", str(cases), "--backend", "pylint", "--out", str(out), "--json", "--quiet"]
    )
    printed = capsys.readouterr().out
    assert code == 0, printed
    figures = json.loads(printed.strip().splitlines()[-1])
    assert (figures["tp"], figures["tn"], figures["fp"], figures["fn"]) == (1, 1, 0, 0)
    assert "paper, all 222 cases" in printed and "pylint accuracy 56.3 %" in printed
    assert "runtime facts shown (SRV): S 0 of 0, R 2 of 2, V 2 of 2 (2 cases)" in printed
    written = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    crash = next(r for r in written if r["version"] == "reproduced")
    assert crash["prediction"]["diagnostics"][0]["code"] == "undefined-variable"
    assert crash["config"]["backend"] == "pylint" and crash["config"]["version"]
