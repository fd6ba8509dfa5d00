"""`crane-bench verify`: suite cases run in real kernels, their outcomes and decisive facts checked; the
crane suite's own cases still verify with the installed libraries."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from crane_jupyterlab.bench import cli
from crane_jupyterlab.bench.facts import check_fact, check_facts

SUITE = Path(__file__).resolve().parents[2] / "suites" / "crane"
REQUIRED = {
    "id", "version", "library", "root_cause", "data_dependent", "executed_cells", "target_cell", "crash",
    "exception", "message", "diagnosis", "decisive_facts",
}  # fmt: skip
ROOT_CAUSES = {"data_confusion", "api_misuse", "implementation_error", "execution_order"}


def case(
    case_id: str,
    cells: list[str],
    target: str,
    *,
    crash: bool,
    exception: str | None = None,
    facts: list[str] | None = None,
    version: str = "buggy",
) -> dict[str, Any]:
    return {
        "id": case_id,
        "version": version,
        "executed_cells": cells,
        "target_cell": target,
        "crash": crash,
        "exception": exception,
        "message": None,
        "decisive_facts": facts or [],
    }


def write_cases(path: Path, *cases: dict[str, Any]) -> Path:
    path.write_text("".join(json.dumps(c) + "\n" for c in cases))
    return path


def verify(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = cli.main(["verify", *args])
    return code, capsys.readouterr().out


# --------------------------------------------------------------------------------------------------
# Facts, in-process (the same module runs inside the kernel)
# --------------------------------------------------------------------------------------------------


class Size(tuple):  # type: ignore[type-arg]
    """Stands for torch.Size / TensorShape, which the checker compares as tuples."""

    def __str__(self) -> str:
        return f"Size({list(self)})"


class HostileEq:
    def __eq__(self, other: object) -> bool:
        raise RuntimeError("no comparing me")

    __hash__ = object.__hash__

    def __str__(self) -> str:
        return "hostile"


@pytest.mark.parametrize(
    ("fact", "holds"),
    [
        ("x.shape = (3, 4)", True),
        ("x.shape = (4, 3)", False),
        ("x.dtype = float64", True),
        ("names = ['a', 'b']", True),
        ("pair = [1, 2]", True),  # a tuple equals its list literal
        ("size = (2, 5)", True),
        ("scalar = 2.5", True),
        ("scalar = 2.50001", False),
        ("x = [0, 0]", False),  # an array is compared through its str(), never element-wise
        ("hostile = 1", False),
        ("len is defined", True),
        ("names is defined", True),
        ("nothing_here is undefined", True),
        ("names is undefined", False),
        ("d['missing'] = 1", False),
    ],
)
def test_fact_forms(fact: str, holds: bool) -> None:
    ns = {
        "x": np.zeros((3, 4)),
        "names": ["a", "b"],
        "pair": (1, 2),
        "size": Size((2, 5)),
        "scalar": np.float64(2.5),
        "hostile": HostileEq(),
        "d": {},
    }
    assert check_fact(fact, ns)[0] is holds


def test_fact_observations_are_reported() -> None:
    ns: dict[str, Any] = {"d": {}, "x": np.zeros((3, 4))}
    assert check_fact("x.shape = (4, 3)", ns) == (False, "(3, 4)")
    assert check_fact("d['a'] = 1", ns) == (False, "<KeyError: 'a'>")
    assert check_fact("x has three rows", ns)[0] is None
    assert json.loads(check_facts(ns, ["x.ndim = 2"])) == [["x.ndim = 2", True, "2"]]


# --------------------------------------------------------------------------------------------------
# The command, on cases written here (each runs in its own real kernel)
# --------------------------------------------------------------------------------------------------


def test_outcomes_are_checked_and_wrong_cases_fail(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = write_cases(
        tmp_path / "cases.jsonl",
        case(
            "ok_crash",
            ["import numpy as np\nx = np.zeros((3, 4))"],
            "x[:, 5]",
            crash=True,
            exception="IndexError",
        ),
        case(
            "ok_crash", ["import numpy as np\nx = np.zeros((3, 6))"], "x[:, 5]", crash=False, version="fixed"
        ),
        # Displaying the trailing expression is part of running a cell.
        case(
            "ok_display",
            ["class Bad:\n    def __repr__(self):\n        raise ValueError('no repr')"],
            "Bad()",
            crash=True,
            exception="ValueError",
        ),
        # A figure that fails to draw after the cell (inline backend) shows a traceback: a crash.
        case(
            "ok_draw",
            ["import matplotlib.pyplot as plt"],
            "fig, ax = plt.subplots()\nax.set_title('$\\\\frac{$')",
            crash=True,
            exception="ValueError",
        ),
        # Cases that are wrong and must fail verification:
        case("bad_claims_crash", ["x = [1, 2, 3]"], "x[2]", crash=True, exception="IndexError"),
        case("bad_exception", [], "int('a')", crash=True, exception="TypeError"),
        case("bad_setup", ["1 / 0"], "print('never')", crash=False),
    )
    out_json = tmp_path / "results.json"
    code, out = verify(capsys, "--cases", str(cases), "--json", str(out_json))

    assert code == 1
    assert out.strip().splitlines()[-1] == "4 passed, 3 failed"
    results = {(r["id"], r["version"]): r for r in json.loads(out_json.read_text())}
    assert {key[0] for key, r in results.items() if not r["passed"]} == {
        "bad_claims_crash",
        "bad_exception",
        "bad_setup",
    }
    assert results["bad_claims_crash", "buggy"]["observed"] == "no crash"
    assert results["bad_exception", "buggy"]["observed"] == "ValueError"
    assert results["bad_setup", "buggy"]["observed"].startswith("SETUP-ERROR cell 0: ZeroDivisionError")
    assert results["ok_crash", "buggy"]["message"] == "index 5 is out of bounds for axis 1 with size 4"
    assert results["ok_display", "buggy"]["message"] == "no repr"


def test_facts_are_checked_only_when_asked_and_leave_no_trace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The target sees the namespace and history a notebook would: one executed cell, then itself.
    clean = "assert len(In) == 3 and 'check_facts' not in globals(), (len(In), sorted(globals()))"
    cases = write_cases(
        tmp_path / "cases.jsonl",
        case("facts_hold", ["y = {'a': 1}"], clean, crash=False, facts=["y = {'a': 1}", "z is undefined"]),
        case(
            "facts_wrong",
            ["y = {'a': 1}"],
            "y['b']",
            crash=True,
            exception="KeyError",
            facts=["y = {'b': 1}"],
        ),
    )
    code, out = verify(capsys, "--cases", str(cases), "--facts")
    assert code == 1, out
    assert "fact does not hold: \"y = {'b': 1}\", observed \"{'a': 1}\"" in out
    assert out.strip().splitlines()[-1] == "1 passed, 1 failed"

    code, out = verify(capsys, "--cases", str(cases), "--ids", "facts_wrong")
    assert code == 0, out
    assert out.strip().splitlines()[-1] == "1 passed, 0 failed"


def test_bad_input_is_refused_before_any_kernel(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    no_outcome = tmp_path / "no_outcome.jsonl"
    no_outcome.write_text(
        json.dumps({"id": "a", "version": "buggy", "executed_cells": [], "target_cell": "1"}) + "\n"
    )
    assert cli.main(["verify", "--cases", str(no_outcome)]) == 2
    assert "a/buggy: missing crash, exception" in capsys.readouterr().err

    cases = write_cases(tmp_path / "cases.jsonl", case("a", [], "1", crash=False))
    assert cli.main(["verify", "--cases", str(cases), "--ids", "zzz*"]) == 2
    assert "no case matches" in capsys.readouterr().err


# --------------------------------------------------------------------------------------------------
# The crane suite itself
# --------------------------------------------------------------------------------------------------


def suite(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (SUITE / f"{name}.jsonl").read_text().splitlines() if line.strip()]


def test_suite_files_follow_the_format_and_the_split_rule() -> None:
    spec = importlib.util.spec_from_file_location("crane_suite_split", SUITE / "split.py")
    assert spec is not None and spec.loader is not None
    split = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(split)
    assert split.check() == []
    # Format only: holdout cells are never run or read by anything here.
    for name in ("dev", "holdout"):
        pairs: dict[str, dict[str, dict[str, Any]]] = {}
        for c in suite(name):
            assert set(c) == REQUIRED, c["id"]
            assert c["root_cause"] in ROOT_CAUSES
            assert c["crash"] == (c["version"] == "buggy") and (c["exception"] is None) != c["crash"]
            assert c["decisive_facts"], c["id"]
            pairs.setdefault(c["id"], {})[c["version"]] = c
        for pair_id, versions in pairs.items():
            buggy, fixed = versions["buggy"], versions["fixed"]
            assert len(buggy["executed_cells"]) == len(fixed["executed_cells"]), pair_id
            assert buggy["data_dependent"] == fixed["data_dependent"]
            assert (buggy["target_cell"] == fixed["target_cell"]) == buggy["data_dependent"], pair_id


def dev_sample(libraries: tuple[str, ...]) -> str:
    """The first dev pair (by id) of each library, as an --ids list."""
    first: dict[str, str] = {}
    for c in sorted(suite("dev"), key=lambda c: c["id"]):
        first.setdefault(c["library"], c["id"])
    return ",".join(first[library] for library in libraries)


def test_dev_sample_verifies(capsys: pytest.CaptureFixture[str]) -> None:
    """A broken case or a library upgrade that changes an outcome shows up here."""
    ids = dev_sample(("pandas", "numpy", "sklearn"))
    code, out = verify(capsys, "--cases", str(SUITE / "dev.jsonl"), "--ids", ids, "--facts")
    assert code == 0, out
    assert out.strip().splitlines()[-1] == "6 passed, 0 failed"


@pytest.mark.slow
def test_dev_sample_of_the_other_libraries_verifies(capsys: pytest.CaptureFixture[str]) -> None:
    """torch and TensorFlow take a while to import in each fresh kernel."""
    libraries = ("torch", "tensorflow/keras", "matplotlib", "seaborn", "statsmodels", "scipy")
    code, out = verify(capsys, "--cases", str(SUITE / "dev.jsonl"), "--ids", dev_sample(libraries), "--facts")
    assert code == 0, out
    assert out.strip().splitlines()[-1] == f"{2 * len(libraries)} passed, 0 failed"
