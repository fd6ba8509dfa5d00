"""Imports the kernel's environment cannot satisfy, judged through the real probe against the live import
system (sys.path, sys.meta_path, loaded packages), and checked against what executing the cell does."""

from __future__ import annotations

import ast
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import findings_for
from support import Checker

from crane_jupyterlab.kernel import probe
from crane_jupyterlab.kernel.probe.imports import import_facts

MISSING = "crane_no_such_module_7f3a"


@pytest.fixture(autouse=True)
def kernel_like_meta_path() -> Iterator[None]:
    """pytest puts its assertion rewriter on sys.meta_path (a finder the probe rightly cannot read);
    a kernel does not have it."""
    saved = list(sys.meta_path)
    sys.meta_path[:] = [f for f in saved if not type(f).__module__.startswith("_pytest")]
    try:
        yield
    finally:
        sys.meta_path[:] = saved


def _raises(source: str, ns: dict[str, Any]) -> BaseException | None:
    try:
        exec(source, dict(ns))
    except BaseException as exc:
        return exc
    return None


def test_a_module_no_finder_has(messages: Checker) -> None:
    source = f"import numpy as np\nimport {MISSING} as lib"
    (message,) = messages(source, {})
    assert message.startswith(f"ModuleNotFoundError: No module named '{MISSING}' (line 2)")
    assert isinstance(_raises(source, {}), ModuleNotFoundError)


def test_a_removed_submodule_of_a_loaded_package_names_where_the_name_went(messages: Checker) -> None:
    sklearn = pytest.importorskip("sklearn")
    pytest.importorskip("sklearn.model_selection")
    source = "from sklearn.cross_validation import train_test_split"
    exc = _raises(source, {})
    if exc is None:
        pytest.skip("this scikit-learn still has sklearn.cross_validation")
    (message,) = messages(source, {"sklearn": sklearn})
    assert "No module named 'sklearn.cross_validation'" in message
    assert "`train_test_split` is in `sklearn.model_selection`" in message
    assert isinstance(exc, ModuleNotFoundError)


def test_a_name_the_loaded_module_does_not_define(messages: Checker) -> None:
    pytest.importorskip("sklearn.metrics")
    source = "from sklearn.metrics import plot_confusion_matrix"
    exc = _raises(source, {})
    if exc is None:
        pytest.skip("this scikit-learn still has plot_confusion_matrix")
    (message,) = messages(source, {})
    assert message.startswith(
        "ImportError: cannot import name 'plot_confusion_matrix' from 'sklearn.metrics'"
    )
    assert type(exc) is ImportError


def test_a_pep562_getattr_is_quoted_not_guessed(messages: Checker) -> None:
    np = pytest.importorskip("numpy")
    source = "from numpy import float"
    exc = _raises(source, {})
    if exc is None:
        pytest.skip("this numpy still has np.float")
    (message,) = messages(source, {"np": np})
    assert "cannot import name 'float' from 'numpy'" in message
    assert "np.float64" in message  # numpy's own advice, from its __getattr__
    assert messages("from numpy import float64, linalg", {"np": np}) == []


@pytest.mark.parametrize(
    "source",
    [
        f"try:\n    import {MISSING}\nexcept ImportError:\n    {MISSING} = None",
        f"try:\n    import {MISSING}\nexcept Exception:\n    pass",
        f"if False:\n    import {MISSING}",
        f"def load():\n    import {MISSING}",
        f"import sys\nsys.path.insert(0, '../lib')\nimport {MISSING}",
        f"import os\nos.chdir('..')\nimport {MISSING}",
        f"!pip install {MISSING}\nimport {MISSING}",
        f"%pip install {MISSING}\nimport {MISSING}",
        f"%cd ..\nimport {MISSING}",
        f"setup_paths()\nimport {MISSING}",
        "import json, os.path\nfrom collections import OrderedDict",
        f"from . import {MISSING}",
    ],
)
def test_silent_when_the_import_may_succeed_or_is_handled(source: str, messages: Checker) -> None:
    assert messages(source, {"setup_paths": lambda: None}) == []


def test_quiet_magics_and_library_calls_before_do_not_matter(messages: Checker) -> None:
    source = f"%matplotlib inline\nimport warnings\nwarnings.filterwarnings('ignore')\nimport {MISSING}"
    assert len(messages(source, {})) == 1


@pytest.fixture
def scratch(tmp_path: Path) -> Iterator[Path]:
    """A folder on sys.path the import system has not cached yet (as after `sys.path.append` in a cell)."""
    sys.path.insert(0, str(tmp_path))
    try:
        yield tmp_path
    finally:
        sys.path.remove(str(tmp_path))
        sys.path_importer_cache.pop(str(tmp_path), None)
        for name in [m for m in sys.modules if m.startswith("crane_scratch")]:
            del sys.modules[name]


def test_a_module_an_earlier_cell_put_on_sys_path_is_found_and_not_run(scratch: Path) -> None:
    (scratch / "crane_scratch_mod.py").write_text("import sys\nsys.crane_scratch_ran = True\n")
    (scratch / "crane_scratch_ns" / "inner").mkdir(parents=True)  # a namespace package
    source = "import crane_scratch_mod\nimport crane_scratch_ns.inner\nfrom crane_scratch_mod import x"
    states = [(e["module"], e["state"]) for e in import_facts(ast.parse(source))]
    assert states == [("crane_scratch_mod", "found"), ("crane_scratch_ns.inner", "found"),
                      ("crane_scratch_mod", "found")]  # fmt: skip
    assert str(scratch) not in sys.path_importer_cache  # the lookup cached no finder
    assert probe.run(source, {}, namespace={})["imports"][0]["state"] == "found"
    assert "crane_scratch_mod" not in sys.modules and not hasattr(sys, "crane_scratch_ran")
    assert findings_for(source, {}) == []


def test_a_package_that_is_not_loaded_may_define_its_submodules(scratch: Path) -> None:
    pkg = scratch / "crane_scratch_pkg"
    pkg.mkdir()
    # its __init__ makes the submodule exist: nothing is known before it runs
    (pkg / "__init__.py").write_text(
        "import sys, types\nsys.modules[__name__ + '.made'] = types.ModuleType('m')\n"
    )
    source = "import crane_scratch_pkg.made"
    assert findings_for(source, {}) == []
    assert _raises(source, {}) is None


def test_a_loaded_package_without_the_submodule(scratch: Path, messages: Checker) -> None:
    pkg = scratch / "crane_scratch_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("VALUE = 1\n")
    (pkg / "present.py").write_text("")
    __import__("crane_scratch_pkg")
    (message,) = messages("from crane_scratch_pkg.gone import VALUE", {})
    assert "No module named 'crane_scratch_pkg.gone'" in message
    assert (
        messages("import crane_scratch_pkg.present\nfrom crane_scratch_pkg import VALUE, present", {}) == []
    )
    assert "crane_scratch_pkg.present" not in sys.modules  # found on __path__, not imported


class _UnknownFinder:
    """A notebook's own meta path finder: asking it would run its code."""

    calls = 0

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        _UnknownFinder.calls += 1
        return None


def test_a_finder_that_is_not_the_interpreters_makes_it_unknown(messages: Checker) -> None:
    finder = _UnknownFinder()
    sys.meta_path.insert(0, finder)
    try:
        assert messages(f"import {MISSING}", {}) == []
    finally:
        sys.meta_path.remove(finder)
    assert _UnknownFinder.calls == 0


def test_setuptools_editable_finder_is_read_not_called(messages: Checker, tmp_path: Path) -> None:
    (tmp_path / "crane_editable").mkdir()
    (tmp_path / "crane_editable" / "__init__.py").write_text("")
    module = types.ModuleType("__editable___crane_demo_finder")
    module.MAPPING = {"crane_editable": str(tmp_path / "crane_editable")}  # type: ignore[attr-defined]

    def refuse(*args: Any) -> None:
        raise AssertionError("the editable finder was called")

    finder = type("_EditableFinder", (), {"__module__": module.__name__, "find_spec": classmethod(refuse)})
    sys.modules[module.__name__] = module
    sys.meta_path.append(finder)
    try:
        assert messages("import crane_editable", {}) == []
        assert len(messages(f"import {MISSING}", {})) == 1
    finally:
        sys.meta_path.remove(finder)
        del sys.modules[module.__name__]


def test_a_notebook_module_getattr_is_never_called(messages: Checker) -> None:
    """A module object a notebook built (not a trusted library) answers `from m import x` through its own
    `__getattr__`: the probe does not call it, so nothing is claimed."""
    calls: list[str] = []
    module = types.ModuleType("crane_hostile_mod")

    def hook(name: str) -> Any:
        calls.append(name)
        raise AttributeError(name)

    module.__getattr__ = hook  # type: ignore[attr-defined]
    sys.modules[module.__name__] = module
    try:
        assert messages("from crane_hostile_mod import anything", {}) == []
        assert calls == []
    finally:
        del sys.modules[module.__name__]


def test_tensorflows_absl_reload_detector_is_known_to_find_nothing(messages: Checker) -> None:
    def refuse(self: Any, *args: Any) -> None:
        raise AssertionError("the reload detector was called")

    detector = type("ReloadDetector", (), {"__module__": "absl.flags._flagvalues", "find_spec": refuse})()
    sys.meta_path.insert(-1, detector)
    try:
        assert len(messages(f"import {MISSING}", {})) == 1
    finally:
        sys.meta_path.remove(detector)


def test_the_importlib_metadata_backport_finder_is_known_to_find_nothing(messages: Checker) -> None:
    # Importing importlib_metadata (litellm, keyring, ... do) appends its MetadataPathFinder to
    # sys.meta_path; its find_spec is NullFinder's, which finds no module.
    backport = pytest.importorskip("importlib_metadata")
    finders = [f for f in sys.meta_path if type(f) is backport.MetadataPathFinder]
    added = [] if finders else [backport.MetadataPathFinder()]
    sys.meta_path.extend(added)
    try:
        assert len(messages(f"import {MISSING}", {})) == 1
    finally:
        for finder in added:
            sys.meta_path.remove(finder)


def test_a_finder_named_like_the_backport_with_its_own_lookup_is_unknown(messages: Checker) -> None:
    def finds(self: Any, *args: Any) -> None:
        raise AssertionError("an unknown finder was called")

    lookalike = type("MetadataPathFinder", (), {"__module__": "importlib_metadata", "find_spec": finds})()
    sys.meta_path.insert(-1, lookalike)
    try:
        assert messages(f"import {MISSING}", {}) == []
    finally:
        sys.meta_path.remove(lookalike)


def test_a_trusted_getattr_that_raises_import_error_is_quoted(messages: Checker) -> None:
    datasets = pytest.importorskip("sklearn.datasets")
    source = "from sklearn.datasets import load_boston"
    exc = _raises(source, {})
    if exc is None or "__getattr__" not in vars(datasets):
        pytest.skip("this scikit-learn still has load_boston, or no __getattr__ for it")
    (message,) = messages(source, {})
    assert message.startswith("ImportError: cannot import name 'load_boston' from 'sklearn.datasets'")
