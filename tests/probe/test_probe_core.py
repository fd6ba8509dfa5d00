"""The probe's core, in-process: the cell's AST, safety against hostile objects, leaving no trace.

Library summarizers are in test_probe_libs.py; the renderer in test_runtime_text.py.
"""

from __future__ import annotations

import ast
import sys
import textwrap
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from probe_results import entry, exprs, facts, run

from crane_jupyterlab import kernel
from crane_jupyterlab.kernel import MANIFEST
from crane_jupyterlab.kernel.probe import describe as probe
from crane_jupyterlab.kernel.probe import facts as fact_module

KERNEL = Path(kernel.__file__).parent  # the payload's root


# --------------------------------------------------------------------------------------------------
# module hygiene
# --------------------------------------------------------------------------------------------------


def test_payload_imports_only_the_standard_library_and_itself_at_top_level() -> None:
    roots = set()
    for name in MANIFEST:
        for node in ast.parse((KERNEL / f"{name}.py").read_text()).body:
            if isinstance(node, ast.Import):
                roots.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                roots.add((node.module or "").split(".")[0])
    assert roots, "expected some imports"
    assert roots <= set(sys.stdlib_module_names) | {"__future__"}, roots - set(sys.stdlib_module_names)


def test_probe_never_imports_a_library_the_kernel_did_not_have(payload_run: Callable[..., Any]) -> None:
    code = textwrap.dedent(
        """
        import json
        before = set(sys.modules)
        ns = {"x": [1, 2, 3], "d": {"a": 1}}
        src = "import numpy as np\\nfrom sklearn.linear_model import Ridge\\nimport torch\\n"
        src += "np.zeros(x)\\nd['a']"
        r = run(src, {"docs": True, "history": True}, ns)
        heavy = {"numpy", "pandas", "torch", "tensorflow", "keras", "sklearn", "scipy", "PIL", "matplotlib"}
        print(json.dumps({"new": sorted(m for m in set(sys.modules) - before if m.split(".")[0] in heavy),
                          "modules": r["modules"], "error": r["error"]}))
        """
    )
    data: Any = payload_run(code)
    assert data["error"] is None
    assert data["new"] == []
    # installed but not imported: the version is still reported, marked as not imported
    by_name = {m["module"]: m for m in data["modules"]}
    assert by_name["sklearn"]["imported"] is False and by_name["sklearn"]["version"]
    assert by_name["numpy"]["imported"] is False


# --------------------------------------------------------------------------------------------------
# relevance from the cell's AST
# --------------------------------------------------------------------------------------------------


def test_names_assigned_before_they_are_read_need_nothing_from_the_kernel() -> None:
    r = run("x = 1\nprint(x)", {"x": [9, 9]})
    assert r["objects"] == [] and r["undefined"] == []


def test_names_read_before_assignment_are_described_in_order() -> None:
    r = run("b = a + c\na = 2\nprint(b, a)", {"a": 1, "c": 2.5})
    assert exprs(r) == ["a", "c"]
    assert facts(entry(r, "c"))["value"] == 2.5


def test_undefined_names_skip_builtins_locals_comprehensions_and_imports() -> None:
    src = textwrap.dedent(
        """
        import os
        from math import sqrt as root
        def f(a, *args, k=1, **kw):
            local = a + k
            return local + helper(a) + root(2)
        squares = [i * i for i in range(3) if i != missing_in_comp]
        total = len(squares) + sum(v for v in squares)
        lam = lambda q: q + outer
        try:
            pass
        except ValueError as err:
            print(err)
        with open(os.devnull) as fh:
            fh.read()
        for j in range(2):
            print(j, undefined_in_loop)
        class K:
            attr = 1
            def m(self):
                return self.attr + K.attr
        """
    )
    r = run(src, {"outer": 1})
    assert sorted(r["undefined"]) == ["helper", "missing_in_comp", "undefined_in_loop"]


def test_undefined_names_carry_close_names_and_importable_modules(tmp_path: Path, monkeypatch: Any) -> None:
    """What a fix needs: the kernel's close names of a typo, and whether a name is a module on sys.path
    (a helper module beside the notebook), found without importing it."""
    (tmp_path / "helpers_beside_nb.py").write_text("raise RuntimeError('imported')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    r = run("model.fit(X_trian)\nhelpers_beside_nb.plot()\nlenn(x)", {"X_train": 1, "model": 2, "x": 3})
    assert sorted(r["undefined"]) == ["X_trian", "helpers_beside_nb", "lenn"]
    assert r["undefined_close"] == {"X_trian": ["X_train"], "lenn": ["len"]}
    assert r["undefined_importable"] == ["helpers_beside_nb"]
    assert "helpers_beside_nb" not in sys.modules  # found, never imported


def test_del_makes_a_later_read_undefined() -> None:
    r = run("del x\nprint(x)", {"x": 1})
    assert r["undefined"] == ["x"]


def test_augmented_assignment_reads_the_name_first() -> None:
    r = run("X /= 255.0", {})
    assert r["undefined"] == ["X"]


def test_function_bodies_see_names_the_cell_binds_later() -> None:
    r = run("def f():\n    return later + g\nlater = 1\nf()", {})
    assert r["undefined"] == ["g"]


def test_walrus_and_match_bind_names() -> None:
    src = textwrap.dedent(
        """
        if (n := 3) > 2:
            print(n)
        match n:
            case [a, *rest]:
                print(a, rest)
            case {'k': v, **others}:
                print(v, others)
            case other:
                print(other)
        """
    )
    assert run(src, {})["undefined"] == []


def test_star_import_disables_undefined_detection() -> None:
    assert run("from os.path import *\nprint(join('a', 'b'), nope)", {})["undefined"] == []


def test_syntax_error_is_reported_with_position_and_nothing_else() -> None:
    r = run("x = (1,\nprint(x", {"x": 1})
    assert r["syntax_error"]["line"] >= 1 and r["syntax_error"]["msg"]
    assert r["objects"] == [] and r["undefined"] == []


def test_missing_attribute_of_a_plain_object_lists_close_names() -> None:
    class Model:
        def predict(self) -> None: ...

    r = run("m.predict_clases(1)", {"m": Model()})
    e = entry(r, "m.predict_clases")
    assert e["missing"] is True
    assert "predict" in facts(e)["close"]


def test_missing_and_present_dict_keys() -> None:
    ns = {"cfg": {"lr": 0.1, "epochs": 3}}
    r = run("print(cfg['lr'], cfg['epoch'])", ns)
    assert facts(entry(r, "cfg['lr']"))["value"] == 0.1
    missing = entry(r, "cfg['epoch']")
    assert missing["missing"] and facts(missing)["close"] == ["epochs"]


def test_list_constant_subscripts_including_negative() -> None:
    r = run("a = items[-1] + items[5]", {"items": [1, 2, 3]})
    assert facts(entry(r, "items[-1]"))["value"] == 3
    assert entry(r, "items[5]")["missing"] is True


def test_items_of_a_list_are_shown_in_full_when_small() -> None:
    feats = ["temp", "humidity", "wind", "pressure"]
    r = run("features.remove('target')", {"features": feats})
    assert facts(entry(r, "features"))["items"] == feats


def test_module_aliases_report_versions() -> None:
    import json as json_mod

    r = run("json.dumps(1)", {"json": json_mod})
    assert r["objects"] == []  # a stdlib module has no version and is not an object to describe
    pytest.importorskip("numpy")
    import numpy as np

    r = run("np.zeros(3)", {"np": np})
    assert r["modules"] == [{"name": "np", "module": "numpy", "version": np.__version__}]


def test_history_option_returns_executed_cells_in_order() -> None:
    ns = {"In": ["", "a = 1", "b = a + 1"], "a": 1, "b": 2}
    r = run("print(b)", ns, history=True)
    assert r["history"] == ["a = 1", "b = 2"] or r["history"] == ["a = 1", "b = a + 1"]
    assert r["history"] == ["a = 1", "b = a + 1"]
    assert run("print(b)", ns)["history"] == []


def test_lineage_follows_one_hop_back_through_the_history() -> None:
    ns = {"In": ["", "raw = [3, 1, 2]\nvalues = sorted(raw)"], "raw": [3, 1, 2], "values": [1, 2, 3]}
    r = run("print(values)", ns)
    related = entry(r, "raw")
    assert related["via"] == "values" and related["relation"] == "built"
    from crane_jupyterlab.runtime_text import render

    assert "raw (values was built from it): list = [3, 1, 2]" in render(r)


def test_lineage_of_a_fitted_object() -> None:
    class Model:
        def predict(self, x: Any) -> Any:
            return x

    history = ["", "model = Model()\nmodel.fit(X_train, labels)", "X_train = [[1.0]]"]
    ns = {"In": history, "model": Model(), "X_train": [[1.0]], "labels": [0], "Model": Model}
    r = run("model.predict(X_test)", ns)
    assert [(e["expr"], e.get("relation")) for e in r["objects"][1:]] == [
        ("X_train", "fitted"),
        ("labels", "fitted"),
    ]


# --------------------------------------------------------------------------------------------------
# hostile objects: never run user code, never hang, never raise
# --------------------------------------------------------------------------------------------------


class Calls:
    count = 0


class Hostile:
    """Every dunder a careless inspector would call misbehaves, and records that it was called."""

    @property
    def prop(self) -> int:
        Calls.count += 1
        raise RuntimeError("property ran")

    def __getattr__(self, name: str) -> Any:
        Calls.count += 1
        return lambda *a, **k: None

    def __repr__(self) -> str:
        Calls.count += 1
        time.sleep(3600)
        return "never"

    __str__ = __repr__

    def __len__(self) -> int:
        Calls.count += 1
        raise RuntimeError("len ran")

    def __eq__(self, other: object) -> bool:
        Calls.count += 1
        raise RuntimeError("eq ran")

    __hash__ = object.__hash__

    def __iter__(self) -> Any:
        Calls.count += 1
        raise RuntimeError("iter ran")


def test_hostile_object_is_described_without_running_its_code() -> None:
    Calls.count = 0
    h = Hostile()
    h.size = 3  # type: ignore[attr-defined]
    ns = {"h": h, "items": [h, h], "table": {h: 1}}
    t0 = time.perf_counter()
    r = run("h.prop\nh.anything.deeper\nh['k']\nlen(items)\ntable[1]\nh == 1\nitems.remove(h)", ns)
    assert time.perf_counter() - t0 < 5
    assert Calls.count == 0
    assert facts(entry(r, "h"))["attrs"] == {"size": 3}
    assert "property" in facts(entry(r, "h.prop"))["note"]
    assert "__getattr__" in facts(entry(r, "h.anything"))["note"]
    assert entry(r, "items")["facts"]


def test_self_referencing_list_and_dict_are_bounded() -> None:
    a: list[Any] = [1]
    a.append(a)
    d: dict[str, Any] = {"k": 1}
    d["self"] = d
    r = run("print(a, d)", {"a": a, "d": d})
    assert facts(entry(r, "a"))["len"] == 2
    assert facts(entry(r, "d"))["keys"] == ["k", "self"]


def test_ten_million_element_list_is_not_iterated() -> None:
    big = list(range(10_000_000))
    t0 = time.perf_counter()
    r = run("big.sort()", {"big": big})
    assert time.perf_counter() - t0 < 1.0
    f = facts(entry(r, "big"))
    assert f["len"] == 10_000_000 and len(f["items"]) <= 20


def test_generator_is_not_advanced() -> None:
    def gen() -> Any:
        yield 1
        yield 2

    g = gen()
    run("for v in g:\n    print(v)", {"g": g})
    assert next(g) == 1


def test_iterator_is_not_consumed() -> None:
    it = iter([1, 2, 3])
    run("list(it)", {"it": it})
    assert list(it) == [1, 2, 3]


def test_namespace_is_left_unchanged() -> None:
    ns: dict[str, Any] = {"x": [1, 2], "y": {"a": 1}, "In": ["", "x = [1, 2]"]}
    before = {k: (id(v), repr(v)) for k, v in ns.items()}
    run("z = x + [y['a']]\nprint(undefined_name)", ns, docs=True, history=True)
    assert {k: (id(v), repr(v)) for k, v in ns.items()} == before


def test_no_output_and_no_warnings(capsys: pytest.CaptureFixture[str]) -> None:
    class Noisy:
        @property
        def loud(self) -> int:
            print("noise")
            warnings.warn("noise", stacklevel=1)
            return 1

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run("n.loud", {"n": Noisy()})
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""


def test_bad_arguments_never_raise() -> None:
    assert probe.run(None, None, {})["error"] == "source must be a str"  # type: ignore[arg-type]
    r = probe.run("x", {"budget_ms": "fast", "max_columns": -5, "max_chars": True}, {"x": 1})
    assert r["error"] is None and entry(r, "x")
    assert probe.run("x", [], {"x": 1})["error"] is None  # type: ignore[arg-type]


class SlowClock:
    """Stands in for the probe's `time` module: every reading of either clock is 1 ms later, so a
    budget runs out after a fixed amount of work, however fast the machine is."""

    def __init__(self) -> None:
        self.wall = self.cpu = 0.0

    def perf_counter(self) -> float:
        self.wall += 0.001
        return self.wall

    def thread_time(self) -> float:
        self.cpu += 0.001
        return self.cpu


def test_time_budget_skips_value_statistics_but_keeps_structure(monkeypatch: pytest.MonkeyPatch) -> None:
    np = pytest.importorskip("numpy")
    ns = {f"v{i}": np.arange(50.0) for i in range(30)}
    src = "\n".join(f"print(v{i})" for i in range(30))
    clock = SlowClock()  # one clock for the entry point and the budget it starts
    monkeypatch.setattr(probe, "time", clock)
    monkeypatch.setattr(fact_module, "time", clock)
    r = run(src, ns, budget_ms=5)
    assert r["budget_exhausted"] is True  # and the result still comes back
    first, last = facts(entry(r, "v0")), facts(entry(r, "v29"))
    assert first["max"] == 49.0 and "note" not in first  # the first objects were described in full
    assert last["shape"] == [50] and last["dtype"] == "float64"  # the later ones keep their structure
    assert "max" not in last and last["note"] == "stats skipped (time budget)"  # but no value scans
    assert all(e["error"] is None for e in r["objects"])


def test_nan_and_inf_become_strings() -> None:
    r = run("print(a, b)", {"a": float("nan"), "b": [float("inf"), 1.0]})
    assert facts(entry(r, "a"))["value"] == "nan"
    assert facts(entry(r, "b"))["items"] == ["inf", 1.0]


def test_callables_get_signatures() -> None:
    def clean_text(text, lower=True):  # type: ignore[no-untyped-def]
        return text

    r = run("clean_text('x')", {"clean_text": clean_text})
    assert facts(entry(r, "clean_text"))["signature"] == "(text, lower=True)"


def test_called_function_reading_an_undefined_global_is_flagged() -> None:
    ns: dict[str, Any] = {}
    exec("def preprocess(d):\n    return [clean(x) for x in d] + vocab\n", ns)  # a cell defines it
    ns["vocab"] = ["a", "b"]
    r = run("out = preprocess(rows)", ns)
    f = facts(entry(r, "preprocess"))
    assert f["undefined_globals"] == ["clean"]
    assert r["undefined"] == ["rows"]  # the cell's own NameError; the body's is reported on the function
    assert entry(r, "vocab")["via"] == "preprocess"  # the data the function reads from the kernel


def test_library_callables_reached_through_a_module_are_not_entries() -> None:
    import math

    r = run("math.sqrt(2)\nmath.pi", {"math": math})
    assert exprs(r) == ["math.pi"]


def test_files_the_cell_opens_are_checked_for_existence(tmp_path: Path) -> None:
    (tmp_path / "train.csv").write_text("a\n1\n")
    ns = {"DATA_DIR": str(tmp_path), "base": tmp_path, "os": __import__("os")}
    src = (
        "a = pd.read_csv(os.path.join(DATA_DIR, 'train.csv'))\n"
        "b = pd.read_csv(f'{DATA_DIR}/test.csv')\n"
        "c = np.load(base / 'nowhere' / 'x.npy')\n"
        "d = open(DATA_DIR + '/train.csv')"
    )
    r = run(src, ns)
    found = {e["expr"]: e for e in r["objects"] if e["type"] == "path"}
    ok = found[f"path {str(tmp_path / 'train.csv')!r}"]
    assert facts(ok)["exists"] is True and not ok["missing"]
    bad = found[f"path {str(tmp_path) + '/test.csv'!r}"]
    assert bad["missing"] and facts(bad)["close"] == []  # 'train.csv' is not close to 'test.csv'
    assert "does not exist either" in facts(found[f"path {str(tmp_path / 'nowhere' / 'x.npy')!r}"])["note"]
    assert len(found) == 3  # the + expression gives the same path as the first one


def test_object_whose_class_attribute_raises_and_mock_objects() -> None:
    from unittest import mock

    class Liar:
        @property  # type: ignore[misc]
        def __class__(self) -> type:
            Calls.count += 1
            raise RuntimeError("__class__ ran")

    Calls.count = 0
    m = mock.MagicMock()
    r = run("liar.x\nm.fit(X)\nm['k']\nbig", {"liar": Liar(), "m": m, "big": 10**5000})
    assert Calls.count == 0
    assert m.mock_calls == []  # nothing on the mock was called or read through its __getattr__
    assert entry(r, "liar")["type"].endswith("Liar")
    assert facts(entry(r, "big"))["value"] == "<int of 16610 bits>"


def test_ipython_syntax_is_not_a_syntax_error() -> None:
    src = "%matplotlib inline\n!ls\nx = df.shape\ndf?\nprint(y)"
    r = run(src, {"df": [1]})
    assert r["syntax_error"] is None and r["undefined"] == ["y"]
    assert exprs(r) == ["df", "df.shape"] and entry(r, "df.shape")["missing"]  # a list has no .shape
    timed = run("%%time\nz = q + 1", {})
    assert timed["syntax_error"] is None and timed["undefined"] == ["q"]
    shell = run("%%bash\necho $HOME\nls (", {})
    assert shell["syntax_error"] is None and shell["objects"] == [] and shell["undefined"] == []


def test_ipython_syntax_without_ipython_loaded(payload_run: Callable[..., Any]) -> None:
    code = textwrap.dedent(
        """
        import json
        assert "IPython" not in sys.modules
        r = run("%matplotlib inline\\nif 1:\\n    !ls\\nprint(a)\\nb?", {}, {})
        print(json.dumps([r["syntax_error"], r["undefined"]]))
        """
    )
    assert payload_run(code) == [None, ["a"]]


def test_custom_getattribute_is_not_run() -> None:
    class Sneaky:
        def __init__(self) -> None:
            self.visible = 1

        def __getattribute__(self, name: str) -> Any:
            Calls.count += 1
            return object.__getattribute__(self, name)

        def method(self) -> int:
            return 1

    Calls.count = 0
    r = run("s.visible\ns.method()\ns.other", {"s": Sneaky()})
    assert Calls.count == 0
    assert facts(entry(r, "s.visible"))["value"] == 1
    assert "__getattribute__" in facts(entry(r, "s.other"))["note"]


def test_history_is_bounded_keeping_the_newest_cells() -> None:
    cells = ["x = 1  # " + "a" * 1000 for _ in range(1000)] + ["y = 2"]
    r = run("print(y)", {"In": ["", *cells], "y": 2}, history=True)
    assert r["history"][-1] == "y = 2"
    assert sum(map(len, r["history"])) <= probe.HISTORY_CHARS
    assert r["history_dropped"] == len(cells) - len(r["history"]) > 0
